//! Derivatives: a loss and its `#[grad]` companion, each timed against a hand-written gradient
//! (rayon; ndarray `dot` for the matrix products; for hotspot, the adjoint stencil run
//! backwards). The run ends by printing what the gradient costs next to the loss alone, for
//! ein and for the hand-written code (`gradient_costs`).

use std::sync::Arc;

use ein::ein;
use ndarray::{Array1, Array2, ArrayView2, Axis};
use rayon::prelude::*;

use crate::harness::{data, Check, IntoOutput, Kernel, KernelResult, KernelSpec, Output, Work, EIN, REFERENCE};
use crate::stencils::{hotspot_hand, hotspot_step, Hotspot};

ein! {
    /// The mean log-loss of a logistic regression with an L2 penalty.
    #[grad(logistic_loss_grad, wrt(w))]
    pub fn logistic_loss(x: [[f64]], y: [f64], w: [f64], lambda: f64) -> f64 {
        let p = for i { 1.0 / (1.0 + exp(-sum k { x[i, k] * w[k] })) };
        -sum i { y[i] * ln(p[i]) + (1.0 - y[i]) * ln(1.0 - p[i]) } / (y.len() as f64)
            + lambda * sum k { w[k] * w[k] }
    }

    /// A two-layer network's mean softmax cross-entropy: `tanh` hidden layer, biases.
    #[grad(mlp_loss_grad, wrt(w1, b1, w2, b2))]
    pub fn mlp_loss(x: [[f32]], labels: [usize], w1: [[f32]], b1: [f32], w2: [[f32]], b2: [f32]) -> f32 {
        let h = for b, j { tanh(sum k { x[b, k] * w1[k, j] } + b1[j]) };
        let logits = for b, c { sum j { h[b, j] * w2[j, c] } + b2[c] };
        sum b {
            let m = max c { logits[b, c] };
            m + ln(sum c { exp(logits[b, c] - m) }) - logits[b, labels[b]]
        } / (labels.len() as f32)
    }

    /// How far hotspot's temperatures after `iterations` steps are from a target map.
    #[grad(hotspot_misfit_grad, wrt(temp))]
    #[allow(clippy::too_many_arguments)]
    pub fn hotspot_misfit(
        temp: [[f32]],
        power: [[f32]],
        target: [[f32]],
        iterations: usize,
        step_div_cap: f32,
        rx_1: f32,
        ry_1: f32,
        rz_1: f32,
        ambient: f32,
    ) -> f32 {
        let out = fold t in 0..iterations, tmp = temp {
            for i, j {
                let c = tmp[i, j];
                c + step_div_cap * (power[i, j]
                    + (tmp[i + 1, j] + tmp[i - 1, j] - 2.0 * c) * ry_1
                    + (tmp[i, j + 1] + tmp[i, j - 1] - 2.0 * c) * rx_1
                    + (ambient - c) * rz_1)
            }
        };
        sum i, j { (out[i, j] - target[i, j]) * (out[i, j] - target[i, j]) }
    }
}

pub fn kernels() -> Vec<KernelSpec> {
    vec![
        KernelSpec { name: "logistic-loss", build: logreg_loss_kernel },
        KernelSpec { name: "logistic-grad", build: logreg_grad_kernel },
        KernelSpec { name: "mlp-loss", build: mlp_loss_kernel },
        KernelSpec { name: "mlp-grad", build: mlp_grad_kernel },
        KernelSpec { name: "hotspot-loss", build: hotspot_loss_kernel },
        KernelSpec { name: "hotspot-grad", build: hotspot_grad_kernel },
    ]
}

/// The gradient kernels and the loss each is judged against.
const PAIRS: [(&str, &str); 3] =
    [("logistic-grad", "logistic-loss"), ("mlp-grad", "mlp-loss"), ("hotspot-grad", "hotspot-loss")];

/// For each gradient kernel whose loss ran too: the gradient's median over the loss's, for
/// ein and for the hand-written code, as report lines.
pub fn gradient_costs(results: &[KernelResult]) -> Vec<String> {
    let median = |kernel: &str, variant: &str| {
        let result = results.iter().find(|result| result.name == kernel)?;
        Some(result.variant(variant)?.summary?.median)
    };
    PAIRS
        .iter()
        .filter_map(|&(grad, loss)| {
            let ein = median(grad, EIN)? / median(loss, EIN)?;
            let hand = median(grad, REFERENCE)? / median(loss, REFERENCE)?;
            Some(format!("gradient cost: {grad} takes {ein:.2}× {loss} in ein ({hand:.2}× hand-written)"))
        })
        .collect()
}

struct Logistic {
    x: Vec<f64>,
    y: Vec<f64>,
    w: Vec<f64>,
    lambda: f64,
    d: usize,
}

