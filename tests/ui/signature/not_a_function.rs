use ein::ein;

ein! {
    struct S;
}

fn main() {}
