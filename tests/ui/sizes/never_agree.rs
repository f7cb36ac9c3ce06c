//! Two reads whose sizes always differ by a constant can never pass their size check: a
//! compile error naming both axes.
use ein::ein;

ein! {
    fn f(a: [f64]) -> [f64] {
        let d = for i in 0..a.len() - 1 { a[i + 1] - a[i] };
        for i { d[i] * a[i] }
    }
}

fn main() {}
