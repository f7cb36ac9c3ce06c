use ein::ein;

ein! {
    // The initial value must be an array.
    fn total(v: [f64]) -> f64 {
        accum s = 0.0 { for i { s[0] += v[i] } }
    }
}

fn main() {}
