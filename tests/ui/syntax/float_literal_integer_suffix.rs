use ein::ein;

ein! {
    fn f(a: [i32]) -> [i32] { for i { a[i] * 1.5i32 } }
}

fn main() {}
