use ein::ein;

ein! {
    fn f(a: [[f32]]) -> [f32] { for i { sum i { a[i, i] } } }
}

fn main() {}
