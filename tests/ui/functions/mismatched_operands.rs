use ein::ein;

ein! {
    fn f(a: [f32], b: [f64]) -> [f32] { for i { a[i].atan2(b[i]) } }
}

fn main() {}
