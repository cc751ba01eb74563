//! `trac-spec`: the formula language of trac.
//!
//! - [`formula`]: hash-consed LTL formulas with past-time operators ([`Arena`], [`Formula`]).
//! - [`parser`]: Spot-syntax parser with caret-rendered errors.
//! - [`printer`]: Spot-syntax printer with minimal parentheses.
//! - [`progress`]: LTL progression (Bacchus & Kabanza 2000), past-time tracking, finite-trace
//!   evaluation at the end of a trace (LTLf, De Giacomo & Vardi 2013).
//! - [`sat`]: satisfiability / validity of residuals (GPVW tableau, SCC emptiness) for complete
//!   LTL3 and LTLf verdicts.
//! - [`english`]: plain-English rendering.
//! - [`compiler`]: [`compiler::TableCompiler`], how the engines ask for a compiled monitor table.
//! - [`spec`]: spec files in RON (propositions, labeling rules, properties).
#![deny(missing_docs)]

pub mod compiler;
pub mod english;
pub mod formula;
pub mod parser;
pub mod printer;
pub mod progress;
pub mod sat;
pub mod spec;

pub use formula::{Arena, Formula, Node, Sym};
pub use parser::{parse, parse_property, ParseError, Property as ParsedProperty};
pub use printer::print;
