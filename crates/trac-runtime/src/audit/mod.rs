//! The audit: read a trace, label each step, run every property's monitor, and collect verdicts
//! with witnesses.
//!
//! - [`plan`]: what an audit builds once per set of specs ([`AuditPlan`], [`AuditOptions`]).
//! - [`auditor`]: the streaming audit of one trace ([`Auditor`]: one event in, the verdicts
//!   reached at that step out).
//! - [`compact`]: idle sessions' auditors compacted to their monitors' run states.
//! - [`records`]: verdict records with witnesses, and the properties' states at the end.
//! - [`coverage`]: what an audit could read of a trace, and which properties it could decide.
//! - [`driver`]: the one audit loop: events in, split by session, verdicts out to a sink (pull
//!   from a trace file, or push one event at a time).
//! - [`sink`]: where verdicts, trace ends and notices go ([`Sink`], [`Collect`]).
//! - [`specs`]: the policy of an audit of several specs (shared propositions, namespaced ids).
//! - [`report`]: whole-trace reports ([`TraceReport`]) of a trace read at once.
//! - [`parallel`]: `-j N` inside one file: its sessions on N threads, the sink called as by
//!   a sequential audit ([`audit_file_parallel`]).
//! - [`jsonl`]: the JSON Lines records of an audit (shared by the CLI and the Python package).
//!
//! A bad trace line stops the audit but keeps everything computed before it: the report holds
//! the verdicts so far, the end-of-trace verdicts of the prefix read, and the error.

pub mod auditor;
pub mod compact;
pub mod coverage;
pub mod driver;
pub mod jsonl;
pub mod parallel;
pub mod plan;
pub mod records;
pub mod report;
pub mod sink;
pub mod specs;

pub use auditor::Auditor;
pub use coverage::Coverage;
pub use driver::{audit_file, Checks, CrossCheckFailure, Driver, FileEnd, LabelStage, ReaderFacts};
pub use parallel::{audit_file_parallel, ParallelError};
pub use plan::{AuditError, AuditOptions, AuditPlan, Fallback};
pub use records::{InstanceEnd, PropertyEnd, PropertyInfo, VerdictRecord};
pub use report::{audit_events, audit_path, PropertyReport, TraceReport};
pub use sink::{Collect, EndError, Notice, ReadFailure, Sink, TraceEnd, TraceStart};
