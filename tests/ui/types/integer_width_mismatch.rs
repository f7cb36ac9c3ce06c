use ein::ein;

ein! {
    fn f(a: [i32], n: i64) -> [i32] { for i { a[i] + n } }
}

fn main() {}
