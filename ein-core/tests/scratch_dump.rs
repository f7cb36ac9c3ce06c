#[test]
fn dump() {
    let source = std::env::var("SRC").unwrap();
    let tokens: proc_macro2::TokenStream = source.parse().unwrap();
    let out = ein_core::compile(tokens).unwrap();
    std::fs::write("/tmp/scratch/out.rs", out.to_string()).unwrap();
}
