use ein::ein;

ein! {
    fn f(a: [f32; 3]) -> f32 { a[0] }
}

fn main() {}
