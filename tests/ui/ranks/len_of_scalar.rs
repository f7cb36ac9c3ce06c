use ein::ein;

ein! {
    fn f(a: [f32], s: f32) -> i64 { a.len() + s.len() }
}

fn main() {}
