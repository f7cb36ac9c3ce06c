//! Work estimates, in loop iterations, for the runtime's choice of serial or parallel and of
//! the chunk size: a matrix–vector product's 4096 outputs are 16 Mi steps of work, not 4 Ki.

use crate::ir::Expr;

/// The size assumed for a loop whose size is only known inside the loops.
pub const UNKNOWN_SIZE: usize = 64;

/// An amount of work: constants folded as it is built; what is left is evaluated at run time
/// before the loops (saturating: it only steers parallelism).
#[derive(Clone, Debug)]
pub enum Work<'p> {
    Const(usize),
    /// The length of axis `k` of the comprehension being estimated (computed before its loops).
    Axis(usize),
    /// A loop size that cannot fail and reads nothing bound inside the comprehension.
    Size(&'p Expr),
    Sum(Box<Work<'p>>, Box<Work<'p>>),
    Product(Box<Work<'p>>, Box<Work<'p>>),
    /// At least one step (an element with no loop still costs one).
    AtLeastOne(Box<Work<'p>>),
}

impl<'p> Work<'p> {
    pub fn plus(self, other: Work<'p>) -> Work<'p> {
        match (self, other) {
            (Work::Const(left), Work::Const(right)) => Work::Const(left.saturating_add(right)),
            (Work::Const(0), work) | (work, Work::Const(0)) => work,
            (left, right) => Work::Sum(Box::new(left), Box::new(right)),
        }
    }

    pub fn times(self, other: Work<'p>) -> Work<'p> {
        match (self, other) {
            (Work::Const(left), Work::Const(right)) => Work::Const(left.saturating_mul(right)),
            (Work::Const(1), work) | (work, Work::Const(1)) => work,
            (left, right) => Work::Product(Box::new(left), Box::new(right)),
        }
    }

    pub fn at_least_one(self) -> Work<'p> {
        match self {
            Work::Const(value) => Work::Const(value.max(1)),
            work => Work::AtLeastOne(Box::new(work)),
        }
    }
}
