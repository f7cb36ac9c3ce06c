use ein::ein;

ein! {
    fn f(a: [i32]) -> [bool] { for i { a[i].is_nan() } }
}

fn main() {}
