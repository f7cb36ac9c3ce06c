use ein::ein;

ein! {
    fn f(a: [f32]) -> [f32] { for i { a[i].clamp(0.0) } }
}

fn main() {}
