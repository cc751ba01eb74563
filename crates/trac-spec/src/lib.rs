//! `trac-spec`: spec files (RON): the propositions of a domain, their labeling rules as data,
//! and the properties to monitor, checked with positions in the file.
//!
//! - [`spec`]: spec files in RON (propositions, labeling rules, properties), [`spec::Spec::check`].
//!
//! Formulas themselves are `trac-ltl`'s. What a labeling rule *means* (the regexes it compiles
//! to) is `trac_runtime::label::labeler`'s business.
#![deny(missing_docs)]

pub mod spec;
