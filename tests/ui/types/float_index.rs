use ein::ein;

ein! {
    fn f(a: [f32], x: f32) -> f32 { a[x] }
}

fn main() {}
