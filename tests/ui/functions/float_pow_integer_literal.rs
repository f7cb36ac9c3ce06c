use ein::ein;

ein! {
    fn f(a: [f64]) -> [f64] { for i { pow(a[i], 2) } }
}

fn main() {}
