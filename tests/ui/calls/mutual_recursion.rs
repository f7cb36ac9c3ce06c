use ein::ein;

ein! {
    pub fn even(x: i64) -> bool { if x == 0 { true } else { odd(x - 1) } }
    fn odd(x: i64) -> bool { if x == 0 { false } else { even(x - 1) } }
}

fn main() {}
