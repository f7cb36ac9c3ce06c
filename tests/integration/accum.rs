//! Differential tests of `accum`: histograms (1-D and 2-D loops, u8 into u32), float scatter-add
//! (long enough to take the grouped parallel path, whose bits must be the interpreter's on any
//! number of threads: note [accum grouping]; and into targets larger than the updates, or with
//! mixed operators, whose partitioned parallel path must give the serial loop's bits), 2-D targets, conditional and several updates,
//! COO sparse matrix–vector products, `*=` and `|=`, exact updates into the runtime's four
//! copies of a small target (skewed counts, nests, `bool`s), the expression form, empty inputs,
//! and indices out of range (the same error in both, naming the index, the target and its size).

use crate::harness::{array, catch_quietly, scalar, strip_site, Form, Oracle};
use ein_core::interp::{self, ArrayValue, Value};

differential! {
    /// The 100 000 case runs 24 groups with private histograms.
    histogram_u8: fn(data: [u8]) -> [u32] {
        accum h = for b in 0..256 { 0 } { for k { h[data[k] as usize] += 1 } }
    }
    cases [n] in [[0], [1], [17], [100000]];
    args (data = array([n]));
}

differential! {
    /// Indices converted to `i64` as the semantics says: an index as a `usize` is itself, as a
    /// `u8` it wraps (Rust's `as`), and a negative `i32` as a `usize` is above `i64::MAX`, out
    /// of range (`index i64::MAX or more`, in the cases that draw one).
    index_conversions: fn(data: [i32], n: usize) -> ([i64], [i64], [i64]) {
        (
            accum h = for b in 0..n { 0 } { for i in 0..n { h[i as usize] += i } },
            accum h = for b in 0..256 { 0 } { for i in 0..n { h[i as u8] += 1 } },
            accum h = for b in 0..8 { 0 } { for k { h[data[k] as usize] += 1 } },
        )
    }
    cases [len, count] in [[0, 0], [5, 3], [40, 300], [1, 1]];
    args (data = array([len]).within(-1.5, 7.9), n = scalar(count));
}

differential! {
    /// Sizes read from a fold accumulator's lengths (`c.len()`, `c.shape(1)`): its initial
    /// value's, whose shape every step keeps (k-means counts per centroid). An index out of
    /// range (one centroid) fails in both.
    counts_sized_by_an_accumulator: fn(a: [usize], c0: [[f64]]) -> [[f64]] {
        fold t in 0..3, c = c0 {
            let counts = accum h = for k in 0..c.len() { 0 } { for q { h[a[q]] += 1 } };
            for k, d { c[k, d] * 0.5 + counts[k] as f64 + sum e in 0..c.shape(1) { c[k, e] } }
        }
    }
    cases [n, m, p] in [[0, 3, 2], [5, 1, 1], [10, 7, 3], [40, 8, 0], [9000, 9, 2]];
    args (a = array([n]).within(0.0, 6.0), c0 = array([m, p]));
}

differential! {
    /// The target's length inside its own body is its initial value's (no element is read).
    target_length_in_the_body: fn(x: [i64], z: [i64], w: [[i64]], m: i64) -> ([i64], [i64], [[i64]]) {
        (
            accum h = for b in 0..m { 0 } { for i { h[x[i] % h.len()] += 1 } },
            accum h = z { for i in 0..h.len() { h[i] += x[i] } },
            accum g = w { for i, j in 0..g.shape(1) { g[i, j] += i * j } },
        )
    }
    cases [n, rows, buckets] in [[0, 2, 3], [1, 1, 1], [5, 3, 4], [40, 6, 7]];
    args (x = array([n]).within(0.0, 50.0), z = array([n]), w = array([rows, n]), m = scalar(buckets as i64));
}

differential! {
    /// Nested loops over an image: the outer loop's rows are grouped.
    histogram_image: fn(img: [[u8]]) -> [u32] {
        accum h = for b in 0..256 { 0 } { for i, j { h[img[i, j] as usize] += 1 } }
    }
    cases [m, n] in [[0, 3], [3, 0], [1, 1], [7, 5], [700, 40]];
    args (img = array([m, n]));
}

