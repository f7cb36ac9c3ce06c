use ein::ein;

ein! {
    fn f(a: [i64]) -> [f64] { a as f64 }
}

fn main() {}
