use ein::ein;

ein! {
    // A state that is an array would make an array of arrays.
    fn rows(x: [f64]) -> [[f64]] { scan t in 0..3, s = x { for i { s[i] * 2.0 } } }
}

fn main() {}
