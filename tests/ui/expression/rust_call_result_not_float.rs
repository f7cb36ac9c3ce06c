// A Rust function's result is used as a float here, but it returns a `u32`: the error is at
// the call.
fn count_bits(x: f64) -> u32 {
    x.to_bits().count_ones()
}

fn main() {
    let w = vec![0.5f64, -1.0];
    let _ = ein::ein!(for i { count_bits(w[i]) + 1.5 });
}
