use ein::ein;

ein! {
    fn f(a: [f32]) -> f32 { fold t in 0..a.len(), acc = 0.0f32 { (acc, a[t]) } }
}

fn main() {}