differential! {
    scatter_add: fn(idx: [i64], v: [f64], m: i64) -> [f64] {
        accum y = for j in 0..m { 0.0 } { for i { y[idx[i]] += v[i] } }
    }
    cases [n, m] in [[0, 0], [0, 4], [1, 1], [17, 5], [100000, 1000], [30000, 20000]];
    args (idx = array([n]).within(0.0, m.max(1) as f64 - 1.0), v = array([n]), m = scalar(m as i64));
}

differential! {
    /// A fold whose step is an accumulation into a comprehension of the state: the
    /// comprehension builds in the array of the step before last, moved through the accum.
    fold_of_scatters: fn(idx: [i64], v: [f64], h: [f64], steps: usize) -> [f64] {
        fold t in 0..steps, s = h {
            accum y = for j in 0..h.len() { 0.5 * s[j] + s[j + 1] } { for i { y[idx[i]] += v[i] * s[idx[i]] } }
        }
    }
    cases [n, m, steps] in [[0, 3, 2], [4, 1, 3], [17, 5, 4], [3000, 700, 5]];
    args (idx = array([n]).within(0.0, m as f64 - 1.0), v = array([n]), h = array([m]), steps = scalar(steps));
}

differential! {
    /// f32 elements, the target a parameter (copied, never changed).
    scatter_into_parameter: fn(idx: [i64], v: [f32], y: [f32]) -> [f32] {
        accum z = y { for i { z[idx[i]] += v[i] } }
    }
    cases [n, m] in [[0, 3], [1, 1], [40, 6], [50000, 300]];
    args (idx = array([n]).within(0.0, m as f64 - 1.0), v = array([n]), y = array([m]));
}

differential! {
    two_dimensional_target: fn(a: [i64], b: [i64]) -> [[i32]] {
        accum h = for r in 0..4, c in 0..3 { 0 } { for i { h[a[i], b[i]] += 1 } }
    }
    cases [n] in [[0], [1], [33], [60000]];
    args (a = array([n]).within(0.0, 3.0), b = array([n]).within(0.0, 2.0));
}

differential! {
    /// Only positive values are added; both the condition and the update are evaluated.
    conditional_update: fn(x: [f64], k: [i64]) -> [f64] {
        accum h = for j in 0..8 { 0.0 } { for i { if x[i] > 0.0 { h[k[i]] += x[i] } } }
    }
    cases [n] in [[0], [1], [29], [70000]];
    args (x = array([n]), k = array([n]).within(0.0, 7.0));
}

differential! {
    /// Sparse matrix (coordinates) times a dense vector.
    coo_spmv: fn(rows: [i64], cols: [i64], vals: [f64], x: [f64], nrows: i64) -> [f64] {
        accum y = for r in 0..nrows { 0.0 } { for e { y[rows[e]] += vals[e] * x[cols[e]] } }
    }
    cases [nnz, m, n] in [[0, 3, 3], [1, 1, 1], [50, 10, 7], [80000, 500, 300]];
    args (
        rows = array([nnz]).within(0.0, m as f64 - 1.0),
        cols = array([nnz]).within(0.0, n as f64 - 1.0),
        vals = array([nnz]),
        x = array([n]),
        nrows = scalar(m as i64),
    );
}

differential! {
    /// Several updates per iteration, after a `let`; integer sums wrap.
    several_updates: fn(a: [i64], b: [i64]) -> [i64] {
        accum h = for j in 0..5 { 0 } { for i { let w = a[i] * b[i]; h[a[i]] += 1; h[b[i]] += w } }
    }
    cases [n] in [[0], [1], [20], [40000]];
    args (a = array([n]).within(0.0, 4.0), b = array([n]).within(0.0, 4.0));
}

differential! {
    /// `*=` and `|=`, and mixed operators (applied serially).
    other_operators: fn(x: [f64], k: [i64]) -> ([f64], [bool], [f64]) {
        (
            accum p = x { for i { p[k[i]] *= 1.0 + x[i] * 0.01 } },
            accum s = for j in 0..x.len() { false } { for i { s[k[i]] |= x[i] > 0.5 } },
            accum q = x { for i { q[k[i]] += 1.0; q[k[i]] *= 0.5 } },
        )
    }
    cases [n] in [[1], [2], [19], [30000]];
    args (x = array([n]), k = array([n]).within(0.0, n as f64 - 1.0));
}

