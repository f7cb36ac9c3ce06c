use ein::ein;

ein! {
    fn f(a: [f32]) -> [f32] { for i in 0..=a.len() { a[i] } }
}

fn main() {}
