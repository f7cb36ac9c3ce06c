// Only numbers and `bool`s cast: a captured array of strings does not.
fn main() {
    let s = vec!["one", "two"];
    let _ = ein::ein!(for i { s[i] as i64 });
}
