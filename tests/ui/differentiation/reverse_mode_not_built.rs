// Reverse mode is planned, not built: say so at the attribute.
ein::ein! {
    #[grad(loss_grad)]
    pub fn loss(x: [f64]) -> f64 {
        sum i { x[i] * x[i] }
    }
}

fn main() {}
