use ein::ein;

ein! {
    fn f(a: [f32]) -> [[f32]] { for i { for j in 0..i { a[j] } } }
}

fn main() {}
