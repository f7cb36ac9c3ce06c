//! Contractions: matrix product (f32 and f64), matrix-vector product (alone and in power
//! iteration), batched matrix product, a chain of three matrices, and single-head attention.
//! The crate a user would
//! otherwise pick is ndarray's `dot` / `general_mat_mul` (matrixmultiply, threaded on the run's
//! thread count), or `ndarray-einsum` for the chain; the strongest Rust GEMM, faer's `matmul`,
//! is the yardstick of the products (its own parallelism on the run's pool for one product,
//! one product per task for a batch).

use std::ops::{Add, Mul};
use std::sync::Arc;

use ein::ein;
use ndarray::linalg::general_mat_mul;
use ndarray::{Array2, Array3, ArrayView1, ArrayView2, Axis, Zip};
use rayon::prelude::*;

use crate::harness::{data, Check, Kernel, KernelSpec, Work};

ein! {
    pub fn matmul_f32(a: [[f32]], b: [[f32]]) -> [[f32]] {
        for i, j { sum k { a[i, k] * b[k, j] } }
    }

    pub fn matmul_f64(a: [[f64]], b: [[f64]]) -> [[f64]] {
        for i, j { sum k { a[i, k] * b[k, j] } }
    }

    pub fn matvec(a: [[f32]], x: [f32]) -> [f32] {
        for i { sum j { a[i, j] * x[j] } }
    }

    pub fn vecmat(x: [f32], a: [[f32]]) -> [f32] {
        for j { sum i { x[i] * a[i, j] } }
    }

    /// Power iteration: the state is read over `a`'s columns (checked equal to `v0`'s length,
    /// which every state keeps), so each step's product is a contraction.
    pub fn power_iteration(a: [[f32]], v0: [f32], steps: usize) -> [f32] {
        fold t in 0..steps, v = v0 {
            let w = for i { sum j { a[i, j] * v[j] } };
            let norm = sqrt(sum i { w[i] * w[i] });
            for i { w[i] / norm }
        }
    }

    pub fn batched_matmul(a: [[[f32]]], b: [[[f32]]]) -> [[[f32]]] {
        for n, i, j { sum k { a[n, i, k] * b[n, k, j] } }
    }

    /// `a b c` written as one sum over both inner indices: which pair to multiply first is
    /// the runtime's choice.
    pub fn chain(a: [[f32]], b: [[f32]], c: [[f32]]) -> [[f32]] {
        for i, l { sum j, k { a[i, j] * b[j, k] * c[k, l] } }
    }

    /// softmax(q kᵀ / √d) v, one head.
    pub fn attention(queries: [[f32]], keys: [[f32]], values: [[f32]]) -> [[f32]] {
        let scale = 1.0 / sqrt(queries.shape(1) as f32);
        let scores = for i, j { sum d { queries[i, d] * keys[j, d] } * scale };
        let weights = for i, j {
            let m = max l { scores[i, l] };
            exp(scores[i, j] - m) / sum l { exp(scores[i, l] - m) }
        };
        for i, c { sum j { weights[i, j] * values[j, c] } }
    }

    /// The same with the softmax written inside the row loop, as a user might: each row's
    /// maximum and total, then its weighted sum of value rows.
    pub fn attention_rows(queries: [[f32]], keys: [[f32]], values: [[f32]]) -> [[f32]] {
        let scale = 1.0 / sqrt(queries.shape(1) as f32);
        let scores = for i, j { sum d { queries[i, d] * keys[j, d] } * scale };
        for i {
            let m = max l { scores[i, l] };
            let z = sum l { exp(scores[i, l] - m) };
            for c { sum j { exp(scores[i, j] - m) / z * values[j, c] } }
        }
    }
}

pub fn kernels() -> Vec<KernelSpec> {
    vec![
        KernelSpec { name: "matmul-f32", build: matmul_f32_kernel },
        KernelSpec { name: "matmul-f64", build: matmul_f64_kernel },
        KernelSpec { name: "matvec", build: matvec_kernel },
        KernelSpec { name: "vecmat", build: vecmat_kernel },
        KernelSpec { name: "power-iteration", build: power_iteration_kernel },
        KernelSpec { name: "batched-matmul", build: batched_matmul_kernel },
        KernelSpec { name: "chain", build: chain_kernel },
        KernelSpec { name: "attention", build: attention_kernel },
    ]
}

/// The float types the hand-written contractions are generic over.
pub trait Real: Copy + Default + Send + Sync + Add<Output = Self> + Mul<Output = Self> + 'static {
    const ONE: Self;
}
impl Real for f32 {
    const ONE: f32 = 1.0;
}
impl Real for f64 {
    const ONE: f64 = 1.0;
}

