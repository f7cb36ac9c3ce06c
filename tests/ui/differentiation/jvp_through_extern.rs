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

mod misspelt {
    fn softplus(x: f64) -> f64 {
        x
    }

    ein::ein! {
        pub fn f(x: [f64]) -> [f64] {
            for i { softplus(x[i]) }
        }
        extern fn softplus(x: f64) -> f64 with derivative = softplus_d;
    }
}
