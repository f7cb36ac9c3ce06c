// rustc types a Rust function's call: an argument of the wrong type is its error, at the call.
fn half(x: f32) -> f32 {
    x * 0.5
}

fn main() {
    let a = vec![1.0f64, 2.0];
    let _: ein::Array<f64, 1> = ein::ein!(for i { half(a[i]) });
}
