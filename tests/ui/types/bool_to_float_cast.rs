use ein::ein;

ein! {
    fn f(a: [f32]) -> [f32] { for i { (a[i] > 0.0) as f32 } }
}

fn main() {}