differential! {
    /// Exact updates into a small target take the runtime's four copies (four iterations of the
    /// innermost loop write them in turn, then they are added): most updates into one element,
    /// two per iteration, one conditional, `u16` counts that wrap.
    skewed_counts_in_copies: fn(a: [i64]) -> [u16] {
        accum h = for b in 0..10 { 0 } {
            for k { h[if a[k] > 6 { a[k] } else { 3 }] += 1; if a[k] < 2 { h[a[k] + 8] += 7 } }
        }
    }
    cases [n] in [[0], [1], [5], [4099], [100000]];
    args (a = array([n]).within(0.0, 9.0));
}

differential! {
    /// The copies in a nest of loops (the innermost writes them in turn): wrapping `i8`
    /// products into a 2-D target, and `bool` `|=` and `&=`.
    nested_exact_updates_in_copies: fn(img: [[i64]]) -> ([[i8]], [bool], [bool]) {
        (
            accum h = for r in 0..2, c in 0..3 { 1 } { for i, j { h[img[i, j] % 2, img[i, j] % 3] *= 3 } },
            accum any = for b in 0..7 { false } { for i, j { any[img[i, j] % 7] |= img[i, j] > 15 } },
            accum all = for b in 0..7 { true } { for i, j { all[img[i, j] % 7] &= img[i, j] < 19 } },
        )
    }
    cases [m, n] in [[0, 4], [3, 0], [1, 1], [5, 3], [300, 41], [2, 3000]];
    args (img = array([m, n]).within(0.0, 20.0));
}

differential! {
    /// An index out of range fails in both, naming the same (first) index.
    out_of_range_index: fn(idx: [i64], m: i64) -> [i64] {
        accum y = for j in 0..m { 0 } { for i { y[idx[i]] += 1 } }
    }
    cases [n, m] in [[0, 2], [3, 10], [40, 12], [10, 3], [20000, 8], [5, 0], [20000, 16], [20000, 9]];
    args (idx = array([n]).within(0.0, 9.0), m = scalar(m as i64));
}

differential_expr! {
    /// The expression form: the element type is rustc's (a type parameter bounded by `Float`).
    expression_scatter:
    cases [n] in [[0], [1], [40], [30000]];
    let idx = array::<i64>([n]).within(0.0, 9.0), v = array::<f32>([n]);
    ein!(accum y = for j in 0..10 { 0.0 } { for i { y[idx[i]] += v[i] } });
}

differential_expr! {
    /// A histogram whose literal `0` is typed by the Rust use site.
    expression_histogram:
    cases [n] in [[0], [1], [40], [30000]];
    let data = array::<u8>([n]);
    ein!(accum h = for b in 0..256 { 0 } { for k { h[data[k] as usize] += 1 } }) -> ::ein::Array<u32, 1>;
}

program! {
    long_scatter: fn(idx: [i64], v: [f64], m: i64) -> [f64] {
        accum y = for j in 0..m { 0.0 } { for i { y[idx[i]] += v[i] } }
    }
}

fn bits_of(value: &Value) -> Vec<u64> {
    let Value::Array(array) = value else { panic!("expected an array, got {value:?}") };
    array
        .elements
        .iter()
        .map(|element| match element {
            Value::F64(value) => value.to_bits(),
            other => panic!("expected a float, got {other:?}"),
        })
        .collect()
}

fn scatter_args(idx: &[i64], v: &[f64], m: i64) -> Vec<Value> {
    vec![
        Value::Array(ArrayValue::vector(idx.iter().map(|&i| Value::I64(i)).collect())),
        Value::Array(ArrayValue::vector(v.iter().map(|&x| Value::F64(x)).collect())),
        Value::I64(m),
    ]
}

