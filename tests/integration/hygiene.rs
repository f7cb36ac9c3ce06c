//! Hygiene: generated code uses absolute paths only, so it compiles unchanged in a module that
//! shadows the prelude (`Result`, `Ok`, `Some`, `Vec`, `Box`, …), the primitive type names and
//! `core`, and it is warning-free under `deny(warnings)` (clippy runs on this file in CI too).
#![deny(warnings)]
#![allow(non_camel_case_types)]

struct Result;
struct Ok;
struct Err;
struct Some;
struct None;
struct Option;
struct Vec;
struct Box;
struct String;
struct f32;
struct usize;
mod core {}
mod std {}
mod ein {}

/// Uses every shadowing item once, so the shadows themselves are not dead code.
fn shadows() -> usize {
    let _ = (Result, Ok, Err, Some, None, Option, Vec, Box, String, f32);
    usize
}

::ein::ein! {
    /// Every construct of the item form, in a module where the prelude is shadowed; its
    /// `#[into]` companion writes the array of records into two arrays the caller owns.
    #[into(everything_into)]
    pub fn everything(a: [[f64]], b: [f64], n: usize, s: f64) -> [{ re: f64, im: f64 }] {
        for i {
            let row = a[i];
            let (m, total) = (max k { row[k] }, sum k { row[k] * b[k] });
            let steps = fold t in 0..n, z = { re: 0.0, im: 0.0 } {
                { re: z.re * 0.5 + total, im: z.im + (t as f64) * s }
            };
            { re: if m > 0.0 { steps.re } else { -steps.re }, im: steps.im + row[0] - b[i + 1] }
        }
    }

    pub fn reductions(a: [f64], w: [i64]) -> (f64, usize, i64, bool) {
        (sum i { a[i] * a[i] }, argmax i { a[i] }, prod j { w[j] % 7 + 1 }, any j { w[j] > 3 })
    }

    /// Forward mode of a scan and a fold whose state is a tuple pattern: the packed state the
    /// companion invents gets a snake-case name (it was `__ein___ein_acc_pair`).
    #[jvp(decays_jvp)]
    pub fn decays(x: [f64]) -> ([f64], f64) {
        let c = scan t, (p, q) = (0.0, 1.0) { (p + q * x[t], q * 0.5) };
        let r = fold t in 0..x.len(), (p, q) = (0.0, 1.0) { (p + q * x[t], q * 0.5) };
        (for i { c[i].0 }, r.0)
    }

    /// A raw name, a non-snake-case one under its own `allow`, and one compiled out: their
    /// column-major copies (matrices read element by element) are named from the function's
    /// name without `r#`, keep its lint levels and `cfg`s (the compiled-out one calls a Rust
    /// function that does not exist).
    pub fn r#type(m: [[f64]]) -> [f64] {
        for i { sum j { m[i, j] } }
    }

    #[allow(non_snake_case)]
    pub fn rowMax(M: [[f64]]) -> [f64] {
        for i { max j { M[i, j] } }
    }

    /// The derivative companions carry the lint levels (`X`, `d_X`) and the `cfg`s.
    #[allow(non_snake_case)]
    #[grad(least_squares_grad)]
    #[jvp(least_squares_jvp)]
    pub fn least_squares(X: [[f64]], w: [f64]) -> f64 {
        sum i { let z = sum k { X[i, k] * w[k] }; z * z }
    }

    extern fn nowhere(x: f64) -> f64 with d = nowhere_d;

    #[cfg(any())]
    #[grad(compiled_out_grad)]
    pub fn compiled_out(m: [[f64]]) -> f64 {
        sum i { nowhere(m[i, 0]) }
    }

    /// The `#[into]` companion of a fold: the result is copied into `out`.
    #[into(path_into)]
    pub fn path(w: [[i64]]) -> [i64] {
        fold t in 0..w.len(), acc = for j { w[0, j] } {
            for j { min(acc[j - 1], min(acc[j], acc[j + 1])) + w[t, j] }
        }
    }
}

#[test]
fn every_form_compiles_with_the_prelude_shadowed() {
    let _ = shadows();
    let a = ndarray::Array2::from_shape_fn((3, 4), |(i, j)| (i as f64) - (j as f64));
    let b = [1.0, 2.0, 3.0, 4.0];
    let (re, im) = everything(&a, &b, 3, 0.5);
    assert_eq!(re.shape(), [3]);
    assert_eq!(im.shape(), [3]);
    let (total, at, product, any) = reductions(&b, &[1i64, 5, 2]);
    assert_eq!((total, at, product, any), (30.0, 3, 2 * 6 * 3, true));
    let w = ndarray::array![[1i64, 2, 3], [4, 5, 6]];
    assert_eq!(path(&w).as_slice(), &[6, 7, 9]);
    let mut written = (vec![0.0; 3], ndarray::Array1::<f64>::zeros(3));
    everything_into((&mut written.0, &mut written.1), &a, &b, 3, 0.5);
    assert_eq!(
        (written.0.as_slice(), written.1.as_slice()),
        (re.as_slice(), ::core::option::Option::Some(im.as_slice()))
    );
    let ((partial, total), (d_partial, d_total)) = decays_jvp(&b, &[1.0, 0.0, 0.0, 0.0]);
    assert_eq!((partial.as_slice(), total), (&[1.0, 2.0, 2.75, 3.25][..], 3.25));
    assert_eq!((d_partial.as_slice(), d_total), (&[1.0, 1.0, 1.0, 1.0][..], 1.0));
    let x = ndarray::array![[1.0, 2.0], [0.0, 1.0]];
    let (value, _, d_w) = least_squares_grad(&x, &[1.0, -1.0]);
    assert_eq!((value, d_w.as_slice()), (2.0, &[-2.0, -6.0][..]));
    assert_eq!(least_squares_jvp(&x, &[1.0, -1.0], &x, &[0.0, 0.0]), (2.0, 4.0));
    let mut best = [0i64; 3];
    path_into(&mut best, &w);
    assert_eq!(best, [6, 7, 9]);

    // Row-major and column-major (a transposed view: the column-major copy).
    let m = ndarray::array![[1.0, 5.0], [3.0, -2.0], [0.5, 0.25]];
    let mt = m.t().as_standard_layout().into_owned();
    assert_eq!((r#type(&m).as_slice(), r#type(&mt.t()).as_slice()), (&[6.0, 1.0, 0.75][..], &[6.0, 1.0, 0.75][..]));
    assert_eq!((rowMax(&m).as_slice(), rowMax(&mt.t()).as_slice()), (&[5.0, 3.0, 0.5][..], &[5.0, 3.0, 0.5][..]));

    let scale = 2.0f64;
    let doubled = ::ein::ein!(for i { b[i] * scale });
    assert_eq!(doubled.as_slice(), &[2.0, 4.0, 6.0, 8.0]);
    let count = ::ein::ein!(sum i { if b[i] > 1.5 { 1i64 } else { 0i64 } });
    assert_eq!(count, 3);
    // Rust functions and closures called by the expression form (passed in as closures).
    let halve = |x: f64| x / 2.0;
    let halves = ::ein::ein!(for i { halve(b[i]) + shifted(b[i], 1) });
    assert_eq!(halves.as_slice(), &[2.5, 4.0, 5.5, 7.0]);
}

/// A Rust function the expression form calls.
fn shifted(x: f64, by: i32) -> f64 {
    x + ::core::primitive::f64::from(by)
}
