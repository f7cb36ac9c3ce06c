use ein::ein;

ein! {
    fn f(a: [f32]) -> f32 { sum k { a[k] > 0.0 } }
}

fn main() {}
