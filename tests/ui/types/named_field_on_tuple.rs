use ein::ein;

ein! {
    fn f(a: [f64]) -> [f64] { for i { let t = (a[i], 1.0); t.re } }
}

fn main() {}
