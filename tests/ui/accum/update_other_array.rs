use ein::ein;

ein! {
    // Only the accum's own array can be updated.
    fn scatter(idx: [i64], v: [f64], g: [f64]) -> [f64] {
        accum y = for j in 0..10 { 0.0 } { for i { g[idx[i]] += v[i] } }
    }
}

fn main() {}
