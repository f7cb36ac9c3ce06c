use ein::ein;

ein! {
    pub fn f(x: [f64]) -> [f64] { for i where x[i] * 2.0 { x[i] } }
}

fn main() {}
