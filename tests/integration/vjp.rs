//! Differential tests of `#[vjp]` and `#[grad]` companions (reverse-mode derivatives): each
//! program is compiled with `#[vjp(run_vjp)]` or `#[grad(run_vjp)]`, and `run_vjp` must give what
//! the interpreter gives for the companion, which must be the transpose of the primal's dual
//! numbers (⟨adjoints, t⟩ = ⟨cotangent, tangent(t)⟩ for random tangents `t`), in every layout.

use crate::harness::{array, scalar};

differential_vjp! {
    /// The loss of a logistic regression and its gradient: a matrix–vector product both ways.
    grad logistic_loss: fn(x: [[f64]], y: [f64], w: [f64], lambda: f64) -> f64 {
        let p = for i { 1.0 / (1.0 + exp(-sum k { x[i, k] * w[k] })) };
        -sum i { y[i] * ln(p[i]) + (1.0 - y[i]) * ln(1.0 - p[i]) } / (y.len() as f64)
            + lambda * sum k { w[k] * w[k] }
    }
    cases [n, d] in [[1, 1], [5, 3], [300, 8]];
    args (x = array([n, d]), y = array([n]).within(0.0, 1.0), w = array([d]), lambda = scalar(0.1));
}

differential_vjp! {
    vjp softmax: fn(x: [[f64]]) -> [[f64]] {
        for i, j {
            let m = max k { x[i, k] };
            exp(x[i, j] - m) / sum k { exp(x[i, k] - m) }
        }
    }
    cases [m, n] in [[0, 3], [1, 1], [3, 0], [4, 7], [33, 70]];
    args (x = array([m, n]), cotangent = array([m, n]));
}

differential_vjp! {
    vjp matmul_f32: fn(a: [[f32]], b: [[f32]]) -> [[f32]] { for i, j { sum k { a[i, k] * b[k, j] } } }
    cases [m, k, n] in [[0, 2, 3], [1, 1, 1], [3, 4, 5], [40, 30, 20]];
    args (a = array([m, k]), b = array([k, n]), cotangent = array([m, n]));
}

differential_vjp! {
    /// Clamped reads at the edges send the adjoint to the element actually read.
    vjp blur: fn(img: [[f64]]) -> [[f64]] {
        for i, j { (img[i - 1, j] + img[i + 1, j] + img[i, j - 1] + img[i, j + 1] + 4.0 * img[i, j]) / 8.0 }
    }
    cases [h, w] in [[1, 1], [2, 5], [9, 7], [64, 40]];
    args (img = array([h, w]), cotangent = array([h, w]));
}

differential_vjp! {
    /// Shifted clamped reads along either axis, by more than some axes' lengths: the adjoint
    /// gathers at `p - c` and adds the steps that clamped at the edge apart. The term of
    /// `a[i - 1, j]` holds an integer division, so it is evaluated at a step the primal took.
    vjp shifted_gathers: fn(a: [[f64]], k: [i64]) -> [[f64]] {
        for i, j {
            a[i + 2, j] * 3.0 + a[i, j - 3] * a[i, j] + a[i - 1, j] * ((k[j] / (k[j] * k[j] + 1)) as f64 + 0.5)
        }
    }
    cases [h, w] in [[0, 3], [3, 0], [1, 1], [2, 5], [3, 2], [9, 7], [40, 33]];
    args (a = array([h, w]), k = array([w]).within(-3.0, 3.0), cotangent = array([h, w]));
}

differential_vjp! {
    /// A two-layer network's loss: a gather through labels, `tanh`, a softmax cross-entropy.
    grad mlp_loss: fn(x: [[f64]], labels: [usize], w1: [[f64]], w2: [[f64]]) -> f64 {
        let h = for b, j { tanh(sum k { x[b, k] * w1[k, j] }) };
        let logits = for b, c { sum j { h[b, j] * w2[j, c] } };
        sum b {
            let m = max c { logits[b, c] };
            m + ln(sum c { exp(logits[b, c] - m) }) - logits[b, labels[b]]
        }
    }
    cases [n, d, hidden, classes] in [[1, 1, 1, 2], [4, 3, 5, 3], [32, 10, 8, 4]];
    args (
        x = array([n, d]),
        labels = array([n]).within(0.0, classes as f64 - 1.0),
        w1 = array([d, hidden]),
        w2 = array([hidden, classes]),
    );
}

