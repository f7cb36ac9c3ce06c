use ein::ein;

ein! {
    pub fn f(x: [f64]) -> usize { argmax k { (x[k], x[k] * x[k]) } }
}

fn main() {}
