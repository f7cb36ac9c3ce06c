use ein::ein;

ein! {
    #[into(halve)]
    fn double(a: [f32]) -> [f32] { for i { a[i] * 2.0 } }

    fn halve(a: [f32]) -> [f32] { for i { a[i] / 2.0 } }
}

fn main() {}
