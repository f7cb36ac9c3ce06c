use ein::ein;

ein! {
    // `+=` outside an accum body: ein has no assignment.
    fn bump(x: [f64]) -> [f64] { for i { x[i] + for j in 0..1 { x[j] += 1.0 }[0] } }
}

fn main() {}
