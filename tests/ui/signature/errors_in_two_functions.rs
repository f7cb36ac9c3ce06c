use ein::ein;

ein! {
    fn f(a: [f32]) -> [f32] { for i { a[i] * 2 } }

    fn g(a: [f32]) -> f32 { sum i { a[i] * b[i] } }
}

fn main() {}
