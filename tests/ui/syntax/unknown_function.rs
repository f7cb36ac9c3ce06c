use ein::ein;

ein! {
    fn f(a: [f32]) -> [f32] { for i { sigmoid(a[i]) } }
}

fn main() {}