/// Group counts that are not powers of two too: compiled code combines a subtree's arrays as
/// soon as they are done, the interpreter level by level, in the same tree.
#[test]
fn long_float_accums_are_bit_identical_to_the_interpreter_on_any_number_of_threads() {
    let n = 1 << 18;
    for (m, groups) in [(1000, 64), (5041, 13), (21845, 3)] {
        assert_eq!(ein_core::ir::accum::accum_groups(n, m, false), groups, "groups for {m} bins");
        let idx: Vec<i64> = (0..n).map(|i| (i * 7919 % m) as i64).collect();
        let v: Vec<f64> = (0..n).map(|i| ((i * 104_729 % 1013) as f64 - 500.0) / 3.0 + 1e-9 * i as f64).collect();
        let oracle = Oracle::new("long_scatter", long_scatter::SOURCE, Form::Item);
        let expected = interp::run(oracle.program(), scatter_args(&idx, &v, m as i64), &[]).expect("runs");
        // The grouping is visible in the last bits: the serial loop differs.
        let mut serial = vec![0.0f64; m];
        for (&i, &x) in idx.iter().zip(&v) {
            serial[i as usize] += x;
        }
        let serial = Value::Array(ArrayValue::vector(serial.into_iter().map(Value::F64).collect()));
        assert_ne!(bits_of(&serial), bits_of(&expected), "{m} bins");
        for threads in [1, 2, 3, 4] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool");
            // Twice: the second call takes the first's private arrays, kept for reuse.
            for call in 0..2 {
                let y = pool.install(|| long_scatter::run(&idx, &v, m as i64));
                let y = Value::Array(ArrayValue::vector(y.as_slice().iter().map(|&x| Value::F64(x)).collect()));
                assert_eq!(bits_of(&y), bits_of(&expected), "{m} bins on {threads} threads, call {call}");
            }
        }
    }
}

program! {
    long_mixed: fn(k: [i64], x: [f64], m: i64) -> [f64] {
        accum q = for j in 0..m { 1.0 } { for i { q[k[i]] += sin(x[i]); if x[i] > 0.0 { q[k[i]] *= 0.5 } } }
    }
}

program! {
    costly_scatter: fn(idx: [i64], v: [f64], m: i64) -> [f64] {
        accum y = for j in 0..m { 0.0 } { for i { y[idx[i]] += exp(v[i] * 0.01) } }
    }
}

/// One group (a target larger than the updates, or mixed operators) is the serial loop, bit for
/// bit, though with costly updates it runs in parallel (partitioned by ranges of the target) on
/// several threads: the same bits as on one thread (the serial loop), and the interpreter's
/// values (ein's own `exp` and `sin` may differ from std's in the last bit).
#[test]
fn large_targets_and_mixed_operators_give_the_serial_loops_bits_on_any_number_of_threads() {
    let n: usize = 1 << 16;
    let m: usize = 1 << 18;
    let idx: Vec<i64> = (0..n).map(|i| (i * 104_729 % m) as i64).collect();
    // Repeated indices, so that the order of the updates to one element shows in its bits.
    let idx: Vec<i64> = idx.iter().map(|&i| if i % 3 == 0 { i % 5000 } else { i }).collect();
    let v: Vec<f64> = (0..n).map(|i| ((i * 7919 % 1013) as f64 - 500.0) / 3.0 + 1e-9 * i as f64).collect();
    let small: Vec<i64> = idx.iter().map(|&i| i % 700).collect();
    let one_thread = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("a pool");
    let serial = one_thread.install(|| costly_scatter::run(&idx, &v, m as i64)).as_slice().to_vec();
    let serial_mixed = one_thread.install(|| long_mixed::run(&small, &v, 700)).as_slice().to_vec();
    let close = |got: &[f64], expected: &Value, what: &str| {
        let Value::Array(array) = expected else { panic!("expected an array, got {expected:?}") };
        assert_eq!(got.len(), array.elements.len(), "{what}");
        for (got, expected) in got.iter().zip(&array.elements) {
            let Value::F64(expected) = expected else { panic!("expected a float, got {expected:?}") };
            assert!((got - expected).abs() <= 1e-12 * expected.abs().max(1.0), "{what}: {got} vs {expected}");
        }
    };
    let scatter = Oracle::new("costly_scatter", costly_scatter::SOURCE, Form::Item);
    close(&serial, &interp::run(scatter.program(), scatter_args(&idx, &v, m as i64), &[]).expect("runs"), "scatter");
    let mixed = Oracle::new("long_mixed", long_mixed::SOURCE, Form::Item);
    let mixed_args = vec![
        Value::Array(ArrayValue::vector(small.iter().map(|&i| Value::I64(i)).collect())),
        Value::Array(ArrayValue::vector(v.iter().map(|&x| Value::F64(x)).collect())),
        Value::I64(700),
    ];
    close(&serial_mixed, &interp::run(mixed.program(), mixed_args, &[]).expect("runs"), "mixed");
    let bits = |values: &[f64]| values.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for threads in [2, 3, 4] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool");
        let y = pool.install(|| costly_scatter::run(&idx, &v, m as i64));
        assert_eq!(bits(y.as_slice()), bits(&serial), "scatter-add into a large target on {threads} threads");
        let q = pool.install(|| long_mixed::run(&small, &v, 700));
        assert_eq!(bits(q.as_slice()), bits(&serial_mixed), "mixed operators on {threads} threads");
    }
}

