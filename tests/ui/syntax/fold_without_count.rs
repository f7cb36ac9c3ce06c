use ein::ein;

ein! {
    fn f(a: [f32]) -> f32 { fold t, acc = 0.0 { acc + a[t] } }
}

fn main() {}
