use ein::ein;

ein! {
    fn f(a: [f32], b: bool) -> [f32] { for i in 0..b { a[i] } }
}

fn main() {}
