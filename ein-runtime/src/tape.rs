//! The saved states of a scan whose state is an array (what reverse mode's tape of a `fold`
//! over a grid is): each state copied, row-major, after the one before; at the end one array
//! with the steps as its first axis.

use crate::array::Array;
use crate::errors::Site;
use crate::view::View;

/// States of shape `shape`, `steps` of them once complete.
pub struct Tape<T, const N: usize> {
    shape: [usize; N],
    steps: usize,
    data: Vec<T>,
}

impl<T: Copy, const N: usize> Tape<T, N> {
    /// An empty tape for `steps` states of the shape of `initial`.
    pub fn new(initial: &View<'_, T, N>, steps: usize) -> Self {
        let shape = initial.shape();
        let capacity = initial.element_count().saturating_mul(steps);
        Tape { shape, steps, data: crate::memory::output_vec(capacity) }
    }

    /// Appends one state; panics (naming `site`) if its shape is not the initial state's.
    pub fn push(&mut self, state: &View<'_, T, N>, site: &Site) {
        if state.shape() != self.shape {
            changed_shape(&self.shape, &state.shape(), site);
        }
        match state.as_slice() {
            Some(elements) => self.data.extend_from_slice(elements),
            None => self.data.extend(state.iter()),
        }
    }

    /// The states as one array of shape `[steps, shape…]` (`M` is `N + 1`).
    pub fn finish<const M: usize>(self) -> Array<T, M> {
        let mut shape = [0; M];
        if M != N + 1 || self.data.len() != self.steps * self.shape.iter().product::<usize>() {
            crate::errors::internal_error(format_args!("a scan's tape does not hold its states"));
        }
        shape[0] = self.steps;
        shape[1..].copy_from_slice(&self.shape);
        Array::from_vec(shape, self.data)
    }
}

#[cold]
#[inline(never)]
fn changed_shape(first: &[usize], now: &[usize], site: &Site) -> ! {
    panic!(
        "ein: a fold's state changed shape from {first:?} to {now:?} (at {site}); reverse mode saves its states, \
         which must keep the shape of its initial value"
    )
}
