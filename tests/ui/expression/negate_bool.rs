// `-` applies to numbers.
fn main() {
    let m = vec![true, false];
    let _ = ein::ein!(for i { -m[i] });
}
