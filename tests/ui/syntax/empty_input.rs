use ein::ein;

fn main() {
    let _: f64 = ein!();
}