impl Logistic {
    fn new(quick: bool) -> Logistic {
        let (n, d) = if quick { (1 << 14, 64) } else { (1 << 20, 64) };
        let y = data::uniform_f64(62, n, 0.0, 1.0).into_iter().map(|u| if u < 0.5 { 0.0 } else { 1.0 }).collect();
        Logistic {
            x: data::uniform_f64(61, n * d, -1.0, 1.0),
            y,
            w: data::uniform_f64(63, d, -0.2, 0.2),
            lambda: 1e-3,
            d,
        }
    }

    fn size(&self) -> String {
        format!("n {}, d {} f64", self.y.len(), self.d)
    }

    fn ein_x(&self) -> ArrayView2<'_, f64> {
        data::view(&self.x, (self.y.len(), self.d))
    }
}

/// One row's log-loss term and `p - y` (the derivative of the term by the row's score).
fn logistic_row(row: &[f64], y: f64, w: &[f64]) -> (f64, f64) {
    let score = crate::linear_algebra::dot(row, w);
    let p = 1.0 / (1.0 + (-score).exp());
    (-(y * p.ln() + (1.0 - y) * (1.0 - p).ln()), p - y)
}

const ROWS_PER_TASK: usize = 256;

fn logistic_loss_hand(input: &Logistic) -> f64 {
    let d = input.d;
    let total: f64 = input
        .x
        .par_chunks(d * ROWS_PER_TASK)
        .zip(input.y.par_chunks(ROWS_PER_TASK))
        .map(|(rows, ys)| rows.chunks_exact(d).zip(ys).map(|(row, &y)| logistic_row(row, y, &input.w).0).sum::<f64>())
        .sum();
    let penalty: f64 = input.w.iter().map(|w| w * w).sum();
    total / input.y.len() as f64 + input.lambda * penalty
}

/// The loss and its gradient by `w`: per task a partial gradient `Σ (p - y) x_i`, summed.
fn logistic_grad_hand(input: &Logistic) -> (f64, Vec<f64>) {
    let (d, n) = (input.d, input.y.len() as f64);
    let (total, mut gradient) = input
        .x
        .par_chunks(d * ROWS_PER_TASK)
        .zip(input.y.par_chunks(ROWS_PER_TASK))
        .map(|(rows, ys)| {
            let mut gradient = vec![0.0; d];
            let mut total = 0.0;
            for (row, &y) in rows.chunks_exact(d).zip(ys) {
                let (term, residual) = logistic_row(row, y, &input.w);
                total += term;
                for (g, &x) in gradient.iter_mut().zip(row) {
                    *g += residual * x;
                }
            }
            (total, gradient)
        })
        .reduce(
            || (0.0, vec![0.0; d]),
            |(left, mut sum), (right, part)| {
                sum.iter_mut().zip(&part).for_each(|(s, p)| *s += p);
                (left + right, sum)
            },
        );
    let penalty: f64 = input.w.iter().map(|w| w * w).sum();
    for (g, &w) in gradient.iter_mut().zip(&input.w) {
        *g = *g / n + 2.0 * input.lambda * w;
    }
    (total / n + input.lambda * penalty, gradient)
}

fn logreg_loss_kernel(quick: bool) -> Kernel {
    let input = Arc::new(Logistic::new(quick));
    let (first, second) = (Arc::clone(&input), Arc::clone(&input));
    let bytes = (input.x.len() * 8) as f64;
    Kernel::new("logistic-loss", input.size(), Work::Bytes(bytes), Check::Close(1e-9))
        .note("the loss alone, the baseline of logistic-grad; rate: x read once")
        .variant("ein", move || {
            let q = &*first;
            logistic_loss(&q.ein_x(), &q.y, &q.w, q.lambda)
        })
        .variant("hand", move || logistic_loss_hand(&second))
}

fn logreg_grad_kernel(quick: bool) -> Kernel {
    let input = Arc::new(Logistic::new(quick));
    let (first, second) = (Arc::clone(&input), Arc::clone(&input));
    let bytes = (input.x.len() * 8) as f64;
    Kernel::new("logistic-grad", input.size(), Work::Bytes(bytes), Check::Close(1e-9))
        .note("loss and gradient by w (#[grad(.., wrt(w))]); hand: one pass, per-task partial gradients; rate: x read once")
        .variant("ein", move || {
            let q = &*first;
            let (loss, gradient) = logistic_loss_grad(&q.ein_x(), &q.y, &q.w, q.lambda);
            (loss, gradient)
        })
        .variant("hand", move || logistic_grad_hand(&second))
}

struct Mlp {
    x: Array2<f32>,
    labels: Vec<usize>,
    w1: Array2<f32>,
    b1: Array1<f32>,
    w2: Array2<f32>,
    b2: Array1<f32>,
}

