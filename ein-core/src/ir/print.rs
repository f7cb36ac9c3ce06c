//! IR pretty-printer stub (being written).