/// On the partitioned path too, the first index out of range in iteration order is reported.
#[test]
fn a_large_target_reports_its_first_index_out_of_range() {
    let n = 1 << 16;
    let mut idx: Vec<i64> = (0..n).map(|i| i * 3 % (1 << 18)).collect();
    idx[50_000] = -7;
    idx[60_000] = 1 << 20;
    let v = vec![0.5; idx.len()];
    let oracle = Oracle::new("costly_scatter", costly_scatter::SOURCE, Form::Item);
    let error = interp::run(oracle.program(), scatter_args(&idx, &v, 1 << 18), &[]).expect_err("fails");
    assert!(error.message.starts_with("index -7 out of range for axis 0 of `y` (size 262144)"), "{}", error.message);
    for threads in [1, 2, 4] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool");
        let panic = pool.install(|| catch_quietly(|| costly_scatter::run(&idx, &v, 1 << 18))).expect_err("fails");
        assert_eq!(strip_site(&panic), error.message, "on {threads} threads");
    }
}

program! {
    ragged_counts: fn(c: [i64], idx: [i64], m: i64) -> ([i64], [f64]) {
        (
            accum h = for a in 0..m { 0 } { for i { for j in 0..c[i] { h[idx[i] + j] += 1 } } },
            accum g = for a in 0..m { 0.0 } { for i { for j in 0..c[i] { g[idx[i] + j] += 1.5 } } },
        )
    }
}

/// Whatever the failures are (an index out of range, a negative loop size), the one reported
/// is the first the serial loop meets, on any number of threads: a later group's panic does
/// not overtake an earlier group's index error, nor the other way round.
#[test]
fn the_first_failure_in_iteration_order_is_reported_whatever_its_kind() {
    let oracle = Oracle::new("ragged_counts", ragged_counts::SOURCE, Form::Item);
    let vector = |values: &[i64]| Value::Array(ArrayValue::vector(values.iter().map(|&x| Value::I64(x)).collect()));
    for (bad_index, negative) in [(1000, 9000), (9000, 1000)] {
        let (mut c, mut idx) = (vec![1i64; 12_000], vec![0i64; 12_000]);
        idx[bad_index] = 50;
        c[negative] = -3;
        let args = vec![vector(&c), vector(&idx), Value::I64(10)];
        let error = interp::run(oracle.program(), args, &[]).expect_err("fails");
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool");
            let panic = pool.install(|| catch_quietly(|| ragged_counts::run(&c, &idx, 10))).expect_err("fails");
            // (The compiled message of a negative size adds "; sizes must be >= 0".)
            let reported = strip_site(&panic);
            assert!(reported.starts_with(&error.message), "on {threads} threads: {reported} / {}", error.message);
        }
    }
}

#[test]
fn an_index_out_of_range_panics_naming_it_the_target_and_its_size() {
    let mut idx: Vec<i64> = (0..50_000).map(|i| i % 256).collect();
    idx[30_000] = 300;
    idx[40_000] = -2;
    let v = vec![1.0; idx.len()];
    let panic = catch_quietly(|| long_scatter::run(&idx, &v, 256)).expect_err("an index out of range");
    assert!(panic.starts_with("ein: index 300 out of range for axis 0 of `y` (size 256) (at "), "{panic}");
    let oracle = Oracle::new("long_scatter", long_scatter::SOURCE, Form::Item);
    let error = interp::run(oracle.program(), scatter_args(&idx, &v, 256), &[]).expect_err("fails");
    assert_eq!(strip_site(&panic), error.message);
    // The same on one thread (the first failing group is reported, not the first to fail).
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("a pool");
    let panic = pool.install(|| catch_quietly(|| long_scatter::run(&idx, &v, 256))).expect_err("fails");
    assert_eq!(strip_site(&panic), error.message);
}

