use ein::ein;

ein! {
    fn f(a: [f64]) -> [f64] { for i { a[i].is_finite() * a[i] } }
}

fn main() {}