differential_vjp! {
    /// Records, `if`, `min`, `prod` and a gather through an argmax.
    grad records_and_choices: fn(x: [f64], y: [f64]) -> f64 {
        let best = argmax i { x[i] * y[i] };
        let r = { lo: min i { x[i] - y[i] }, hi: prod i { 1.0 + 0.1 * x[i] } };
        let s = for i { if x[i] > 0.0 { tanh(x[i]) * y[i] } else { sin(y[i]) / (1.0 + x[i] * x[i]) } };
        r.lo * r.hi + sum i { s[i] * s[i] } + x[best] * sqrt(abs(y[best]) + 1.0)
    }
    cases [n] in [[1], [2], [9], [1000]];
    args (x = array([n]), y = array([n]));
}

differential_vjp! {
    /// Exponential smoothing as a scan: its states' cotangents flow back through every step.
    vjp smoothing_scan: fn(x: [f64], alpha: f64) -> [f64] {
        scan t in 0..x.len(), s = x[0] { alpha * s + (1.0 - alpha) * x[t] }
    }
    cases [n] in [[1], [2], [7], [300]];
    args (x = array([n]), alpha = scalar(0.8), cotangent = array([n]));
}

differential_vjp! {
    /// A fold with a tuple state (a complex recurrence), differentiated by both parameters.
    grad complex_recurrence: fn(cr: f64, ci: f64, steps: usize) -> f64 {
        let z = fold t in 0..steps, (re, im) = (0.0, 0.0) {
            (0.5 * (re * re - im * im) + cr, re * im + ci)
        };
        z.0 * z.0 + z.1 * z.1
    }
    cases [steps] in [[0], [1], [3], [20]];
    args (cr = scalar(0.3), ci = scalar(-0.2), steps = scalar(steps));
}

differential_vjp! {
    /// A fold per element, reading a weight per step: the weights' adjoints come from every
    /// element's every step.
    vjp fold_per_element: fn(x: [f64], w: [f64]) -> [f64] {
        for i { fold t in 0..w.len(), y = x[i] { y - 0.1 * sin(y) * w[t] } }
    }
    cases [n, k] in [[0, 3], [1, 1], [4, 0], [5, 6], [200, 9]];
    args (x = array([n]), w = array([k]), cotangent = array([n]));
}

differential_vjp! {
    /// Heat diffusion on a grid, hotspot's stencil as a fold: the adjoint runs backwards over
    /// the saved grids (clamped neighbours at the edges), and the power map's gradient sums
    /// every step's.
    vjp diffusion_fold: fn(temp: [[f64]], power: [[f64]], steps: usize, k: f64) -> [[f64]] {
        fold t in 0..steps, g = temp {
            for i, j {
                let c = g[i, j];
                c + k * (power[i, j] + g[i + 1, j] + g[i - 1, j] + g[i, j + 1] + g[i, j - 1] - 4.0 * c)
            }
        }
    }
    cases [h, w, steps] in [[1, 1, 1], [0, 3, 2], [3, 4, 0], [5, 6, 3], [40, 30, 5]];
    args (
        temp = array([h, w]),
        power = array([h, w]),
        steps = scalar(steps),
        k = scalar(0.1),
        cotangent = array([h, w]),
    );
}

differential_vjp! {
    /// A sparse matrix–vector product (COO) by `accum`: the values' adjoints are the cotangent
    /// gathered at their rows times `x` at their columns, `x`'s and the target's come through.
    vjp coo_matvec: fn(rows: [i64], cols: [i64], values: [f64], x: [f64], y0: [f64]) -> [f64] {
        accum y = y0 { for k { if values[k] != 0.0 { y[rows[k]] += values[k] * x[cols[k]] } } }
    }
    cases [nnz, m, n] in [[0, 0, 3], [0, 3, 2], [1, 1, 1], [40, 6, 5], [3000, 200, 100]];
    args (
        rows = array([nnz]).within(0.0, m.max(1) as f64 - 1.0),
        cols = array([nnz]).within(0.0, n.max(1) as f64 - 1.0),
        values = array([nnz]),
        x = array([n]),
        y0 = array([m]),
        cotangent = array([m]),
    );
}

