use ein::ein;

ein! {
    fn f(a: [f32]) -> [f32] { let t = for i { (a[i], 1.0) }; t.0 }
}

fn main() {}
