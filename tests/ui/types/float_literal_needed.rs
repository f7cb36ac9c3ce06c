use ein::ein;

ein! {
    fn f(a: [f64]) -> [f64] { for i { a[i] * 2 } }
}

fn main() {}
