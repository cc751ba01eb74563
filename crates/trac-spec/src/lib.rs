//! `trac-spec`: spec files (RON): the propositions of a domain, their labeling rules as data,
//! and the properties to monitor, checked with positions in the file.
//!
//! - [`spec`]: spec files in RON (propositions, labeling rules, properties), [`spec::Spec::check`].
//!
//! The formula modules of `trac-ltl` are re-exported under their old paths
//! (`trac_ltl::formula`, `trac_ltl::parser`, ...). What a labeling rule *means* (the regexes it
//! compiles to) is `trac_runtime::label::labeler`'s business.
#![deny(missing_docs)]

pub mod spec;

pub use trac_ltl::{compiler, english, formula, parser, printer, progress};
pub use trac_ltl::{
    parse, parse_property, print, Arena, Formula, Node, ParseError, ParsedProperty, Sym,
};
