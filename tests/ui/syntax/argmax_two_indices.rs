use ein::ein;

ein! {
    fn f(a: [[f32]]) -> usize { argmax i, j { a[i, j] } }
}

fn main() {}
