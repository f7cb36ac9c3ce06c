// The parallel loops share a called closure between threads: it must be `Sync`.
fn main() {
    let calls = std::cell::Cell::new(0);
    let count = |x: f64| {
        calls.set(calls.get() + 1);
        x
    };
    let a = vec![1.0f64, 2.0];
    let _: ein::Array<f64, 1> = ein::ein!(for i { count(a[i]) });
}
