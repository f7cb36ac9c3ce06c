//! The same `ein!` input expands to byte-identical output, every time and in every process
//! (no hash-map iteration order, no addresses, no clocks leak into generated code).

const PROGRAMS: &[&str] = &[
    "fn softmax(x: [[f32]]) -> [[f32]] { for i, j { exp(x[i, j] - max k { x[i, k] }) / sum k { exp(x[i, k] - max l { x[i, l] }) } } }",
    "fn mm(a: [[f64]], b: [[f64]]) -> [[f64]] { for i, j { sum k { a[i, k] * b[k, j] } } }",
    "fn mandel(re: [f64], im: [f64]) -> [{re: f64, im: f64, n: i64}] { for p { fold t in 0..50, z = { re: 0.0, im: 0.0, n: 0 } { let sq = z.re * z.re + z.im * z.im; { re: z.re * z.re - z.im * z.im + re[p], im: 2.0 * z.re * z.im + im[p], n: z.n + if sq < 4.0 { 1 } else { 0 } } } } }",
    "for i { sum k { a[i, k] * b[k] } * s }",
];

fn expand(source: &str) -> String {
    let tokens: proc_macro2::TokenStream = source.parse().expect("tokenises");
    ein_core::expand(tokens).to_string()
}

#[test]
fn expansion_is_deterministic() {
    for source in PROGRAMS {
        let first = expand(source);
        for _ in 0..5 {
            assert_eq!(first, expand(source), "expansion of {source} changed between runs");
        }
        assert!(!first.contains("compile_error"), "{source} should compile: {first}");
    }
}

#[test]
fn expansion_is_deterministic_across_threads() {
    let expected: Vec<String> = PROGRAMS.iter().map(|source| expand(source)).collect();
    let handles: Vec<_> = (0..4)
        .map(|_| std::thread::spawn(|| PROGRAMS.iter().map(|source| expand(source)).collect::<Vec<String>>()))
        .collect();
    for handle in handles {
        assert_eq!(handle.join().expect("thread finished"), expected);
    }
}
