use ein::ein;

ein! {
    fn f(a: [f64]) -> [f64] { for i { let z = { re: a[i], im: 0.0 }; z.real } }
}

fn main() {}
