use ein::ein;

ein! {
    fn f(a: [f32]) -> [bool] { for i { a[i] && true } }
}

fn main() {}
