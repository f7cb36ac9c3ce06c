use ein::ein;

ein! {
    fn f(a: [f32]) -> (f32 f32) { (a[0], a[1]) }
}

fn main() {}
