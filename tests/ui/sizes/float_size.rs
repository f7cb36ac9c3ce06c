use ein::ein;

ein! {
    fn f(x: f64) -> [f64] { for i in 0..x { 1.0 } }
}

fn main() {}
