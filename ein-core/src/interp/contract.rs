//! The interpreter's [`Contraction`]: plain nested loops in label order, exactly the loop nest
//! the `contract` pass replaced (same sums in the same order, same errors), so differential
//! tests can hold compiled GEMM results against it. It evaluates the contraction from its own
//! labels and operands, not from `Contraction::loops`, so that comparing a program before and
//! after the pass tests what the pass built.

use super::datum::{ArrayView, Datum};
use super::eval::Interpreter;
use super::scalar;
use super::value::RuntimeError;
use crate::ir::{BinaryOp, Contraction, Expr, ReduceOp, Side};

type Result<T> = std::result::Result<T, RuntimeError>;

/// An operand while the contraction runs: its elements (row-major) and, per label, the step
/// in those elements that one step of the label moves (0 for labels it does not have).
struct Factor {
    view: ArrayView,
    steps: Vec<usize>,
}

impl Factor {
    fn new(value: Datum, axes: &[usize], sizes: &[usize], labels: usize) -> Result<Factor> {
        let Datum::Array(view) = value else {
            return Err(RuntimeError::internal(format!("a contraction operand is a {}", value.kind_name())));
        };
        let shape = view.shape();
        if shape.len() != axes.len() {
            return Err(RuntimeError::internal("a contraction operand with one label per axis"));
        }
        let mut steps = vec![0; labels];
        let mut step = 1usize;
        for (&length, &label) in shape.iter().zip(axes).rev() {
            if sizes.get(label).is_none_or(|&size| length < size) {
                return Err(RuntimeError::internal(format!(
                    "a contraction operand axis of length {length} is shorter than its label's range"
                )));
            }
            steps[label] = step;
            step *= length;
        }
        Ok(Factor { view, steps })
    }

    fn element(&self, position: &[usize]) -> Result<Datum> {
        let offset: usize = position.iter().zip(&self.steps).map(|(index, step)| index * step).sum();
        self.view
            .elements()
            .get(offset)
            .cloned()
            .ok_or_else(|| RuntimeError::internal("a contraction read out of range"))
    }
}

impl Interpreter<'_> {
    pub(super) fn eval_contract(&mut self, whole: &Expr, contraction: &Contraction) -> Result<Datum> {
        let mut sizes = Vec::new();
        for label in &contraction.labels {
            let size = self.eval(&label.size)?;
            let size = size
                .to_i64()
                .ok_or_else(|| RuntimeError::internal(format!("a contraction size is a {}", size.kind_name())))?;
            let size = usize::try_from(size)
                .map_err(|_| RuntimeError::new(format!("size of index `{}` is {size}", label.name)))?;
            sizes.push(size);
        }
        let scale = match &contraction.scale {
            Some(scale) => Some((self.eval(&scale.factor)?, scale.side)),
            None => None,
        };
        let labels = contraction.labels.len();
        let mut factors = Vec::with_capacity(contraction.operands.len());
        for operand in &contraction.operands {
            factors.push(Factor::new(self.eval(&operand.array)?, &operand.axes, &sizes, labels)?);
        }
        let elem = self.resolve(contraction.elem)?;
        let run = Run { factors: &factors, sizes: &sizes, outputs: contraction.outputs, elem };

        let output_count: usize = sizes[..contraction.outputs].iter().product();
        let mut position = vec![0usize; labels];
        let mut elements = Vec::with_capacity(output_count);
        for _ in 0..output_count {
            let sum = run.sum(contraction.outputs, &mut position)?;
            let element = match &scale {
                Some((factor, Side::Left)) => scalar::binary(BinaryOp::Mul, factor.clone(), sum)?,
                Some((factor, Side::Right)) => scalar::binary(BinaryOp::Mul, sum, factor.clone())?,
                None => sum,
            };
            elements.push(element);
            // Next output position, last output label fastest.
            for label in (0..contraction.outputs).rev() {
                position[label] += 1;
                if position[label] < sizes[label] {
                    break;
                }
                position[label] = 0;
            }
        }
        if whole.ty.rank() != contraction.outputs {
            return Err(RuntimeError::internal("a contraction whose type does not match its output labels"));
        }
        Ok(Datum::Array(ArrayView::new(sizes[..contraction.outputs].to_vec(), elements)?))
    }
}

struct Run<'a> {
    factors: &'a [Factor],
    sizes: &'a [usize],
    outputs: usize,
    elem: crate::ops::Scalar,
}

impl Run<'_> {
    /// `sum label in 0..size { … }` for the summed label at `label` and those inside it, at the
    /// output position already in `position`.
    fn sum(&self, label: usize, position: &mut [usize]) -> Result<Datum> {
        if label == self.sizes.len() {
            // The product left to right, as `a * b * c` is written.
            let (first, rest) =
                self.factors.split_first().ok_or_else(|| RuntimeError::internal("a contraction with no operand"))?;
            let mut product = first.element(position)?;
            for factor in rest {
                product = scalar::binary(BinaryOp::Mul, product, factor.element(position)?)?;
            }
            return Ok(product);
        }
        debug_assert!(label >= self.outputs);
        let mut accumulator = scalar::identity(ReduceOp::Sum, self.elem)?;
        for index in 0..self.sizes[label] {
            position[label] = index;
            let value = self.sum(label + 1, position)?;
            accumulator = scalar::combine(ReduceOp::Sum, accumulator, value)?;
        }
        position[label] = 0;
        Ok(accumulator)
    }
}
