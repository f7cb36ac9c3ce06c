//! Compile-fail UI tests: every program under `tests/ui/<category>/` must fail to compile with
//! exactly the diagnostics in its `.stderr` file (regenerate with
//! `TRYBUILD=overwrite cargo test --test integration ui`, then read every changed file).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*/*.rs");
}