differential_vjp! {
    /// The product with a CSR matrix's transpose by `accum`, whose inner loop's range is the
    /// row's count: the adjoints run back through loops of varying length (`*=` mixed with `+=`
    /// would need a history, one axis per loop, and is refused for such loops).
    vjp csr_transpose_product: fn(counts: [i64], cols: [i64], vals: [f64], x: [f64], y0: [f64]) -> [f64] {
        let ends = scan t, e = 0 { e + counts[t] };
        accum y = y0 {
            for r { for k in 0..counts[r] { y[cols[ends[r] - counts[r] + k]] += vals[ends[r] - counts[r] + k] * x[r] } }
        }
    }
    cases [rows, nnz, n] in [[0, 1, 2], [1, 1, 1], [6, 12, 5], [300, 700, 90]];
    args (
        counts = array([rows]).within(0.0, 4.0),
        cols = array([nnz]).within(0.0, n as f64 - 1.0),
        vals = array([nnz]),
        x = array([rows]),
        y0 = array([n]),
        cotangent = array([n]),
    );
}

differential_vjp! {
    /// A filter's kept elements get the cotangent at their rank among the kept; the dropped
    /// ones nothing. (The condition is on the index so that the cotangent's length is known
    /// here; the property test has filters on values.)
    vjp filter_even: fn(x: [f64], w: [f64]) -> [f64] {
        for i where i % 2 == 0 { x[i] * w[i] + sin(w[i]) }
    }
    cases [n] in [[0], [1], [9], [5000]];
    args (x = array([n]), w = array([n]), cotangent = array([n.div_ceil(2)]));
}

differential_vjp! {
    /// Triangular reductions in loops whose ranges depend on the loop around them (a
    /// strictly lower-triangular sum, a product over a growing prefix in a scan, a nested
    /// triangle under a `max`): reverse mode keeps their inner sums in place rather than
    /// lifting them into arrays whose length would change with the enclosing index.
    grad triangles_in_loops: fn(x: [f64], m: [[f64]]) -> f64 {
        let s = scan t in 0..x.len(), a = 0.0 { a + prod j in 0..t + 1 { sum k { m[k, 0] } * x[j] } };
        let p = for i in 0..x.len() { max j in 0..i + 1 { let q = sum k in 0..j { x[k] * m[k, j] }; q * (j as f64) } };
        sum i in 0..x.len() { sum j in 0..i { x[j] * x[j] * (i as f64) } } + sum t { s[t] * 0.5 + p[t] }
    }
    cases [n] in [[0], [1], [2], [5], [40]];
    args (x = array([n]).within(0.5, 1.5), m = array([n, n.max(1)]));
}

differential_vjp! {
    /// Prefix sums of weighted gathers: a reduction whose range depends on the enclosing index
    /// around a gather, so the adjoints are accumulated by loops whose length changes with `i`.
    vjp prefix_gather: fn(x: [f64], w: [f64], idx: [usize]) -> [f64] {
        for i in 0..w.len() { sum k in 0..i + 1 { w[k] * x[idx[k]] } }
    }
    cases [n, m] in [[0, 3], [1, 1], [5, 3], [300, 40]];
    args (
        x = array([m]),
        w = array([n]),
        idx = array([n]).within(0.0, m as f64 - 1.0),
        cotangent = array([n]),
    );
}

differential_vjp! {
    /// A sparse matrix–vector product in CSR form (the row starts a prefix sum of the row
    /// lengths): `x`'s adjoint scatters through the columns of rows of varying length.
    vjp csr_matvec: fn(counts: [usize], cols: [usize], values: [f64], x: [f64]) -> [f64] {
        let ends = scan t, e = 0 { e + counts[t] };
        for i {
            let start = ends[i] - counts[i];
            sum k in 0..counts[i] { values[start + k as usize] * x[cols[start + k as usize]] }
        }
    }
    cases [rows, nnz, n] in [[0, 1, 2], [1, 1, 1], [6, 12, 5], [200, 500, 90]];
    args (
        counts = array([rows]).within(0.0, 4.0),
        cols = array([nnz]).within(0.0, n as f64 - 1.0),
        values = array([nnz]),
        x = array([n]),
        cotangent = array([rows]),
    );
}

differential_vjp! {
    /// An array of records (points from polar coordinates) read at each index and its
    /// neighbour: its adjoint is built field by field and read back by the comprehension.
    vjp shoelace_terms: fn(r: [f64], theta: [f64]) -> [f64] {
        let p = for i { { x: r[i] * cos(theta[i]), y: r[i] * sin(theta[i]) } };
        for i {
            let q = p[(i + 1) % p.len()];
            p[i].x * q.y - p[i].y * q.x
        }
    }
    cases [n] in [[1], [2], [7], [500]];
    args (r = array([n]), theta = array([n]), cotangent = array([n]));
}

