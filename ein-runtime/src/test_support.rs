//! Helpers shared by the crate's unit tests.

use std::panic::{catch_unwind, UnwindSafe};

/// Runs `action`, expecting it to panic, and returns the panic's message.
pub(crate) fn panic_message<R>(action: impl FnOnce() -> R + UnwindSafe) -> String {
    let payload = match catch_unwind(action) {
        Ok(_) => panic!("expected a panic"),
        Err(payload) => payload,
    };
    if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_owned()
    } else {
        panic!("panic payload is not a string")
    }
}

/// `normal`, or the smaller `under_miri` when running under Miri, which is far slower; both
/// must still exercise the same code paths (for example, exceed `GRAIN` to run in parallel).
pub(crate) fn size(normal: usize, under_miri: usize) -> usize {
    if cfg!(miri) {
        under_miri
    } else {
        normal
    }
}
