use ein::ein;

ein! {
    fn f(a: [f32]) -> f32 { sum k { 1.0 } }
}

fn main() {}
