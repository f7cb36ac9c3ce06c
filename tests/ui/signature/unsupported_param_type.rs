use ein::ein;

ein! {
    fn f(a: [(f32, f32)]) -> f32 { 0.0 }
}

fn main() {}
