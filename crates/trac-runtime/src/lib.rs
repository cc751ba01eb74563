//! `trac-runtime`: monitors and the audit loop.
//!
//! - [`monitor`]: the [`Monitor`] trait, LTL3 [`Verdict`]s, the progression monitor (TRAC, TRAC_R).
//! - [`parametric`]: one monitor instance per parameter value (trace slicing).
//! - [`past`]: past-time citations of witnesses (the steps that gave past-time subformulas
//!   their values).
//! - [`engine`]: the engines (progression, complete progression, compiled, cross-check).
//! - [`table`], [`generated`], [`labels`]: re-exported from `trac-core` (the table format and
//!   monitor, support for generated monitors, valuations), which generated code uses alone.
//! - [`derived`]: derived atoms (`call(update_*)` patterns, `exists p:` past-time quantifiers),
//!   computed from the labels before the monitors read them.
//! - [`labeler`]: labeling functions from trace events to atomic propositions.
//! - [`prefilter`]: the Aho–Corasick pass that skips the rule regexes whose literals a text lacks.
//! - [`trace`]: trace readers (JSON Lines, plain-text action logs).
//! - [`audit`]: the audit loop, verdict records and witnesses.
//! - [`jsonl`]: the JSON Lines records of an audit (shared by the CLI and the Python package).
#![deny(missing_docs)]

pub mod audit;
pub mod derived;
pub mod engine;
pub mod jsonl;
pub mod labeler;
pub mod lazy;
pub mod monitor;
pub mod parametric;
pub mod past;
pub mod prefilter;
pub mod trace;

pub use trac_core::{generated, labels, table};

pub use labels::{LabelSet, StepInput};
pub use monitor::{Change, Monitor, ProgressionMonitor, ResetPolicy, Verdict};
