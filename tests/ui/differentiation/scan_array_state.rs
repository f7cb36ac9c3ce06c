use ein::ein;

ein! {
    // A scan whose state is an array has no derivative yet (a fold's does).
    #[grad(trajectory_grad)]
    fn trajectory(x: [f64]) -> f64 {
        let states = scan t in 0..3, s = x { for i { s[i] * 2.0 } };
        sum t, i { states[t, i] }
    }
}

fn main() {}
