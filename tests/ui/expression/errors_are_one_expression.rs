// Several errors in the expression form: only ein's own, each at its token; the output is a
// well-formed expression, so rustc adds no errors of its own after them.
fn main() {
    let temp = vec![1.0f32, 2.0];
    let x: f32 = ein::ein!(sum i { temp[i] + undefined_a + undefined_b[i] });
    let _ = x;
}
