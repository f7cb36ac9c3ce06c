use ein::ein;

ein! {
    fn f(a: [f64], b: [f64]) -> [f64] { a.hypot(b) }
}

fn main() {}
