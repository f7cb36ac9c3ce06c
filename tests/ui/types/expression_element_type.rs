use ein::ein;

fn main() {
    let a = vec![1.0f32, 2.0, 3.0];
    let _ = ein!(for i { a[i] * 2.0f64 });
}
