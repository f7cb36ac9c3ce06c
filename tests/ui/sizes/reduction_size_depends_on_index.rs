use ein::ein;

ein! {
    fn f(a: [f32]) -> [f32] { for i { sum k in 0..i { a[k] } } }
}

fn main() {}
