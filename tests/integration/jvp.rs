//! Differential tests of `#[jvp]` companions (forward-mode derivatives): each program is
//! compiled with `#[jvp(run_jvp)]`, and `run_jvp(params.., d_params..)` must give what the
//! interpreter gives for the companion and, the same, what dual numbers give for the primal
//! (`interp::run_dual`), in every layout. The constructs: comprehensions, sums, `max` (the
//! chosen element's tangent), `let`, `if`, records, folds, scans, accumulations, filters,
//! contractions, clamped and gathered reads, scalar functions, integer parts.

use crate::harness::{array, extern1, extern2, extern3, scalar};

differential_jvp! {
    softmax: fn(x: [[f64]]) -> [[f64]] {
        for i, j {
            let m = max k { x[i, k] };
            exp(x[i, j] - m) / sum k { exp(x[i, k] - m) }
        }
    }
    cases [m, n] in [[0, 3], [1, 1], [3, 0], [4, 7], [33, 70]];
    args (x = array([m, n]), d_x = array([m, n]));
}

differential_jvp! {
    /// The loss of a logistic regression: a matrix–vector product, `ln`, `exp`, a scalar result.
    logistic_loss: fn(x: [[f64]], y: [f64], w: [f64], lambda: f64) -> f64 {
        let p = for i { 1.0 / (1.0 + exp(-sum k { x[i, k] * w[k] })) };
        -sum i { y[i] * ln(p[i]) + (1.0 - y[i]) * ln(1.0 - p[i]) } / (y.len() as f64)
            + lambda * sum k { w[k] * w[k] }
    }
    cases [n, d] in [[0, 3], [1, 1], [5, 3], [300, 8]];
    args (
        x = array([n, d]),
        y = array([n]).within(0.0, 1.0),
        w = array([d]),
        lambda = scalar(0.1),
        d_x = array([n, d]),
        d_y = array([n]),
        d_w = array([d]),
        d_lambda = scalar(0.5),
    );
}

differential_jvp! {
    /// The tangent of a product is two products: both stay contractions.
    matmul_f32: fn(a: [[f32]], b: [[f32]]) -> [[f32]] { for i, j { sum k { a[i, k] * b[k, j] } } }
    cases [m, k, n] in [[0, 2, 3], [1, 1, 1], [3, 4, 5], [40, 30, 20]];
    args (a = array([m, k]), b = array([k, n]), d_a = array([m, k]), d_b = array([k, n]));
}

differential_jvp! {
    /// Clamped reads at the edges take the tangent of the element actually read.
    blur: fn(img: [[f64]]) -> [[f64]] {
        for i, j { (img[i - 1, j] + img[i + 1, j] + img[i, j - 1] + img[i, j + 1] + 4.0 * img[i, j]) / 8.0 }
    }
    cases [h, w] in [[1, 1], [2, 5], [9, 7], [64, 40]];
    args (img = array([h, w]), d_img = array([h, w]));
}

differential_jvp! {
    /// A fold of a whole grid (hotspot-like): the state and its tangent advance together.
    diffusion_steps: fn(grid: [[f64]], k: f64, steps: usize) -> [[f64]] {
        fold t in 0..steps, g = grid {
            for i, j { g[i, j] + k * (g[i - 1, j] + g[i + 1, j] + g[i, j - 1] + g[i, j + 1] - 4.0 * g[i, j]) }
        }
    }
    cases [h, w, s] in [[0, 2, 3], [1, 1, 1], [4, 5, 0], [6, 7, 5], [20, 30, 3]];
    args (grid = array([h, w]), k = scalar(0.1), steps = scalar(s), d_grid = array([h, w]), d_k = scalar(-0.3));
}

differential_jvp! {
    /// Scans: a prefix sum and a running product, with integer parts (zero tangents).
    running: fn(x: [f64]) -> ([f64], [f64], [i64]) {
        (scan t, s = 0.0 { s + x[t] * x[t] }, scan t, p = 1.0 { p * (1.0 + 0.5 * x[t]) }, scan t in 0..x.len(), c = 0 { c + 1 })
    }
    cases [n] in [[0], [1], [17], [3000]];
    args (x = array([n]), d_x = array([n]));
}

differential_jvp! {
    /// A weighted histogram: the tangent accumulates into the same buckets.
    weighted_histogram: fn(bucket: [usize], w: [f64], init: [f64]) -> [f64] {
        accum h = for b in 0..init.len() { init[b] * 2.0 } { for i { h[bucket[i]] += w[i] * w[i] } }
    }
    cases [n, m] in [[0, 3], [1, 1], [50, 4], [5000, 16]];
    args (bucket = array([n]).within(0.0, m as f64 - 1.0), w = array([n]), init = array([m]), d_w = array([n]), d_init = array([m]));
}

differential_jvp! {
    /// Loops of varying length (a CSR matrix's rows) in an accum, `*=` without `+=`: the
    /// tangent takes the products of the other factors, over the same loops.
    ragged_products: fn(counts: [i64], cols: [i64], vals: [f64], h0: [f64]) -> [f64] {
        let ends = scan t, e = 0 { e + counts[t] };
        accum h = h0 { for r { for k in 0..counts[r] { h[cols[ends[r] - counts[r] + k]] *= vals[ends[r] - k - 1] } } }
    }
    cases [rows, nnz, n] in [[0, 1, 2], [1, 1, 1], [6, 12, 5], [300, 700, 90]];
    args (
        counts = array([rows]).within(0.0, 4.0),
        cols = array([nnz]).within(0.0, n as f64 - 1.0),
        vals = array([nnz]),
        h0 = array([n]),
        d_vals = array([nnz]),
        d_h0 = array([n]),
    );
}

