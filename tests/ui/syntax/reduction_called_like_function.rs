use ein::ein;

ein! {
    fn f(a: [f32]) -> f32 { sum(a) }
}

fn main() {}
