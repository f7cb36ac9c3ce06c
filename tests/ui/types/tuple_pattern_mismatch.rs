use ein::ein;

ein! {
    fn f(a: [f32]) -> [f32] { for i { let (x, y) = a[i]; x + y } }
}

fn main() {}
