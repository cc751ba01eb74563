//! `trac`: runtime verification of black-box AI systems against temporal rules written in LTL.
//!
//! This umbrella crate re-exports the workspace crates:
//! - [`spec`] (`trac-spec`): formulas, parser, printer, progression, spec files.
//! - [`compile`] (`trac-compile`): complete, minimal monitor automata (tables), DOT / HOA exports.
//! - [`runtime`] (`trac-runtime`): monitors, TRAC / TRAC_R, witnesses, labelers, trace readers, audit loop.
//!
//! See `ARCHITECTURE.md` at the repository root for the code map and invariants.
#![deny(missing_docs)]

pub use trac_compile as compile;
pub use trac_runtime as runtime;
pub use trac_spec as spec;
