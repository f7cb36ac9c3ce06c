use ein::ein;

ein! {
    #[into(double)]
    fn double(a: [f32]) -> [f32] { for i { a[i] * 2.0 } }
}

fn main() {}
