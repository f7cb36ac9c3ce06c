use ein::ein;

ein! {
    fn f(a: [i64]) -> i64 { fold t in 0..a.len(), acc = 1 { fold u in 0..acc, b = acc { b + a[u] } } }
}

fn main() {}
