use ein::ein;

ein! {
    #[into(double_into)]
    #[into(double_in_place)]
    fn double(a: [f32]) -> [f32] { for i { a[i] * 2.0 } }
}

fn main() {}
