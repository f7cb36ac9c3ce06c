use ein::ein;

ein! {
    fn f(a: [[f32]]) -> [f32] { for i { let row = a[i]; row[i, i] } }
}

fn main() {}
