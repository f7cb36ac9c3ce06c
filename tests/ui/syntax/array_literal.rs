use ein::ein;

ein! {
    fn f(a: [f32]) -> f32 { sum i { a[i] * [1.0, 2.0][i] } }
}

fn main() {}
