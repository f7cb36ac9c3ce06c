use ein::ein;

ein! {
    fn f(a: [f64]) -> [f64] { for i { a[i].rem_euclid(2.0) } }
}

fn main() {}
