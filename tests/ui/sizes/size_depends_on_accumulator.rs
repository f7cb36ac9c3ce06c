use ein::ein;

// A reduction's range may depend on an accumulator; a comprehension's size may not.
ein! {
    fn f(a: [i64]) -> [i64] { fold t in 0..a.len(), acc = a { for j in 0..acc[0] { a[j] } } }
}

fn main() {}
