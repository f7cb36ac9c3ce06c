use ein::ein;

ein! {
    fn f(a: [i64]) -> [i64] { for i { sqrt(a[i]) } }
}

fn main() {}
