use ein::ein;

ein! {
    // The step gives a `bool`, the state is an `f64`: the error points at the step's value.
    fn above(x: [f64]) -> [f64] {
        scan t, s = 0.0 {
            let y = x[t];
            s < y
        }
    }
}

fn main() {}
