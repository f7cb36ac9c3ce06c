use ein::ein;

ein! {
    fn f(a: [f32], s: f32) -> [f32] { for i { a[i] * s[i] } }
}

fn main() {}
