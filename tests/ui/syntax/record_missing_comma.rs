use ein::ein;

ein! {
    fn f(a: [f64]) -> [{ re: f64, im: f64 }] { for i { { re: a[i] im: 0.0 } } }
}

fn main() {}