/// `c = a b` by faer for row-major `a` (n×m), `b` (m×p) and `c` (n×p), on `par`.
fn faer_matmul<T: faer::traits::ComplexField + Real>(
    a: &[T],
    b: &[T],
    c: &mut [T],
    (n, m, p): (usize, usize, usize),
    par: faer::Par,
) {
    let (a, b) = (faer::MatRef::from_row_major_slice(a, n, m), faer::MatRef::from_row_major_slice(b, m, p));
    faer::linalg::matmul::matmul(
        faer::MatMut::from_row_major_slice_mut(c, n, p),
        faer::Accum::Replace,
        a,
        b,
        T::ONE,
        par,
    );
}

/// Dot product with sixteen independent accumulators (vectorised by LLVM).
pub fn dot<T: Real>(a: &[T], b: &[T]) -> T {
    let mut lanes = [T::default(); 16];
    let (a_chunks, b_chunks) = (a.chunks_exact(16), b.chunks_exact(16));
    let (a_rest, b_rest) = (a_chunks.remainder(), b_chunks.remainder());
    for (a, b) in a_chunks.zip(b_chunks) {
        for ((lane, &x), &y) in lanes.iter_mut().zip(a).zip(b) {
            *lane = *lane + x * y;
        }
    }
    let mut width = 16;
    while width > 1 {
        width /= 2;
        for lane in 0..width {
            lanes[lane] = lanes[lane] + lanes[lane + width];
        }
    }
    let mut total = lanes[0];
    for (&x, &y) in a_rest.iter().zip(b_rest) {
        total = total + x * y;
    }
    total
}

/// `c_rows = a_rows · b` for a band of rows (`a_rows`: h × m, `b`: m × p, row-major), the
/// i-k-j order over 128 × 256 blocks of `b` so the inner loop is a vectorised row update
/// from a block that stays in L2.
fn matmul_rows<T: Real>(a_rows: &[T], b: &[T], c_rows: &mut [T], m: usize, p: usize) {
    const K_BLOCK: usize = 128;
    const J_BLOCK: usize = 256;
    let height = c_rows.len().checked_div(p).unwrap_or(0);
    for j0 in (0..p).step_by(J_BLOCK) {
        let j1 = (j0 + J_BLOCK).min(p);
        for k0 in (0..m).step_by(K_BLOCK) {
            let k1 = (k0 + K_BLOCK).min(m);
            for row in 0..height {
                let a_row = &a_rows[row * m..(row + 1) * m];
                let c_row = &mut c_rows[row * p + j0..row * p + j1];
                for (k, &a_value) in a_row.iter().enumerate().take(k1).skip(k0) {
                    let b_row = &b[k * p + j0..k * p + j1];
                    for (c, &b_value) in c_row.iter_mut().zip(b_row) {
                        *c = *c + a_value * b_value;
                    }
                }
            }
        }
    }
}

/// `a · b` (n × m by m × p), bands of 16 rows of the result in parallel.
fn matmul_hand<T: Real>(a: &[T], b: &[T], n: usize, m: usize, p: usize) -> Vec<T> {
    const ROWS: usize = 16;
    let mut c = vec![T::default(); n * p];
    if p == 0 || m == 0 {
        return c;
    }
    c.par_chunks_mut(ROWS * p).enumerate().for_each(|(band, c_rows)| {
        let rows = c_rows.len() / p;
        matmul_rows(&a[band * ROWS * m..(band * ROWS + rows) * m], b, c_rows, m, p);
    });
    c
}

fn matmul_kernel<T>(
    quick: bool,
    name: &'static str,
    tolerance: f64,
    ein_variant: fn(&ArrayView2<T>, &ArrayView2<T>) -> ein::Array<T, 2>,
) -> Kernel
where
    T: Real + data_kind::Uniform + ndarray::LinalgScalar + faer::traits::ComplexField,
    Vec<T>: crate::harness::IntoOutput,
    ein::Array<T, 2>: crate::harness::IntoOutput,
    Array2<T>: crate::harness::IntoOutput,
{
    let n: usize = if quick { 128 } else { 1024 };
    let a = Arc::new(T::uniform(11, n * n));
    let b = Arc::new(T::uniform(12, n * n));
    let shape = (n, n);
    let (a1, b1) = (Arc::clone(&a), Arc::clone(&b));
    let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
    let (a3, b3) = (Arc::clone(&a), Arc::clone(&b));
    Kernel::new(name, format!("{n}³ {}", T::NAME), Work::Flops(2.0 * (n * n * n) as f64), Check::Close(tolerance))
        .note("ndarray is `a.dot(&b)`: matrixmultiply with its run-time AVX2/FMA kernels and its `threading` feature on the run's thread count")
        .note("faer is `faer::linalg::matmul::matmul` into a new row-major matrix, `Par::rayon(0)` (the run's pool)")
        .variant("ein", move || ein_variant(&data::view(&a1, shape), &data::view(&b1, shape)))
        .variant("hand", move || matmul_hand(&a2, &b2, n, n, n))
        .variant("ndarray", move || data::view(&a, shape).dot(&data::view(&b, shape)))
        .variant("faer", move || {
            let mut c = vec![T::default(); n * n];
            faer_matmul(&a3, &b3, &mut c, (n, n, n), faer::Par::rayon(0));
            c
        })
}

