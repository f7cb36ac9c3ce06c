use ein::ein;

ein! {
    fn brighten(img: [u8]) -> [u8] { for i { img[i] + 300 } }
    fn suffixed(a: [u16]) -> [u16] { for i { a[i] * 70000u16 } }
}

fn main() {}
