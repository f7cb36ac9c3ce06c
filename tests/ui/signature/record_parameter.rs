use ein::ein;

ein! {
    fn f(z: { re: f64, im: f64 }) -> f64 { z.re }
}

fn main() {}
