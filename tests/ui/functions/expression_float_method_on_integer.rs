fn main() {
    let n = vec![1i64, 2];
    let _ = ein::ein!(for i { n[i].sqrt() });
}
