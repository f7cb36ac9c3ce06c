use ein::ein;

ein! {
    pub fn f(a: [[f64]]) -> [f64] { for i, j where a[i, j] > 0.0 { a[i, j] } }
}

fn main() {}
