use ein::ein;

ein! {
    fn f(a: [i64], e: [i64]) -> [i64] { for i { a[i].pow(e[i]) } }
}

fn main() {}
