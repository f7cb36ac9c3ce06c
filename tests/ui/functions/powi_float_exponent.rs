use ein::ein;

ein! {
    fn f(a: [f64]) -> [f64] { for i { a[i].powi(2.5) } }
}

fn main() {}
