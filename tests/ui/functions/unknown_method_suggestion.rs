use ein::ein;

ein! {
    fn f(a: [f64]) -> [f64] { for i { a[i].clmap(0.0, 1.0) } }
}

fn main() {}
