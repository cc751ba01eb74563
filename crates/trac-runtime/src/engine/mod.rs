//! Monitoring engines: progression, complete progression, compiled tables, and the cross-check
//! of all three ([`CrossCheckMonitor`]).
//!
//! Every engine implements [`Monitor`](monitor::Monitor) with the same TRAC / TRAC_R semantics,
//! witnesses and LTLf verdict, so the audit loop can run any of them ([`EngineMonitor`]). The
//! compiled engine needs a `trac_ltl::compiler::TableCompiler`, complete progression a
//! `VerdictOracle` (the satisfiability checker, which the compiler provides):
//! `trac-runtime` does not depend on the compiler (both depend on the traits and on
//! `trac-core`'s table format), so the compiler is passed in, e.g.
//! `trac_compile::Compiler::shared()`.
//!
//! - [`monitor`]: the [`Monitor`](monitor::Monitor) trait, LTL3 verdicts, the progression
//!   monitor (TRAC, TRAC_R; Alamdari, Klassen & McIlraith, arXiv 2605.16198, §4).
//! - [`lazy`]: progression with memoized transitions (a DFA built while the trace is read).
//! - [`parametric`]: one monitor instance per parameter value (trace slicing).
//! - [`past`]: past-time citations of witnesses.
//! - [`select`]: which engine runs a property, and a monitor of any of them.
//! - [`crosscheck`]: three engines side by side, stopping at the first difference.
//! - [`rename`]: residuals of parametric instances shown with their value.

pub mod crosscheck;
pub mod lazy;
pub mod monitor;
pub mod parametric;
pub mod past;
pub mod rename;
pub mod select;

#[cfg(test)]
mod tests;

pub use crosscheck::{CrossCheckMonitor, Mismatch, MAX_PROBES};
pub use rename::rename_residual;
pub use select::{table_monitor, with_past, Engine, EngineError, EngineMonitor};
