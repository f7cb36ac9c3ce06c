use ein::ein;

ein! {
    fn f(a: [f32]) -> [f32] { for i { a[i + 1] - a[0] } }
}

fn main() {}
