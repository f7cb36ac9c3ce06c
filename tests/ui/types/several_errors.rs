use ein::ein;

ein! {
    fn f(a: [f64]) -> [f64] { for i { a[i] * scale + offset * (a[i] * 2) } }
}

fn main() {}
