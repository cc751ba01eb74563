//! `trac-runtime`: labeling, monitors and the audit loop, one folder per job.
//!
//! - [`trace`]: trace readers (JSON Lines, chat conversations, OpenTelemetry spans, plain-text
//!   action logs) into [`trace::Event`]s.
//! - [`label`]: labeling functions from trace events to atomic propositions (spec rules, the
//!   literal prefilter, derived atoms).
//! - [`engine`]: the monitors (progression, lazy, compiled tables, parametric slicing, past-time
//!   citations, cross-check) and which one runs a property.
//! - [`audit`]: the audit of a trace (plan, auditor, verdict records, coverage, JSON Lines).
//!
//! The table format, valuations and the support of generated monitors are `trac-core`'s
//! (`trac_core::table`, `trac_core::labels`, `trac_core::generated`), which generated code uses
//! alone.
#![deny(missing_docs)]

pub mod audit;
pub mod engine;
pub mod label;
pub mod trace;

pub use engine::monitor::{Change, Monitor, ProgressionMonitor, ResetPolicy, Verdict};
pub use trac_core::labels::{LabelSet, StepInput};
