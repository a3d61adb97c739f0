//! The conformance harness every scheduler is run through (see `tests/conformance.rs`).
