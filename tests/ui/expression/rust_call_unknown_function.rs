// A name that is no function in scope is rustc's error, at the name.
fn main() {
    let a = vec![1.0f64, 2.0];
    let _: ein::Array<f64, 1> = ein::ein!(for i { sigmoid(a[i]) });
}
