use ein::ein;

ein! {
    pub fn total(x: [f64], n: usize) -> f64 { x[0] + total(x, n - 1) }
}

fn main() {}
