//! An index read only through a computed position (`a[2 * i]`) has no size: the error names
//! the read that does not size it.
use ein::ein;

ein! {
    fn f(a: [f32]) -> [f32] { for i { a[2 * i] } }
}

fn main() {}
