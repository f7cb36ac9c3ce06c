use ein::ein;

ein! {
    fn f(a: [i64]) -> [i64] { for i { a[i] + 9223372036854775808 } }
}

fn main() {}
