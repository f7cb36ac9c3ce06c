use ein::ein;

ein! {
    fn f(a: [bool], b: [f32]) -> [f32] { for i { if a { b[i] } else { 0.0 } } }
}

fn main() {}
