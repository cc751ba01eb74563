//! `trac-py`: the Python package of trac (PyPI `trac-monitor`, imported as `trac`).
//!
//! The crate has two layers:
//! - pure Rust, always built and tested by `cargo test`: [`session`] audits a trace (a file, or
//!   events given in memory) exactly as `trac audit --format jsonl` does, one auditor per
//!   `session`, and returns the same JSON records ([`trac_runtime::audit::jsonl`]); [`tables`] caches
//!   compiled monitor tables per process and exports / imports them, so that a spec shipped to
//!   the workers of a distributed audit carries its compiled tables as data;
//! - the Python bindings (`python` feature, turned on by maturin with `pyo3/extension-module`):
//!   the native module `trac._trac`, wrapped by the Python code in `python/trac/`.
//!
//! Without the `python` feature nothing here needs Python, so `cargo build --workspace` works on
//! machines without it.
#![deny(missing_docs)]

pub mod session;
pub mod tables;

#[cfg(feature = "python")]
mod python;
