//! `trac`: runtime verification of black-box AI systems against temporal rules written in LTL.
//!
//! This umbrella crate re-exports the workspace crates:
//! - [`core`] (`trac-core`): verdicts, the `Monitor` trait, valuations, monitor tables and the
//!   table monitor; all that generated monitors (`trac_monitor!`) need.
//! - [`spec`] (`trac-spec`): formulas, parser, printer, progression, spec files.
//! - [`compile`] (`trac-compile`): complete, minimal monitor automata (tables), DOT / HOA exports.
//! - [`runtime`] (`trac-runtime`): monitors, TRAC / TRAC_R, witnesses, labelers, trace readers, audit loop.
//!
//! See `ARCHITECTURE.md` at the repository root for the code map and invariants.
#![deny(missing_docs)]

pub use trac_compile as compile;
pub use trac_core as core;
pub use trac_runtime as runtime;
pub use trac_spec as spec;