fn matmul_f32_kernel(quick: bool) -> Kernel {
    matmul_kernel::<f32>(quick, "matmul-f32", 1e-4, |a, b| matmul_f32(a, b))
}

fn matmul_f64_kernel(quick: bool) -> Kernel {
    matmul_kernel::<f64>(quick, "matmul-f64", 1e-11, |a, b| matmul_f64(a, b))
}

fn matvec_kernel(quick: bool) -> Kernel {
    let n: usize = if quick { 512 } else { 4096 };
    let a = Arc::new(data::uniform_f32(13, n * n, -1.0, 1.0));
    let x = Arc::new(data::uniform_f32(14, n, -1.0, 1.0));
    let shape = (n, n);
    let (a1, x1) = (Arc::clone(&a), Arc::clone(&x));
    let (a2, x2) = (Arc::clone(&a), Arc::clone(&x));
    Kernel::new("matvec", format!("{n}² f32"), Work::Bytes(4.0 * (n * n + 2 * n) as f64), Check::Close(1e-4))
        .note("ndarray is `a.dot(&x)` (serial: matrixmultiply has no matrix-vector kernel)")
        .variant("ein", move || matvec(&data::view(&a1, shape), &*x1))
        .variant("hand", move || a2.par_chunks(n).map(|row| dot(row, &x2)).collect::<Vec<f32>>())
        .variant("ndarray", move || data::view(&a, shape).dot(&ArrayView1::from(&x[..])))
}

/// Four steps of power iteration: a matrix-vector product, its norm and a division per step.
fn power_iteration_kernel(quick: bool) -> Kernel {
    let (n, steps): (usize, usize) = if quick { (256, 4) } else { (2048, 4) };
    let a = Arc::new(data::uniform_f32(20, n * n, -1.0, 1.0));
    let v0 = Arc::new(data::uniform_f32(21, n, -1.0, 1.0));
    let shape = (n, n);
    let (a1, v1) = (Arc::clone(&a), Arc::clone(&v0));
    let work = Work::Bytes(4.0 * (steps * (n * n + 3 * n)) as f64);
    Kernel::new("power-iteration", format!("{n}² f32, {steps} steps"), work, Check::Close(1e-4))
        .note("hand: per step rayon over rows (`dot`), then the norm and the division")
        .variant("ein", move || power_iteration(&data::view(&a1, shape), &*v1, steps))
        .variant("hand", move || {
            let mut v = v0.to_vec();
            for _ in 0..steps {
                let w: Vec<f32> = a.par_chunks(n).map(|row| dot(row, &v)).collect();
                let norm = w.iter().map(|value| value * value).sum::<f32>().sqrt();
                v = w.into_iter().map(|value| value / norm).collect();
            }
            v
        })
}

/// `x A` of a row-major A: the sum runs down A's columns. The hand-written version gives each
/// task a block of A's rows and adds the tasks' partial vectors.
fn vecmat_kernel(quick: bool) -> Kernel {
    let n: usize = if quick { 512 } else { 4096 };
    let a = Arc::new(data::uniform_f32(13, n * n, -1.0, 1.0));
    let x = Arc::new(data::uniform_f32(14, n, -1.0, 1.0));
    let shape = (n, n);
    let (a1, x1) = (Arc::clone(&a), Arc::clone(&x));
    let (a2, x2) = (Arc::clone(&a), Arc::clone(&x));
    let rows_per_task = 64;
    Kernel::new("vecmat", format!("{n}² f32"), Work::Bytes(4.0 * (n * n + 2 * n) as f64), Check::Close(1e-4))
        .note("ndarray is `x.dot(&a)` (serial)")
        .variant("ein", move || vecmat(&*x1, &data::view(&a1, shape)))
        .variant("hand", move || {
            a2.par_chunks(n * rows_per_task)
                .zip(x2.par_chunks(rows_per_task))
                .map(|(rows, x)| {
                    let mut sums = vec![0.0f32; n];
                    for (row, &factor) in rows.chunks(n).zip(x) {
                        sums.iter_mut().zip(row).for_each(|(sum, value)| *sum += factor * value);
                    }
                    sums
                })
                .reduce(
                    || vec![0.0f32; n],
                    |mut total, part| {
                        total.iter_mut().zip(&part).for_each(|(sum, value)| *sum += value);
                        total
                    },
                )
        })
        .variant("ndarray", move || ArrayView1::from(&x[..]).dot(&data::view(&a, shape)))
}

