// A negative literal where rustc decides an unsigned type (`u32`): refused, as rustc refuses
// `-1u32` (the item form says so itself).
fn main() {
    let us: Vec<u32> = vec![0, 5];
    let _ = ein::ein!(for i { us[i] > -1 });
}
