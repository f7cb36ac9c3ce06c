//! Test support shared by the ein workspace's tests, so that each thing exists once: the seeded
//! random number generator ([`Rng`]), the environment knobs of the random tests
//! ([`env_number`]), the message of a caught panic ([`panic_message`], [`expect_panic`]) and,
//! with the `programs` feature, the generator of random well-typed ein programs (the
//! `programs` module).
//!
//! Not published: it serves `ein-core/tests`, the root crate's `tests/integration` and benches,
//! and ein-runtime's tests (which use it without the `programs` feature, so they do not build
//! the compiler). ein-core's own unit tests cannot use the `programs` module: through a
//! dev-dependency it would link a second copy of ein-core, whose types are not theirs.

#[cfg(feature = "programs")]
pub mod programs;
mod rng;

pub use rng::{splitmix64_finalizer, Integer, Rng};

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The number in environment variable `name`, if it is set: a count or a seed, in decimal or
/// `0x` hexadecimal, with `_` separators allowed (`EIN_FUZZ_SEED=0x00E1_F022_5EED`).
///
/// # Panics
///
/// When the variable is set but is not such a number, naming the variable and its value: a
/// mistyped knob must not silently run the default.
pub fn env_number(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    Some(parse_number(&value).unwrap_or_else(|| panic!("{name} must be a number (decimal or 0x hex), found `{value}`")))
}

fn parse_number(text: &str) -> Option<u64> {
    let digits = text.trim().replace('_', "");
    match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => digits.parse().ok(),
    }
}

/// The message of a caught panic: its payload when that is a string (`panic!` with a message
/// makes a `&str` or a `String`).
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "(a panic whose payload is not a string)".to_string()
    }
}

/// Runs `action`, which must panic, and returns the panic's message.
///
/// The closure need not be unwind-safe: the tests that call this inspect what a panic left
/// behind on purpose (an output untouched by a refused call, say).
///
/// # Panics
///
/// When `action` returns instead.
#[track_caller]
pub fn expect_panic<R>(action: impl FnOnce() -> R) -> String {
    match catch_unwind(AssertUnwindSafe(action)) {
        Ok(_) => panic!("expected a panic, but the call returned"),
        Err(payload) => panic_message(&*payload),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_decimal_or_hex_with_separators() {
        assert_eq!(parse_number("1500"), Some(1500));
        assert_eq!(parse_number(" 20_000 "), Some(20_000));
        assert_eq!(parse_number("0x00E1_F022_5EED"), Some(0x00E1_F022_5EED));
        assert_eq!(parse_number("0XFF"), Some(255));
        for malformed in ["", "ten", "-1", "0x", "1e6", "0xG"] {
            assert_eq!(parse_number(malformed), None, "{malformed:?}");
        }
    }

    #[test]
    fn messages_of_panics() {
        assert_eq!(expect_panic(|| panic!("plain")), "plain");
        assert_eq!(expect_panic(|| panic!("formatted {}", 7)), "formatted 7");
        assert_eq!(expect_panic(|| std::panic::panic_any(7)), "(a panic whose payload is not a string)");
        let returned = catch_unwind(|| expect_panic(|| 1));
        assert_eq!(panic_message(&*returned.unwrap_err()), "expected a panic, but the call returned");
    }
}
