use ein::ein;

ein! {
    fn f<T>(a: [T]) -> [T] { for i { a[i] } }
}

fn main() {}
