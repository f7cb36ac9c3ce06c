// A companion needs a name of its own, and a private helper has none.
ein::ein! {
    #[jvp(square)]
    pub fn square(x: f64) -> f64 {
        x * x
    }
}

ein::ein! {
    #[jvp(norm)]
    pub fn twice(x: [f64]) -> [f64] {
        for i { 2.0 * x[i] }
    }
    pub fn norm(x: [f64]) -> f64 {
        sum i { x[i] * x[i] }
    }
}

ein::ein! {
    #[jvp(helper_jvp)]
    fn helper(x: f64) -> f64 {
        x * x
    }
    pub fn caller(x: [f64]) -> [f64] {
        for i { helper(x[i]) }
    }
}

ein::ein! {
    #[jvp]
    pub fn unnamed(x: f64) -> f64 {
        x
    }
}

fn main() {}
