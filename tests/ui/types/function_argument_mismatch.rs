use ein::ein;

ein! {
    fn f(a: [f32]) -> [f32] { for i { pow(a[i], 2.0f64) } }
}

fn main() {}
