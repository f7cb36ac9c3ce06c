//! The checked build (`--cfg ein_checked`, e.g. `RUSTFLAGS="--cfg ein_checked"`): an
//! out-of-range unchecked read, undefined behaviour in other builds, panics with a message that
//! names the index and the shape, at the caller's line (generated code carries the user's
//! spans, so for an `ein!` function that is the user's source). Empty in other builds. Its own
//! test binary, as it sets the process's panic hook.

#![cfg(ein_checked)]

use std::panic::{catch_unwind, set_hook, take_hook};
use std::sync::{Arc, Mutex};

use ein_runtime::View;

#[test]
fn an_out_of_range_unchecked_read_panics_at_the_caller() {
    let location = Arc::new(Mutex::new(None));
    let seen = Arc::clone(&location);
    set_hook(Box::new(move |info| {
        if let Some(at) = info.location() {
            *seen.lock().expect("no test panics while holding it") = Some((at.file().to_owned(), at.line()));
        }
    }));
    let data = [1, 2, 3, 4, 5, 6];
    let view = View::from_slice(&data, [2, 3]);
    let line = line!() + 2;
    // SAFETY: out of range on purpose: the checked build panics before reading.
    let read = catch_unwind(|| unsafe { view.get_unchecked([2, 0]) });
    // SAFETY: as above.
    let sub = catch_unwind(|| unsafe { view.sub_unchecked::<1, 1>([7]) });
    let _ = take_hook();
    let message = |payload: Box<dyn std::any::Any + Send>| payload.downcast::<String>().map(|text| *text).ok();
    assert_eq!(
        read.map_err(message).expect_err("an out-of-range read panics").as_deref(),
        Some("ein: checked build: index [2, 0] is out of range for a view of shape [2, 3]")
    );
    assert_eq!(
        sub.map_err(message).expect_err("an out-of-range sub-view panics").as_deref(),
        Some("ein: checked build: sub-view index [7] is out of range for a view of shape [2, 3]")
    );
    let location = location.lock().expect("no test panics while holding it").clone();
    let (file, panic_line) = location.expect("the hook saw the panics");
    assert!(file.ends_with("checked_build.rs"), "the panic points into {file}, not at the caller");
    assert_eq!(panic_line, line + 2, "the last panic, the sub-view's, is at its caller's line");
}
