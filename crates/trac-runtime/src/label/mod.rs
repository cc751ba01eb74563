//! Labeling: from a trace event to the atomic propositions that hold at its step.
//!
//! - [`labeler`]: the labeling function of a spec's rules ([`labeler::RuleLabeler`]).
//! - [`prefilter`]: the Aho–Corasick pass that skips the rule regexes whose literals a text lacks.
//! - [`derived`]: derived atoms (`call(update_*)` patterns, `exists p:` past-time quantifiers),
//!   computed from the labels before the monitors read them.

pub mod derived;
pub mod labeler;
pub mod prefilter;
