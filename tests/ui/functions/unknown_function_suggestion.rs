use ein::ein;

ein! {
    fn f(y: [f64], x: [f64]) -> [f64] { for i { atan2f(y[i], x[i]) } }
}

fn main() {}
