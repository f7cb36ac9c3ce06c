use ein::ein;

ein! {
    fn f(a: [f32]) -> [bool] { for i { abs(a[i] > 0.0) } }
}

fn main() {}
