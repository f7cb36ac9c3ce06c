use ein::ein;

ein! {
    fn f(a: [i64]) -> [i64] { for i { fold t in 0..a[i], acc = 0 { acc + t } } }
}

fn main() {}
