use ein::ein;

ein! {
    fn f(a: [i64]) -> [bool] { for i { a[i] as bool } }
}

fn main() {}
