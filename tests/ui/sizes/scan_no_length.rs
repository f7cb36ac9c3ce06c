use ein::ein;

ein! {
    // `t` indexes no array, so the scan's length cannot be inferred.
    fn count(x: [f64]) -> [f64] { scan t, s = 0.0 { s + 1.0 } }
}

fn main() {}
