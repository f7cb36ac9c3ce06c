//! Property test over memory layouts: compiled programs called on random views (each axis
//! independently reversed, stepped or broadcast with stride 0, axes permuted, lengths from 0 to
//! dozens, sometimes mismatched) must agree with the interpreter — the same answer or the same
//! `ein:` error — and on views with huge broadcast axes (2^45 to 2^62 elements per axis) must
//! return or panic with an `ein:` message, never crash or abort. `EIN_VIEW_CASES` sets the
//! number of random cases per program (default 60).

use crate::harness::{catch_quietly, view_to_value, Form, Layout, LayoutPlan, NamedValue, Oracle, Outcome};
use ein_core::ir::Scalar;
use ein_testing::{env_number, Rng};
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, Slice};

/// One compiled program: its source for the interpreter, its parameters (name and the size
/// variables of each axis), and how to call it on views.
struct Subject {
    name: &'static str,
    source: &'static str,
    params: &'static [(&'static str, &'static [usize])],
    /// Whether every axis of every parameter ends up in the result's shape or is never looped
    /// over, so that a huge axis makes the call fail fast instead of run for hours.
    huge_is_quick: bool,
    call: fn(&[ArrayViewD<'_, f64>]) -> Outcome,
}

macro_rules! subject {
    ($name:ident ($($param:ident: [$($size:literal),*]),*) huge_is_quick: $quick:literal;
     fn($($params:tt)*) -> $ret:tt $body:tt) => {{
        mod $name {
            ::ein::ein! { pub fn run($($params)*) -> $ret $body }
        }
        fn call(views: &[ArrayViewD<'_, f64>]) -> Outcome {
            let mut views = views.iter();
            $(let $param = views.next().expect("one view per parameter");)*
            catch_quietly(|| $name::run($($param),*)).map(|result| crate::harness::ToValue::to_value(&result))
        }
        Subject {
            name: stringify!($name),
            source: stringify!(fn run($($params)*) -> $ret $body),
            params: &[$((stringify!($param), &[$($size),*])),*],
            huge_is_quick: $quick,
            call,
        }
    }};
}

fn subjects() -> Vec<Subject> {
    vec![
        // Size variables: 0 = m, 1 = k, 2 = n (one length each per case).
        subject!(matmul(a: [0, 1], b: [1, 2]) huge_is_quick: false;
            fn(a: [[f64]], b: [[f64]]) -> [[f64]] { for i, j { sum k { a[i, k] * b[k, j] } } }),
        subject!(outer(a: [0], b: [2]) huge_is_quick: true;
            fn(a: [f64], b: [f64]) -> [[f64]] { for i, j { a[i] * b[j] - a[i - 1] } }),
        subject!(matvec_transposed(a: [1, 0], x: [1]) huge_is_quick: false;
            fn(a: [[f64]], x: [f64]) -> [f64] { for i { sum k { a[k, i] * x[k] } } }),
        subject!(stencil(a: [0, 2]) huge_is_quick: true;
        fn(a: [[f64]]) -> [[f64]] {
            for i, j { a[i - 1, j] + a[i + 1, j] - 2.0 * a[i, j] + a[i, j + 1] * a[i, j - 2] }
        }),
        subject!(softmax(x: [0, 2]) huge_is_quick: false;
        fn(x: [[f64]]) -> [[f64]] {
            for i, j { let m = max k { x[i, k] }; exp(x[i, j] - m) / sum k { exp(x[i, k] - m) } }
        }),
        subject!(row_argmax(a: [0, 1]) huge_is_quick: false;
            fn(a: [[f64]]) -> [usize] { for i { argmax k { a[i, k] } } }),
        subject!(corners(a: [0, 1, 2]) huge_is_quick: true;
        fn(a: [[[f64]]]) -> (f64, i64) {
            (a[0, 0, 0] + a[a.len() - 1, a.shape(1) - 1, a.shape(2) - 1], a.len() + a.shape(2))
        }),
        subject!(smooth_fold(a: [0]) huge_is_quick: false;
        fn(a: [f64]) -> [f64] {
            fold t in 0..3, acc = a { for i in 0..a.len() { (acc[i - 1] + acc[i] + acc[i + 1]) / 3.0 } }
        }),
        subject!(batched(a: [0, 1, 2], b: [0, 2, 1]) huge_is_quick: false;
        fn(a: [[[f64]]], b: [[[f64]]]) -> [[[f64]]] {
            for p, i, j { sum k { a[p, i, k] * b[p, k, j] } }
        }),
    ]
}

/// Lengths a size variable takes: mostly small (incl. 0 and 1), sometimes above the grain.
fn random_length(rng: &mut Rng) -> usize {
    const LENGTHS: [usize; 10] = [0, 1, 1, 2, 3, 4, 7, 13, 33, 70];
    *rng.pick(&LENGTHS)
}

/// How one axis of a random view reaches its storage.
#[derive(Clone, Copy, Debug)]
enum AxisLayout {
    /// Stride `step` (±1, ±2, ±3) over a storage axis `|step|` times as long.
    Strided(isize),
    /// Stride 0: one stored element repeated along the axis.
    Broadcast,
}

/// A random view of logical `shape`: a random permutation of the storage axes, and each axis
/// strided (forwards or backwards, step 1 to 3) or broadcast.
struct RandomView {
    storage: ArrayD<f64>,
    /// For each logical axis: which storage axis it is and how it is laid out.
    order: Vec<usize>,
    axes: Vec<AxisLayout>,
    shape: Vec<usize>,
}

impl RandomView {
    fn new(shape: &[usize], rng: &mut Rng, broadcast_chance: f64) -> RandomView {
        let rank = shape.len();
        let axes: Vec<AxisLayout> = (0..rank)
            .map(|_| {
                if rng.unit() < broadcast_chance {
                    AxisLayout::Broadcast
                } else {
                    let step = rng.between(1isize, 3);
                    AxisLayout::Strided(if rng.unit() < 0.5 { -step } else { step })
                }
            })
            .collect();
        let mut order: Vec<usize> = (0..rank).collect();
        for position in (1..rank).rev() {
            order.swap(position, rng.between(0, position));
        }
        // Storage axis `order[axis]` holds logical axis `axis`.
        let mut storage_shape = vec![0; rank];
        for axis in 0..rank {
            storage_shape[order[axis]] = match axes[axis] {
                AxisLayout::Strided(step) => shape[axis] * step.unsigned_abs(),
                AxisLayout::Broadcast => shape[axis].min(1),
            };
        }
        let storage = ArrayD::from_shape_fn(IxDyn(&storage_shape), |_| rng.uniform(-1.0, 1.0));
        RandomView { storage, order, axes, shape: shape.to_vec() }
    }

    fn view(&self) -> ArrayViewD<'_, f64> {
        // Broadcast first (in storage order), then permute, then step.
        let mut broadcast_shape = self.storage.shape().to_vec();
        for (axis, layout) in self.axes.iter().enumerate() {
            if let AxisLayout::Broadcast = layout {
                broadcast_shape[self.order[axis]] = self.shape[axis];
            }
        }
        let broadcast = self.storage.broadcast(IxDyn(&broadcast_shape)).expect("broadcast axes have length 0 or 1");
        let mut view = broadcast.permuted_axes(IxDyn(&self.order));
        for (axis, layout) in self.axes.iter().enumerate() {
            if let AxisLayout::Strided(step) = *layout {
                view.slice_axis_inplace(Axis(axis), Slice::new(0, None, step));
            }
        }
        assert_eq!(view.shape(), &self.shape[..]);
        view
    }

    fn describe(&self, name: &str) -> String {
        format!("{name}: f64{:?} axes {:?} storage order {:?}", self.shape, self.axes, self.order)
    }
}

fn case_count() -> usize {
    env_number("EIN_VIEW_CASES").map_or(60, |cases| cases as usize)
}

#[test]
fn random_views_agree_with_the_interpreter() {
    let cases = case_count();
    let mut runs = 0;
    for subject in subjects() {
        let oracle = Oracle::new(subject.name, subject.source, Form::Item);
        let mut rng = Rng::new(0x5EED ^ (subject.name.len() as u64 * 7919));
        for case in 0..cases {
            let mut lengths: Vec<usize> = (0..3).map(|_| random_length(&mut rng)).collect();
            let sizes = [("m", lengths[0]), ("k", lengths[1]), ("n", lengths[2])];
            let mut trial = oracle.start(case, &sizes, LayoutPlan::Uniform(Layout::Standard));
            let views: Vec<RandomView> = subject
                .params
                .iter()
                .map(|(_, axes)| {
                    // Now and then one axis is one longer than its size variable says.
                    let mut shape: Vec<usize> = axes.iter().map(|&variable| lengths[variable]).collect();
                    if !shape.is_empty() && rng.unit() < 0.08 {
                        let axis = rng.below(shape.len());
                        shape[axis] += 1;
                    }
                    RandomView::new(&shape, &mut rng, 0.2)
                })
                .collect();
            lengths.clear();
            for ((name, _), view) in subject.params.iter().zip(&views) {
                trial.describe_input(view.describe(name));
            }
            let arguments: Vec<ArrayViewD<'_, f64>> = views.iter().map(RandomView::view).collect();
            let outcome = (subject.call)(&arguments);
            let inputs = subject
                .params
                .iter()
                .zip(&arguments)
                .map(|((name, _), view)| NamedValue::new(name, view_to_value(view), Scalar::F64))
                .collect();
            trial.check(outcome, inputs);
            runs += 1;
        }
        oracle.finish(3);
    }
    eprintln!("random views: {runs} runs agreed with the interpreter");
}

/// Lengths far beyond memory, reachable only through zero-stride broadcasts.
const HUGE: [usize; 4] = [1 << 45, (1 << 52) + 3, 1 << 61, isize::MAX as usize];

#[test]
fn huge_broadcast_axes_fail_cleanly() {
    let ones: Vec<ArrayD<f64>> = (0..4).map(|rank| ArrayD::from_elem(IxDyn(&vec![1; rank]), 0.5)).collect();
    let mut rng = Rng::new(0xB16);
    let mut panics = 0;
    for subject in subjects().into_iter().filter(|subject| subject.huge_is_quick) {
        for _ in 0..case_count() {
            let lengths: Vec<usize> = (0..3)
                .map(|_| if rng.unit() < 0.5 { *rng.pick(&HUGE) } else { random_length(&mut rng).max(1) })
                .collect();
            let shapes: Vec<Vec<usize>> = subject
                .params
                .iter()
                .map(|(_, axes)| axes.iter().map(|&variable| lengths[variable]).collect())
                .collect();
            // ndarray refuses broadcasts beyond isize::MAX elements; those never reach ein.
            let Some(arguments) = shapes
                .iter()
                .map(|shape| ones[shape.len()].broadcast(IxDyn(shape)))
                .collect::<Option<Vec<ArrayViewD<'_, f64>>>>()
            else {
                continue;
            };
            match (subject.call)(&arguments) {
                Ok(_) => {}
                Err(message) if message.starts_with("ein: ") => panics += 1,
                Err(message) => {
                    panic!("{}: huge shapes {shapes:?} panicked without an ein message: {message}", subject.name)
                }
            }
        }
    }
    assert!(panics > 0, "no huge case reached a size check");
}
