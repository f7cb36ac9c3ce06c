//! ein: a pointful array language for Rust, compiled by the `ein!` macro to parallel loops.
pub use ein_macros::ein;