fn batched_matmul_kernel(quick: bool) -> Kernel {
    let (batches, n): (usize, usize) = if quick { (8, 64) } else { (64, 128) };
    let a = Arc::new(data::uniform_f32(15, batches * n * n, -1.0, 1.0));
    let b = Arc::new(data::uniform_f32(16, batches * n * n, -1.0, 1.0));
    let shape = (batches, n, n);
    let (a1, b1) = (Arc::clone(&a), Arc::clone(&b));
    let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
    let (a3, b3) = (Arc::clone(&a), Arc::clone(&b));
    Kernel::new(
        "batched-matmul",
        format!("{batches} × {n}³ f32"),
        Work::Flops(2.0 * (batches * n * n * n) as f64),
        Check::Close(1e-4),
    )
    .note("ndarray is `general_mat_mul` per batch in a `Zip::par_for_each` over the batch axis")
    .note("faer is `faer::linalg::matmul::matmul` per batch (`Par::Seq`), one batch per rayon task, into a new array")
    .variant("ein", move || batched_matmul(&data::view(&a1, shape), &data::view(&b1, shape)))
    .variant("hand", move || {
        let mut c = vec![0.0f32; batches * n * n];
        c.par_chunks_mut(n * n).enumerate().for_each(|(batch, c)| {
            matmul_rows(&a2[batch * n * n..(batch + 1) * n * n], &b2[batch * n * n..(batch + 1) * n * n], c, n, n);
        });
        c
    })
    .variant("faer", move || {
        let mut c = vec![0.0f32; batches * n * n];
        c.par_chunks_mut(n * n).enumerate().for_each(|(batch, c)| {
            let (a, b) = (&a3[batch * n * n..(batch + 1) * n * n], &b3[batch * n * n..(batch + 1) * n * n]);
            faer_matmul(a, b, c, (n, n, n), faer::Par::Seq);
        });
        c
    })
    .variant("ndarray", move || {
        let (a, b) = (data::view(&a, shape), data::view(&b, shape));
        let mut c = Array3::<f32>::zeros((batches, n, n));
        Zip::from(c.axis_iter_mut(Axis(0))).and(a.axis_iter(Axis(0))).and(b.axis_iter(Axis(0))).par_for_each(
            |mut c, a, b| {
                general_mat_mul(1.0, &a, &b, 0.0, &mut c);
            },
        );
        c
    })
}

/// Attention by hand: per query row, the scores, their softmax and the weighted sum of
/// value rows in one pass over a scratch row; rows in parallel.
fn attention_hand(q: &[f32], k: &[f32], v: &[f32], n: usize, d: usize) -> Vec<f32> {
    let scale = 1.0 / (d as f32).sqrt();
    let mut out = vec![0.0f32; n * d];
    if d == 0 {
        return out;
    }
    out.par_chunks_mut(d).enumerate().for_each_init(
        || vec![0.0f32; n],
        |scores, (i, out_row)| {
            let q_row = &q[i * d..(i + 1) * d];
            for (j, score) in scores.iter_mut().enumerate() {
                *score = dot(q_row, &k[j * d..(j + 1) * d]) * scale;
            }
            let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            for score in scores.iter_mut() {
                *score = (*score - max).exp();
            }
            let total = crate::rows::sum(scores);
            for (j, &weight) in scores.iter().enumerate() {
                for (out, &value) in out_row.iter_mut().zip(&v[j * d..(j + 1) * d]) {
                    *out += weight * value;
                }
            }
            let inverse = 1.0 / total;
            for out in out_row.iter_mut() {
                *out *= inverse;
            }
        },
    );
    out
}

