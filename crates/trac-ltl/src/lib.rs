//! `trac-ltl`: the formula language of trac (no spec files, no labeling rules, no I/O).
//!
//! - [`formula`]: hash-consed LTL formulas with past-time operators ([`Arena`], [`Formula`]).
//! - [`parser`]: Spot-syntax parser with caret-rendered errors.
//! - [`printer`]: Spot-syntax printer with minimal parentheses.
//! - [`progress`]: LTL progression (Bacchus & Kabanza 2000), past-time tracking, finite-trace
//!   evaluation at the end of a trace (LTLf, De Giacomo & Vardi 2013).
//! - [`english`]: plain-English rendering.
//! - [`sugar`]: bounded operators (`F[n:m]`, `O[n:m]`, ...), `count(...)` and `end`, expanded
//!   when parsed and recognized when printed.
//! - [`compiler`]: [`compiler::TableCompiler`] and [`compiler::VerdictOracle`], how the engines ask
//!   for a compiled monitor table and for complete verdicts
//!   (`trac-compile` implements them; `trac-runtime` calls them).
#![deny(missing_docs)]

pub mod compiler;
pub mod english;
pub mod formula;
mod lexical;
pub mod parser;
pub mod printer;
pub mod progress;
mod render;
pub mod sugar;

pub use formula::{Arena, Formula, Node, Sym};
pub use parser::{parse, parse_property, ParseError, Property as ParsedProperty};
pub use printer::print;
