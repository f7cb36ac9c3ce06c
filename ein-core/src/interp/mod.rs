//! Interpreter stub (being written).
