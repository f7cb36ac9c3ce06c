use ein::ein;

ein! {
    fn f(a: [bool]) -> [bool] { for i { a[i] + a[i] } }
}

fn main() {}
