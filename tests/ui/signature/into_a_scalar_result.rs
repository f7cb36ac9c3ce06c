use ein::ein;

ein! {
    // `out` can only be arrays: the norm has nowhere to go.
    #[into(scaled_into)]
    fn scaled(a: [f32]) -> ([f32], f32) {
        let norm = sqrt(sum i { a[i] * a[i] });
        (for i { a[i] / norm }, norm)
    }
}

fn main() {}
