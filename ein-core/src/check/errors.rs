//! Error accumulation for the front end (serde's `Ctxt` idea): every independent user error is
//! recorded, and stages stop only at barriers, so one compile reports them all.

use proc_macro2::Span;

#[derive(Default)]
pub struct Errors {
    collected: Vec<syn::Error>,
}

impl Errors {
    pub fn push(&mut self, span: Span, message: impl std::fmt::Display) {
        self.collected.push(syn::Error::new(span, message));
    }

    /// Records an error built elsewhere (a parser helper's message).
    pub fn push_error(&mut self, error: syn::Error) {
        self.collected.push(error);
    }

    pub fn len(&self) -> usize {
        self.collected.len()
    }

    pub fn is_empty(&self) -> bool {
        self.collected.is_empty()
    }

    /// The barrier between stages: all recorded errors combined into one, if any.
    pub fn finish(self) -> syn::Result<()> {
        let mut errors = self.collected.into_iter();
        match errors.next() {
            None => Ok(()),
            Some(mut first) => {
                errors.for_each(|error| first.combine(error));
                Err(first)
            }
        }
    }
}

/// Marks a sub-expression whose error has already been recorded; checking continues elsewhere.
#[derive(Debug, Clone, Copy)]
pub struct Reported;

pub type Checked<T> = Result<T, Reported>;
