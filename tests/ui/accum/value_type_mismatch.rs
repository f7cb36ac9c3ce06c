use ein::ein;

ein! {
    // An integer histogram cannot take float weights.
    fn hist(k: [i64], w: [f64]) -> [u32] {
        accum h = for b in 0..8 { 0 } { for i { h[k[i]] += w[i] } }
    }
}

fn main() {}