/// `a b c` for `a`, `b`: n × n and `c`: n × w with w small, where multiplying `b c` first
/// costs about n/w times fewer flops than `(a b) c`.
fn chain_kernel(quick: bool) -> Kernel {
    let (n, w): (usize, usize) = if quick { (128, 8) } else { (1024, 16) };
    let a = Arc::new(data::uniform_f32(21, n * n, -1.0, 1.0));
    let b = Arc::new(data::uniform_f32(22, n * n, -1.0, 1.0));
    let c = Arc::new(data::uniform_f32(23, n * w, -1.0, 1.0));
    let (square, thin) = ((n, n), (n, w));
    let (a1, b1, c1) = (Arc::clone(&a), Arc::clone(&b), Arc::clone(&c));
    let (a2, b2, c2) = (Arc::clone(&a), Arc::clone(&b), Arc::clone(&c));
    // The flops of the good order, a (b c): what every variant could get away with.
    let flops = 4.0 * (n * n * w) as f64;
    Kernel::new("chain", format!("{n}² · {n}² · {n}×{w} f32"), Work::Flops(flops), Check::Close(1e-4))
        .note("rate counts the flops of the cheap order a (b c); hand is ndarray `a.dot(&b.dot(&c))`, the order chosen by hand; ndarray is `ndarray_einsum::einsum(\"ij,jk,kl->il\")`")
        .variant("ein", move || chain(&data::view(&a1, square), &data::view(&b1, square), &data::view(&c1, thin)))
        .variant("hand", move || {
            let (a, b, c) = (data::view::<f32, _, ndarray::Ix2>(&a2, square), data::view(&b2, square), data::view(&c2, thin));
            a.dot(&b.dot(&c))
        })
        .variant("ndarray", move || {
            let (a, b, c) = (data::view::<f32, _, ndarray::Ix2>(&a, square), data::view(&b, square), data::view(&c, thin));
            ndarray_einsum::einsum("ij,jk,kl->il", &[&a, &b, &c]).expect("a valid einsum")
        })
}

fn attention_kernel(quick: bool) -> Kernel {
    let (n, d): (usize, usize) = if quick { (128, 64) } else { (1024, 64) };
    let q = Arc::new(data::uniform_f32(17, n * d, -1.0, 1.0));
    let k = Arc::new(data::uniform_f32(18, n * d, -1.0, 1.0));
    let v = Arc::new(data::uniform_f32(19, n * d, -1.0, 1.0));
    let shape = (n, d);
    let (q1, k1, v1) = (Arc::clone(&q), Arc::clone(&k), Arc::clone(&v));
    let (q2, k2, v2) = (Arc::clone(&q), Arc::clone(&k), Arc::clone(&v));
    let (q3, k3, v3) = (Arc::clone(&q), Arc::clone(&k), Arc::clone(&v));
    Kernel::new("attention", format!("n={n} d={d} f32"), Work::Flops(4.0 * (n * n * d) as f64), Check::Close(1e-4))
        .note("rate counts the two products (4·n²·d flops), not the n² exponentials; ein-rows is the softmax written inside the row loop; ndarray is `q.dot(&k.t())`, a row softmax in `Zip::par_for_each`, then `.dot(&v)`")
        .variant("ein", move || attention(&data::view(&q1, shape), &data::view(&k1, shape), &data::view(&v1, shape)))
        .variant("ein-rows", move || {
            attention_rows(&data::view(&q3, shape), &data::view(&k3, shape), &data::view(&v3, shape))
        })
        .variant("hand", move || attention_hand(&q2, &k2, &v2, n, d))
        .variant("ndarray", move || {
            let (q, k, v) = (data::view(&q, shape), data::view(&k, shape), data::view(&v, shape));
            let mut scores = q.dot(&k.t());
            scores *= 1.0 / (d as f32).sqrt();
            Zip::from(scores.rows_mut()).par_for_each(|mut row| {
                let max = row.fold(f32::NEG_INFINITY, |max, &x| max.max(x));
                row.mapv_inplace(|x| (x - max).exp());
                let total = row.sum();
                row /= total;
            });
            scores.dot(&v)
        })
}

/// Random inputs of either float type.
mod data_kind {
    use crate::harness::data;

    pub trait Uniform: Sized {
        const NAME: &'static str;
        fn uniform(seed: u64, len: usize) -> Vec<Self>;
    }

    impl Uniform for f32 {
        const NAME: &'static str = "f32";
        fn uniform(seed: u64, len: usize) -> Vec<f32> {
            data::uniform_f32(seed, len, -1.0, 1.0)
        }
    }

    impl Uniform for f64 {
        const NAME: &'static str = "f64";
        fn uniform(seed: u64, len: usize) -> Vec<f64> {
            data::uniform_f64(seed, len, -1.0, 1.0)
        }
    }
}
