use ein::ein;

ein! {
    fn f(a: [f32]) -> bool { all k { a[k] } }
}

fn main() {}
