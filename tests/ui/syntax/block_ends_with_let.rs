use ein::ein;

ein! {
    fn f(a: [f32]) -> [f32] { for i { let x = a[i] * 2.0; } }
}

fn main() {}