differential_vjp! {
    /// A filter whose elements are tuples: each kept pair's parts get their cotangents.
    grad filtered_pairs: fn(x: [f64], w: [f64]) -> f64 {
        let kept = for i where x[i] > 0.0 { (x[i] * w[i], exp(w[i] * 0.5)) };
        sum k { kept[k].0 * kept[k].1 }
    }
    cases [n] in [[0], [1], [9], [2000]];
    args (x = array([n]), w = array([n]));
}

differential_vjp! {
    /// Products by `*=`, a third of the factors zero (so elements with one zero factor and with
    /// several): each factor's adjoint is the cotangent times the product of the others.
    vjp scattered_products: fn(idx: [usize], v: [f64], h0: [f64]) -> [f64] {
        accum h = h0 { for k { h[idx[k]] *= if k % 3 == 0 { 0.0 * v[k] } else { v[k] } } }
    }
    cases [nnz, m] in [[0, 3], [1, 1], [7, 2], [40, 6], [3000, 200]];
    args (
        idx = array([nnz]).within(0.0, m as f64 - 1.0),
        v = array([nnz]),
        h0 = array([m]),
        cotangent = array([m]),
    );
}

differential_vjp! {
    /// An accum mixing `+=` and `*=` on one array, serial in its loops' order (a Horner-like
    /// recurrence per bucket over two loops, some multipliers zero, some conditional): an added
    /// value's adjoint is the cotangent times the product of the multipliers after it, a
    /// multiplier's that times the element it found.
    vjp mixed_updates: fn(idx: [usize], a: [[f64]], m: [f64], h0: [f64]) -> [f64] {
        accum h = h0 {
            for k, j {
                if a[k, j] > -0.5 { h[idx[k]] *= if k % 4 == 1 { 0.0 } else { m[k] } };
                h[(idx[k] as i64 + j) % h0.len()] += a[k, j] * m[k]
            }
        }
    }
    cases [n, d, len] in [[0, 2, 3], [1, 1, 1], [3, 0, 2], [7, 3, 2], [300, 4, 40]];
    args (
        idx = array([n]).within(0.0, len as f64 - 1.0),
        a = array([n, d]),
        m = array([n]),
        h0 = array([len]),
        cotangent = array([len]),
    );
}

differential_vjp! {
    /// Particles as an array of records stepped by a fold: the tape keeps each step's positions
    /// and velocities (one tape per field), and the adjoint runs back over them to the initial
    /// state and the spring constant.
    vjp particles: fn(x0: [f64], v0: [f64], k: f64, steps: usize) -> [f64] {
        let start = for i { { x: x0[i], v: v0[i] } };
        let end = fold t in 0..steps, ps = start {
            for i {
                let pull = ps[(i + 1) % ps.len()].x - ps[i].x;
                let a = -k * sin(ps[i].x) + 0.1 * pull;
                { x: ps[i].x + 0.1 * ps[i].v, v: ps[i].v + 0.1 * a }
            }
        };
        for i { end[i].x * end[i].v }
    }
    cases [n, steps] in [[0, 2], [1, 0], [1, 3], [5, 4], [200, 10]];
    args (x0 = array([n]), v0 = array([n]), k = scalar(0.5), steps = scalar(steps), cotangent = array([n]));
}

differential_vjp! {
    /// Gradient descent with momentum as a fold whose state is a tuple holding arrays (the
    /// point and its velocity) and a scalar (the decaying step): the tape keeps every part of
    /// every state, and the adjoint runs back to the start, the target and the rate.
    vjp momentum_descent: fn(x0: [f64], target: [f64], rate: f64, steps: usize) -> [f64] {
        let end = fold t in 0..steps, (x, v, lr) = (x0, for i { 0.0 * x0[i] }, rate) {
            let g = for i { sin(x[i] - target[i]) + 0.1 * x[i] * x[i] };
            let v2 = for i { 0.9 * v[i] + g[i] };
            (for i { x[i] - lr * v2[i] }, v2, lr * 0.95)
        };
        for i { end.0[i] * end.1[i] + end.2 }
    }
    cases [n, steps] in [[0, 2], [1, 0], [1, 3], [4, 5], [300, 12]];
    args (
        x0 = array([n]),
        target = array([n]),
        rate = scalar(0.1),
        steps = scalar(steps),
        cotangent = array([n]),
    );
}
