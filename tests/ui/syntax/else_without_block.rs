use ein::ein;

ein! {
    fn f(a: [f32]) -> [f32] { for i { if a[i] > 0.0 { a[i] } else 0.0 } }
}

fn main() {}
