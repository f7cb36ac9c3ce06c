use ein::ein;

ein! {
    fn f(a: [f32]) -> [[f32]] { for i { let n = i + 1; for j in 0..n { a[j] } } }
}

fn main() {}
