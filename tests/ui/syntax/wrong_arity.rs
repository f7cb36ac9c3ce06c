use ein::ein;

ein! {
    fn f(a: [f32]) -> [f32] { for i { pow(a[i]) } }
}

fn main() {}
