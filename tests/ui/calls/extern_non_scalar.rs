use ein::ein;

fn norm(x: &[f64]) -> f64 {
    x.iter().map(|v| v * v).sum::<f64>().sqrt()
}

ein! {
    extern fn norm(x: [f64]) -> f64;
    pub fn f(a: [[f64]]) -> [f64] { for i { norm(a[i]) } }
}

fn main() {}
