use ein::ein;

ein! {
    fn f(a: [i64]) -> i64 { (fold t in 0..a.len(), acc = 0 { acc + a[t] }) + t }
}

fn main() {}
