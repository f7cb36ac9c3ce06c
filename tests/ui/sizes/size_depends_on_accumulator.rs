use ein::ein;

ein! {
    fn f(a: [i64]) -> i64 { fold t in 0..a.len(), acc = 1 { sum j in 0..acc { a[j] } } }
}

fn main() {}
