use ein::ein;

ein! {
    fn f(a: [f32]) -> [f32] { for i { if a[i] { 1.0 } else { 0.0 } } }
}

fn main() {}
