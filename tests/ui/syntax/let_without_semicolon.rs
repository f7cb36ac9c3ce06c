use ein::ein;

ein! {
    fn f(a: [f32]) -> [f32] { for i { let x = a[i] x * 2.0 } }
}

fn main() {}
