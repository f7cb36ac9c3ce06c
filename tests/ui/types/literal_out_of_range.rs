use ein::ein;

ein! {
    fn brighten(img: [u8]) -> [u8] { for i { img[i] + 300 } }
    fn suffixed(a: [u16]) -> [u16] { for i { a[i] * 70000u16 } }
    // A negative literal where an unsigned type is meant (rustc: "cannot apply unary operator").
    fn nonnegative(x: [u8]) -> [bool] { for i { x[i] > -1 } }
    fn bounded(x: [u16]) -> [u16] { for i { x[i].clamp(-5, 10) } }
    // `-128` fits an `i8`; `-129` does not.
    fn lowest(x: [i8]) -> [i8] { for i { max(x[i], -128) + min(x[i], -129) } }
    // Beyond `f32`'s range (rustc refuses `1e39f32`); fine as an `f64`.
    fn huge(x: [f32], y: [f64]) -> [f32] { for i { x[i] * 1e39 + (y[i] * 1e39) as f32 } }
    // A literal cast takes the cast's type, as in Rust (`300 as u8` is refused by rustc too).
    fn cast(x: [f32], y: [u8]) -> [f32] { for i { x[i] + 1e39 as f32 + ((y[i] + 300 as u8) as f32) } }
    fn negated(y: [u8]) -> [u8] { for i { y[i] + (-1 as u8) } }
}

fn main() {}