differential! {
    /// An accum's loops build no array, so their ranges may depend on enclosing indices: the
    /// product with a CSR matrix's transpose (rows of varying length, their starts a prefix
    /// sum of the counts), grouped by rows in the long case.
    csr_transpose_product: fn(counts: [i64], cols: [i64], vals: [f64], x: [f64], n: i64) -> [f64] {
        let ends = scan t, e = 0 { e + counts[t] };
        accum y = for c in 0..n { 0.0 } {
            for r {
                let start = ends[r] - counts[r];
                for k in 0..counts[r] { y[cols[start + k]] += vals[start + k] * x[r] }
            }
        }
    }
    cases [rows, nnz, n] in [[0, 1, 2], [1, 1, 1], [6, 12, 5], [9000, 20000, 300]];
    args (
        counts = array([rows]).within(0.0, 4.0),
        cols = array([nnz]).within(0.0, n as f64 - 1.0),
        vals = array([nnz]),
        x = array([rows]),
        n = scalar(n as i64),
    );
}

differential! {
    /// Triangular and data-dependent ranges three loops deep, exact updates (the runtime's
    /// copies of a small target) and a `let` between the loops.
    ragged_nest_of_counts: fn(lengths: [i64], m: i64) -> ([i64], [u32]) {
        (
            accum h = for b in 0..m { 0 } {
                for i { for j in 0..i % 5 { let w = lengths[i] + j; for k in 0..w { h[(i + j + k) % m] += 1 } } }
            },
            accum g = for b in 0..8 { 0 } { for i { for j in 0..lengths[i] { g[j % 8] += 1 } } },
        )
    }
    cases [n, m] in [[0, 3], [1, 1], [9, 4], [6000, 7]];
    args (lengths = array([n]).within(0.0, 6.0), m = scalar(m as i64));
}

mod readme {
    ein::ein! {
        pub fn histogram(data: [u8]) -> [u32] {
            accum h = for b in 0..256 { 0 } { for k { h[data[k] as usize] += 1 } }
        }
        pub fn scatter_add(idx: [usize], v: [f64], m: i64) -> [f64] {
            accum y = for j in 0..m { 0.0 } { for i { y[idx[i]] += v[i] } }
        }
        pub fn coo_spmv(rows: [usize], cols: [usize], vals: [f64], x: [f64], n: i64) -> [f64] {
            accum y = for r in 0..n { 0.0 } { for e { y[rows[e]] += vals[e] * x[cols[e]] } }
        }
    }
}

#[test]
fn the_readme_examples_run() {
    assert_eq!(readme::histogram(&[3u8, 3, 0]).as_slice()[..4], [1, 0, 0, 2]);
    assert_eq!(readme::scatter_add(&[1usize, 1], &[0.5, 2.0], 2).as_slice(), &[0.0, 2.5]);
    let y = readme::coo_spmv(&[0usize, 1, 1], &[1usize, 0, 1], &[2.0, 3.0, 4.0], &[10.0, 100.0], 2);
    assert_eq!(y.as_slice(), &[200.0, 430.0]);
}

#[test]
fn the_runtime_and_the_interpreter_group_alike() {
    // Note [accum grouping] is written twice (compiler and runtime): the two must agree.
    for outer in [0usize, 1, 4095, 8191, 8192, 9000, 100_000, 1 << 20, 1 << 24] {
        for len in [0usize, 1, 256, 1000, 1 << 16, 1 << 20] {
            for nested in [false, true] {
                assert_eq!(
                    ein::__private::accum_groups(outer, len, nested),
                    ein_core::ir::accum::accum_groups(outer, len, nested),
                    "{outer} iterations into {len} elements, nested: {nested}"
                );
            }
        }
    }
}
