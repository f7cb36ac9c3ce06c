use ein::ein;

ein! {
    // Reading the target inside its body would depend on the order of the updates.
    fn running(idx: [i64], v: [f64]) -> [f64] {
        accum y = for j in 0..10 { 0.0 } { for i { y[idx[i]] += y[0] * v[i] } }
    }
}

fn main() {}
