use ein::ein;

ein! {
    fn f(a: [f32]) -> f32 { fold t in 0..a.len() { a[t] } }
}

fn main() {}
