use ein::ein;

ein! {
    fn f(a: [f32]) -> f32 { (sum i { a[i] }) + a[i] }
}

fn main() {}
