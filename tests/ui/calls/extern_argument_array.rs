use ein::ein;

fn gamma(x: f64) -> f64 {
    x
}

ein! {
    extern fn gamma(x: f64) -> f64;
    pub fn f(a: [f64]) -> [f64] { gamma(a) }
}

fn main() {}