differential_jvp! {
    /// Records, `if`, `max`/`min`/`argmax` and a gather through the chosen index.
    records_and_choices: fn(x: [f64], y: [f64]) -> ({ lo: f64, hi: f64 }, [f64], f64) {
        let best = argmax i { x[i] * y[i] };
        (
            { lo: min i { x[i] - y[i] }, hi: max i { x[i] + y[i] } },
            for i { if x[i] > 0.0 { tanh(x[i]) * y[i] } else { sin(y[i]) / (1.0 + x[i] * x[i]) } },
            x[best] * sqrt(abs(y[best]) + 1.0),
        )
    }
    cases [n] in [[1], [2], [9], [1000]];
    args (x = array([n]), y = array([n]), d_x = array([n]), d_y = array([n]));
}

differential_jvp! {
    /// A filter keeps the tangents of the kept elements.
    positive_squares: fn(x: [f32]) -> [f32] { for i where x[i] > 0.0 { x[i] * x[i] } }
    cases [n] in [[0], [1], [10], [4000]];
    args (x = array([n]), d_x = array([n]));
}

differential_jvp! {
    /// Only the float parameters have tangents; integer results have zero tangents.
    mixed_types: fn(idx: [i64], x: [[f64]], n: usize) -> ([f64], [usize], f64) {
        (
            for i { x[idx[i], i] * pow(x[i, 0], 3.0) + x[i, 1].powi(2) },
            for i { argmin j { x[i, j] } },
            sum i in 0..n { x[i, i] * (i as f64) },
        )
    }
    cases [m] in [[1], [3], [8], [100]];
    args (idx = array([m]).within(-1.0, m as f64), x = array([m, m]), n = scalar(m), d_x = array([m, m]));
}

/// A Rust function and its declared derivative: `smooth_d(x, dx)` is the tangent of
/// `smooth(x)`; `scaled_d(x, k, dx)` that of `scaled(x, k)` (one tangent per float argument).
fn smooth(x: f64) -> f64 {
    x.atan() * 2.0
}

fn smooth_d(x: f64, dx: f64) -> f64 {
    2.0 * dx / (1.0 + x * x)
}

fn scaled(x: f64, k: i32) -> f64 {
    x * f64::from(k)
}

fn scaled_d(_x: f64, k: i32, dx: f64) -> f64 {
    dx * f64::from(k)
}

differential_jvp! {
    /// `extern fn … with d = …`: the companion calls the derivative with the tangents.
    declared_derivatives: fn(x: [f64]) -> f64 {
        sum i { smooth(x[i]) * scaled(x[i], i as i32) }
    }
    with {
        extern fn smooth(x: f64) -> f64 with d = smooth_d;
        extern fn scaled(x: f64, k: i32) -> f64 with d = scaled_d;
    }
    externs (
        extern1("smooth", smooth),
        extern2("smooth_d", smooth_d),
        extern2("scaled", scaled),
        extern3("scaled_d", scaled_d),
    );
    cases [n] in [[0], [1], [9], [2000]];
    args (x = array([n]), d_x = array([n]));
}

differential_jvp! {
    /// Conditional products by `*=`, a third of the factors zero: each factor's tangent times
    /// the product of the others, added by an accum of `+=` where the condition holds.
    scattered_products: fn(idx: [usize], v: [f64], h0: [f64]) -> [f64] {
        accum h = h0 { for k { if v[k] > -0.5 { h[idx[k]] *= if k % 3 == 0 { 0.0 } else { 1.0 + v[k] } } } }
    }
    cases [nnz, m] in [[0, 3], [1, 1], [7, 2], [40, 6], [3000, 200]];
    args (
        idx = array([nnz]).within(0.0, m as f64 - 1.0),
        v = array([nnz]),
        h0 = array([m]),
        d_v = array([nnz]),
        d_h0 = array([m]),
    );
}

differential_jvp! {
    /// An accum mixing `+=` and `*=` on a rank-2 array: the tangent is the dual-number
    /// accumulation, serial like the primal, reading the element each multiplier found.
    mixed_updates: fn(idx: [usize], v: [f64], h0: [[f64]]) -> [[f64]] {
        accum h = h0 {
            for k {
                h[idx[k], k % h0.shape(1)] += v[k];
                if v[k] > -0.5 { h[idx[k], 0] *= if k % 3 == 0 { 0.0 } else { 1.0 + v[k] } }
            }
        }
    }
    cases [nnz, m, w] in [[0, 3, 1], [1, 1, 1], [7, 2, 3], [3000, 20, 4]];
    args (
        idx = array([nnz]).within(0.0, m as f64 - 1.0),
        v = array([nnz]),
        h0 = array([m, w]),
        d_v = array([nnz]),
        d_h0 = array([m, w]),
    );
}

differential_jvp! {
    /// Running products: `prod` over a range that depends on the enclosing index.
    running_products: fn(x: [f64]) -> [f64] {
        for i in 0..x.len() { prod k in 0..i + 1 { if k % 4 == 1 { 0.0 } else { 1.0 + 0.1 * x[k] } } }
    }
    cases [n] in [[0], [1], [6], [300]];
    args (x = array([n]), d_x = array([n]));
}
