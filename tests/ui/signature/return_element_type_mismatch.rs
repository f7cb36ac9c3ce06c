use ein::ein;

ein! {
    fn f(a: [f32]) -> f64 { sum i { a[i] } }
}

fn main() {}
