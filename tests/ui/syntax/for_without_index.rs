use ein::ein;

ein! {
    fn f(a: [f32]) -> [f32] { for { a[0] } }
}

fn main() {}
