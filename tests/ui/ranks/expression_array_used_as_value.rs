use ein::ein;

fn main() {
    let a = vec![1.0, 2.0, 3.0];
    let _ = ein!(for i { a[i] * a });
}
