// `sum` adds numbers; count booleans by casting them.
fn main() {
    let m = vec![true, false];
    let _ = ein::ein!(sum i { m[i] });
}
