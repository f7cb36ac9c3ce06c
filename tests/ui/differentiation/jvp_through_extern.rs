// Forward mode cannot see inside a Rust function: its derivative is unknown.
fn gamma(x: f64) -> f64 {
    x
}

ein::ein! {
    #[jvp(loss_jvp)]
    pub fn loss(x: [f64]) -> f64 {
        sum i { gamma(x[i]) * x[i] }
    }
    extern fn gamma(x: f64) -> f64;
}

fn main() {}
