// Nothing gives `i` a size.
fn main() {
    let _ = ein::ein!(for i { 1.0 });
}