impl Mlp {
    fn new(quick: bool) -> Mlp {
        let (batch, inputs, hidden, classes) = if quick { (64, 784, 256, 10) } else { (1024, 784, 256, 10) };
        let matrix = |seed, rows, columns, scale: f32| {
            Array2::from_shape_vec((rows, columns), data::uniform_f32(seed, rows * columns, -scale, scale))
                .expect("as many values as the shape")
        };
        let labels = data::uniform_i32(75, batch, 0, classes as i32).into_iter().map(|label| label as usize).collect();
        Mlp {
            x: matrix(71, batch, inputs, 1.0),
            labels,
            w1: matrix(72, inputs, hidden, 1.0 / (inputs as f32).sqrt()),
            b1: Array1::from(data::uniform_f32(73, hidden, -0.1, 0.1)),
            w2: matrix(74, hidden, classes, 1.0 / (hidden as f32).sqrt()),
            b2: Array1::from(data::uniform_f32(76, classes, -0.1, 0.1)),
        }
    }

    fn size(&self) -> String {
        format!("batch {}, {} → {} → {} f32", self.x.nrows(), self.x.ncols(), self.w1.ncols(), self.w2.ncols())
    }

    fn flops(&self) -> f64 {
        2.0 * self.x.nrows() as f64 * (self.w1.len() + self.w2.len()) as f64
    }

    /// The hidden layer `tanh(x w1 + b1)`, then each row's softmax probabilities and loss.
    fn forward(&self) -> (Array2<f32>, Array2<f32>, f32) {
        let mut hidden = self.x.dot(&self.w1);
        hidden.axis_iter_mut(Axis(0)).into_par_iter().for_each(|mut row| {
            row.iter_mut().zip(&self.b1).for_each(|(h, b)| *h = (*h + b).tanh());
        });
        let mut probabilities = hidden.dot(&self.w2);
        let losses: Vec<f32> = probabilities
            .axis_iter_mut(Axis(0))
            .into_par_iter()
            .zip(&self.labels)
            .map(|(mut row, &label)| {
                row.iter_mut().zip(&self.b2).for_each(|(z, b)| *z += b);
                let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let correct = row[label];
                let mut total = 0.0;
                row.iter_mut().for_each(|z| {
                    *z = (*z - m).exp();
                    total += *z;
                });
                row.iter_mut().for_each(|z| *z /= total);
                m + total.ln() - correct
            })
            .collect();
        let loss = losses.iter().sum::<f32>() / self.labels.len() as f32;
        (hidden, probabilities, loss)
    }
}

fn mlp_grad_hand(input: &Mlp) -> Output {
    let (hidden, mut delta, loss) = input.forward();
    let n = input.labels.len() as f32;
    // d loss / d logits = (softmax - one_hot) / n.
    delta.axis_iter_mut(Axis(0)).into_par_iter().zip(&input.labels).for_each(|(mut row, &label)| {
        row[label] -= 1.0;
        row.iter_mut().for_each(|z| *z /= n);
    });
    let w2 = hidden.t().dot(&delta);
    let b2 = delta.sum_axis(Axis(0));
    let mut back = delta.dot(&input.w2.t());
    back.as_slice_mut()
        .expect("a new array is contiguous")
        .par_iter_mut()
        .zip(hidden.as_slice().expect("a new array is contiguous"))
        .for_each(|(g, h)| *g *= 1.0 - h * h);
    let w1 = input.x.t().dot(&back);
    let b1 = back.sum_axis(Axis(0));
    Output::Tuple(vec![loss.into_output(), w1.into_output(), b1.into_output(), w2.into_output(), b2.into_output()])
}

fn mlp_loss_kernel(quick: bool) -> Kernel {
    let input = Arc::new(Mlp::new(quick));
    let (first, second) = (Arc::clone(&input), Arc::clone(&input));
    Kernel::new("mlp-loss", input.size(), Work::Flops(input.flops()), Check::Close(1e-4))
        .note("the loss alone, the baseline of mlp-grad; hand: ndarray dot for both layers")
        .variant("ein", move || {
            let q = &*first;
            mlp_loss(&q.x, &q.labels, &q.w1, &q.b1, &q.w2, &q.b2)
        })
        .variant("hand", move || second.forward().2)
}

fn mlp_grad_kernel(quick: bool) -> Kernel {
    let input = Arc::new(Mlp::new(quick));
    let (first, second) = (Arc::clone(&input), Arc::clone(&input));
    Kernel::new("mlp-grad", input.size(), Work::Flops(3.0 * input.flops()), Check::Close(1e-3))
        .note("loss and gradients by w1, b1, w2, b2; hand: backpropagation with ndarray dot (rate: the forward's and the backward's products)")
        .variant("ein", move || {
            let q = &*first;
            let (loss, w1, b1, w2, b2) = mlp_loss_grad(&q.x, &q.labels, &q.w1, &q.b1, &q.w2, &q.b2);
            Output::Tuple(vec![loss.into_output(), w1.into_output(), b1.into_output(), w2.into_output(), b2.into_output()])
        })
        .variant("hand", move || mlp_grad_hand(&second))
}

