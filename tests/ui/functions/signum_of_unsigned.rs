use ein::ein;

ein! {
    fn f(a: [u32]) -> [u32] { for i { a[i].signum() } }
}

fn main() {}
