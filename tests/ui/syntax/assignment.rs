use ein::ein;

ein! {
    fn f(a: [f32]) -> [f32] { for i { a[i] += 1.0 } }
}

fn main() {}
