// A captured `&str` is not an array ein can read.
fn main() {
    let s = "ab";
    let _ = ein::ein!(for i in 0..2 { s[i] });
}
