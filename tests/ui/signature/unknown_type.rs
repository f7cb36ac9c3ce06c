use ein::ein;

ein! {
    fn f(a: [f16]) -> f32 { 0.0 }
}

fn main() {}