struct Misfit {
    temp: Vec<f32>,
    power: Vec<f32>,
    target: Vec<f32>,
    n: usize,
    iterations: usize,
    constants: Hotspot,
}

impl Misfit {
    fn new(quick: bool) -> Misfit {
        let (n, iterations) = if quick { (128, 5) } else { (1024, 20) };
        Misfit {
            temp: data::uniform_f32(31, n * n, 320.0, 340.0),
            power: data::uniform_f32(32, n * n, 0.0, 0.005),
            target: data::uniform_f32(33, n * n, 320.0, 340.0),
            n,
            iterations,
            constants: Hotspot::new(n, n),
        }
    }

    fn size(&self) -> String {
        format!("{}² f32 × {} it", self.n, self.iterations)
    }

    fn ein(&self, gradient: bool) -> Output {
        let shape = (self.n, self.n);
        let (temp, power, target) =
            (data::view(&self.temp, shape), data::view(&self.power, shape), data::view(&self.target, shape));
        let Hotspot { step_div_cap, rx_1, ry_1, rz_1, ambient } = self.constants;
        let args = (step_div_cap, rx_1, ry_1, rz_1, ambient);
        if gradient {
            let (misfit, d_temp) =
                hotspot_misfit_grad(&temp, &power, &target, self.iterations, args.0, args.1, args.2, args.3, args.4);
            (misfit, d_temp).into_output()
        } else {
            hotspot_misfit(&temp, &power, &target, self.iterations, args.0, args.1, args.2, args.3, args.4)
                .into_output()
        }
    }

    /// The final grid and the misfit, by the suite's hand-written hotspot.
    fn forward(&self) -> (Vec<f32>, f32) {
        let out = hotspot_hand(&self.constants, &self.temp, &self.power, self.n, self.n, self.iterations);
        let misfit = out.par_iter().zip(&self.target).map(|(o, t)| (o - t) * (o - t)).sum();
        (out, misfit)
    }

    /// The step is affine in the grid and its clamped 5-point stencil is its own transpose, so
    /// the adjoint step is the same stencil without the power and ambient terms: the misfit's
    /// gradient is the forward run, then `iterations` adjoint steps from `2 (out - target)`.
    fn gradient(&self) -> (f32, Vec<f32>) {
        let (out, misfit) = self.forward();
        let mut adjoint: Vec<f32> = out.par_iter().zip(&self.target).map(|(o, t)| 2.0 * (o - t)).collect();
        let linear = Hotspot { ambient: 0.0, ..self.constants };
        let no_power = vec![0.0; adjoint.len()];
        let mut next = vec![0.0; adjoint.len()];
        for _ in 0..self.iterations {
            hotspot_step(&linear, &adjoint, &no_power, &mut next, self.n, self.n);
            std::mem::swap(&mut adjoint, &mut next);
        }
        (misfit, adjoint)
    }
}

fn hotspot_loss_kernel(quick: bool) -> Kernel {
    let input = Arc::new(Misfit::new(quick));
    let (first, second) = (Arc::clone(&input), Arc::clone(&input));
    let bytes = 12.0 * (input.n * input.n * input.iterations) as f64;
    Kernel::new("hotspot-loss", input.size(), Work::Bytes(bytes), Check::Close(1e-4))
        .note("the misfit Σ (out - target)² of hotspot's final grid, the baseline of hotspot-grad; hand: the suite's hotspot")
        .variant("ein", move || first.ein(false))
        .variant("hand", move || second.forward().1)
}

fn hotspot_grad_kernel(quick: bool) -> Kernel {
    let input = Arc::new(Misfit::new(quick));
    let (first, second) = (Arc::clone(&input), Arc::clone(&input));
    let bytes = 24.0 * (input.n * input.n * input.iterations) as f64;
    Kernel::new("hotspot-grad", input.size(), Work::Bytes(bytes), Check::Close(1e-3))
        .note("the misfit and its gradient by the initial grid (#[grad(.., wrt(temp))]): ein runs the fold backwards (the step is linear in the grid, so its adjoint reads no saved state and none is kept; the adjoint's edge guards are true in the loop interior); hand: the adjoint stencil (the clamped stencil is self-adjoint), no saved states; rate: the forward's and the backward's traffic")
        .variant("ein", move || first.ein(true))
        .variant("hand", move || second.gradient())
}
