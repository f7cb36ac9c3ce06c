use ein::ein;

ein! {
    fn f(a: [f32]) -> [bool] { for i { 0.0 < a[i] < 1.0 } }
}

fn main() {}
