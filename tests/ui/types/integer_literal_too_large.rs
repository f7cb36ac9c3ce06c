use ein::ein;

ein! {
    fn f(a: [i64]) -> [i64] { for i { a[i] + 9223372036854775808 } }
    // `-9223372036854775808` is `i64::MIN`; one less is no integer.
    fn g(a: [i64]) -> [i64] { for i { max(a[i], -9223372036854775808) + -9223372036854775809 } }
    fn h(a: [u32]) -> [u32] { for i { a[i] * 4294967296 } }
}

fn main() {}
