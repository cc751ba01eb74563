//! Spec files in RON: propositions, labeling rules and properties.
//!
//! A spec names the atomic propositions of a domain, says how to compute them from an agent's
//! actions (labeling [`Rule`]s), and lists the properties (LTL formulas) to check:
//!
//! ```ron
//! (
//!   name: "textworld",
//!   propositions: [
//!     (name: "take", param: Some("item"), description: "the agent takes {item}", rule: Some(Words("take {item...}"))),
//!     (name: "look", description: "the agent looks around", rule: Some(Words("look around"))),
//!   ],
//!   properties: [
//!     (id: "R1", description: "take an item, examine it next", formula: "forall item: G(take(item) -> X examine(item))"),
//!   ],
//! )
//! ```
//!
//! Loading is two steps: [`Spec::from_path`] / [`Spec::from_str`] read the RON (syntax and type
//! errors), then [`Spec::check`] parses every formula and checks the spec's consistency, reporting
//! all problems at once as `file:line:column: message` lines pointing inside the RON file.
//!
//! # Labeling rules
//! - `Words("look around")`: the pattern's words must occur contiguously in the action text's
//!   words. Words are maximal runs of letters, digits and `_`; anything else separates words, in
//!   the pattern and in the text (so `to l1` matches `to-l1`, and `package1` never matches
//!   `package10`). `{x}` captures exactly one word; `{x...}` captures one or more words, lazily up to
//!   the next pattern word, or up to the end of the text when it is last; it never crosses clause
//!   punctuation (`, ; : . ! ?`, brackets, quotes) and is cut before a preposition that is not
//!   its first word (`take knife from fridge`: `knife`). Both skip a leading article (`a`, `an`,
//!   `the`). (`trac_runtime::label::labeler::WordsPattern` has the details.)
//! - `Regex(r)`: a `regex` crate regex, searched anywhere in the text; the named group
//!   `(?P<param>...)` gives the parameter value.
//!
//! This crate holds rules as data and checks their syntax; their meaning (the regexes they
//! compile to, matching) is in `trac_runtime::label::labeler`, which also checks the regexes
//! (`trac_runtime::label::labeler::check_spec`).
//! - `AnyOf([..])`, `AllOf([..])`, `Not(..)`: union, conjunction and negation of rules.
//! - Structure (chat and telemetry traces): `Role("assistant")`, `Tool("update_*")` (a glob on
//!   the names of the tools the event calls), `Arg(path: "$.reservation_id", capture:
//!   Some("rid"))` (a value in a tool call's arguments), `Field("name", "regex")` (a field of the
//!   log record), `Input(rule)` / `Output(rule)` (the text rules inside read only the input, or
//!   only the output; by default they read the output, or the input when there is no output).
//!   A rule with `Tool` / `Arg` leaves is evaluated once per tool call of the event, so `AllOf`
//!   of a `Tool` and an `Arg` speaks of one call.
//!
//! Matching is case-insensitive unless the spec sets `case_sensitive: true`.

mod check;
mod model;
mod rules;
mod source;

pub use model::{
    CheckedProperty, CheckedSpec, Diagnostic, LabelExample, LabelerChoice, PropertyDecl,
    PropositionDecl, RuleExample, Semantics, Spec, SpecError, SpecSource,
};
pub use rules::{
    glob_match, parse_arg_path, regex_group_names, words_placeholders, words_tokens, ArgPathError,
    ArgPathErrorKind, PathStep, Rule, RuleCompiler, RuleError, SyntaxRules, ToolPattern,
    WordsError, WordsToken,
};
