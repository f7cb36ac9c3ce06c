// `#[grad]` needs a float scalar result; `wrt` names float parameters of the function, each
// once, and at least one.
ein::ein! {
    #[grad(scale_grad)]
    pub fn scale(x: [f64]) -> [f64] {
        for i { 2.0 * x[i] }
    }
}

ein::ein! {
    #[grad(norm_grad, wrt(y))]
    pub fn norm(x: [f64]) -> f64 {
        sum i { x[i] * x[i] }
    }
}

ein::ein! {
    #[grad(pick_grad, wrt(k))]
    pub fn pick(x: [f64], k: usize) -> f64 {
        x[k]
    }
}

ein::ein! {
    #[grad(twice_grad, wrt(x, x))]
    pub fn twice(x: [f64]) -> f64 {
        sum i { x[i] * x[i] }
    }
}

ein::ein! {
    #[grad(none_grad, wrt())]
    pub fn none(x: [f64]) -> f64 {
        sum i { x[i] * x[i] }
    }
}

fn main() {}
