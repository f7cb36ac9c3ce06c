use ein::ein;

ein! {
    fn f(a: [[f32]]) -> i64 { a.shape(2) }
}

fn main() {}
