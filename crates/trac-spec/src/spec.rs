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
//!   `the`). (`trac_runtime::labeler::WordsPattern` has the details.)
//! - `Regex(r)`: a `regex` crate regex, searched anywhere in the text; the named group
//!   `(?P<param>...)` gives the parameter value.
//!
//! This crate holds rules as data and checks their syntax; their meaning (the regexes they
//! compile to, matching) is in `trac_runtime::labeler`, which also checks the regexes
//! (`trac_runtime::labeler::check_spec`).
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

use crate::formula::{Arena, AtomName, Formula};
use crate::parser::{parse_property, ParseError};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::Path;

/// A spec file: propositions with their labeling rules, and the properties to monitor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// The spec's name (for reports).
    pub name: String,
    /// Free text describing the spec.
    #[serde(default)]
    pub description: String,
    /// Labeling rules match case-sensitively; by default they ignore case and lowercase the
    /// captured values.
    #[serde(default)]
    pub case_sensitive: bool,
    /// The atomic propositions. When empty, formulas may use any atom, taken from the labels
    /// written in the trace.
    #[serde(default)]
    pub propositions: Vec<PropositionDecl>,
    /// The properties to monitor.
    pub properties: Vec<PropertyDecl>,
    /// Where the spec was read from, used by [`Spec::check`] to point errors into the file;
    /// `None` for a spec built in code (errors then name only the spec). Not part of the RON.
    #[serde(skip)]
    pub source: Option<SpecSource>,
}

/// The file name and text a [`Spec`] was read from.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SpecSource {
    /// The file name as given to [`Spec::from_str`] (or the path of [`Spec::from_path`]).
    pub file: String,
    /// The full RON text.
    pub text: String,
}

/// An atomic proposition, optionally with one parameter (`take(item)`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct PropositionDecl {
    /// The proposition's name, used in formulas (`take`, `look`).
    pub name: String,
    /// The parameter's name, for a parametric proposition: its labels are `name(value)`.
    #[serde(default)]
    pub param: Option<String>,
    /// Plain-English description; may contain the `{param}` placeholder, e.g.
    /// `"the agent takes {item}"`.
    #[serde(default)]
    pub description: String,
    /// How to compute the proposition from an action's text; `None`: the label must come from the
    /// trace (or from an LLM, see `labeler`).
    #[serde(default)]
    pub rule: Option<Rule>,
    /// Which labeling function decides the proposition: its `rule` (the default), an `Llm`, or
    /// `Both` (the rule first, the LLM when the rule does not hold). Used by `trac audit` with a
    /// model; `--labeler rules|llm|hybrid` overrides it for every proposition.
    #[serde(default)]
    pub labeler: LabelerChoice,
    /// Labeled examples shown to an LLM labeler: `(text: "take the knife", holds: true)`, or for
    /// a parametric proposition `(text: "take the knife", values: ["knife"])`.
    #[serde(default)]
    pub examples: Vec<LabelExample>,
}

/// Which labeling function decides a proposition (the field `labeler` of a proposition).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum LabelerChoice {
    /// The proposition's rule (and the labels written in the trace).
    #[default]
    Rule,
    /// An LLM, asked once per step for all such propositions.
    Llm,
    /// The rule first; where it does not hold, the LLM.
    Both,
}

/// An example of a proposition's labeling, shown to an LLM labeler.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct LabelExample {
    /// A step's text.
    pub text: String,
    /// Whether the proposition holds at that step (for a parametric proposition: whether it
    /// holds for some value; `values` then lists them). Default `true`.
    #[serde(default = "yes")]
    pub holds: bool,
    /// For a parametric proposition, the values it holds for.
    #[serde(default)]
    pub values: Vec<String>,
}

fn yes() -> bool {
    true
}

impl PropositionDecl {
    /// The parameter names: none, one (`param: Some("item")`), or several separated by commas
    /// (`param: Some("pkg, area")`: labels `load(package1, a1)`, values in this order).
    pub fn params(&self) -> Vec<&str> {
        self.param
            .as_deref()
            .map(|p| p.split(',').map(str::trim).collect())
            .unwrap_or_default()
    }

    /// The description with the `{param}` placeholder replaced by `value` (left as is when
    /// `value` is `None` or the proposition has no parameter). Falls back to the name when the
    /// description is empty.
    pub fn describe(&self, value: Option<&str>) -> String {
        if self.description.is_empty() {
            return match value {
                Some(v) => format!("{}({})", self.name, v),
                None => self.name.clone(),
            };
        }
        match value {
            Some(v) if self.param.is_some() => {
                let mut out = self.description.clone();
                let params = self.params();
                let vals: Vec<&str> = if params.len() > 1 {
                    v.split(", ").collect()
                } else {
                    vec![v]
                };
                for (p, v) in params.iter().zip(vals) {
                    out = out.replace(&format!("{{{p}}}"), v);
                }
                out
            }
            _ => self.description.clone(),
        }
    }
}

/// A labeling rule, evaluated on an action's text. See the [module docs](self) for the
/// semantics.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Rule {
    /// A word sequence with optional `{x}` / `{x...}` placeholders.
    Words(String),
    /// A regex (regex crate syntax), searched anywhere in the text.
    Regex(String),
    /// Holds when any of the rules holds; values are the union of theirs.
    AnyOf(Vec<Rule>),
    /// Holds when all of the rules hold; values come from the first rule that captures any.
    AllOf(Vec<Rule>),
    /// Holds when the rule does not; captures nothing.
    Not(Box<Rule>),
    /// Holds when the event's role (`system`, `user`, `assistant`, `tool`; chat and telemetry
    /// traces) is this one, ignoring ASCII case.
    Role(String),
    /// Holds when the event calls a tool whose name matches this glob (`*` any run of
    /// characters, `?` one character; case-sensitive), e.g. `Tool("update_*")`.
    Tool(String),
    /// Holds when the value at `path` inside a tool call's arguments exists (and, when `pattern`
    /// is given, its text matches that regex); `capture` names the parameter that gets the value.
    /// `path` is a JSONPath subset: `$`, `.name`, `['name']`, `[N]`, `[*]` / `.*` (see
    /// [`parse_arg_path`]). Written `Arg(path: "$.reservation_id", capture: Some("rid"))`.
    Arg {
        /// The path into the arguments object, e.g. `$.passengers[0].name`.
        path: String,
        /// A regex (regex crate syntax) the value's text must match; `None`: any value.
        #[serde(default)]
        pattern: Option<String>,
        /// The parameter the value is captured as.
        #[serde(default)]
        capture: Option<String>,
    },
    /// `Field(name, regex)`: holds when the event's field `name` (a field of the log record, or
    /// one of `role`, `tool_name`, `tool_call_id`, `session`, `timestamp`, `input`, `output`)
    /// has a text matching the regex; named groups capture, as in `Regex`.
    Field(String, String),
    /// The `Words` / `Regex` rules inside read the event's input (what the agent saw) only.
    Input(Box<Rule>),
    /// The `Words` / `Regex` rules inside read the event's output (what the agent did) only.
    Output(Box<Rule>),
}

/// One step of an [`Rule::Arg`] path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathStep {
    /// `.name` or `['name']`: a field of an object.
    Key(String),
    /// `[N]`: an element of an array (0-based).
    Index(usize),
    /// `[*]` or `.*`: every element of an array, or every value of an object.
    Any,
}

/// Parses the JSONPath subset of [`Rule::Arg`]: `$` followed by steps `.name` (an identifier:
/// letters, digits, `_`, `-`), `['name']` / `["name"]`, `[N]`, `[*]` or `.*`.
///
/// # Errors
/// `(byte offset, message)` for the first malformed step.
pub fn parse_arg_path(path: &str) -> Result<Vec<PathStep>, (usize, String)> {
    let b = path.as_bytes();
    if b.first() != Some(&b'$') {
        return Err((0, "a path starts with `$`".into()));
    }
    let mut i = 1;
    let mut out = Vec::new();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
    while i < b.len() {
        match b[i] {
            b'.' => {
                i += 1;
                if b.get(i) == Some(&b'*') {
                    out.push(PathStep::Any);
                    i += 1;
                    continue;
                }
                let start = i;
                while i < b.len() && ident(b[i]) {
                    i += 1;
                }
                if start == i {
                    return Err((start, "expected a field name after `.`".into()));
                }
                out.push(PathStep::Key(path[start..i].to_string()));
            }
            b'[' => {
                let close = path[i..]
                    .find(']')
                    .map(|k| i + k)
                    .ok_or((i, "unclosed `[`".to_string()))?;
                let inner = path[i + 1..close].trim();
                let step = if inner == "*" {
                    PathStep::Any
                } else if let Ok(n) = inner.parse::<usize>() {
                    PathStep::Index(n)
                } else if inner.len() >= 2
                    && (inner.starts_with('\'') && inner.ends_with('\'')
                        || inner.starts_with('"') && inner.ends_with('"'))
                {
                    PathStep::Key(inner[1..inner.len() - 1].to_string())
                } else {
                    return Err((
                        i,
                        format!("expected `[N]`, `[*]` or `['name']`, found `[{inner}]`"),
                    ));
                };
                out.push(step);
                i = close + 1;
            }
            _ => {
                return Err((
                    i,
                    format!(
                        "unexpected `{}`: expected `.name`, `[N]`, `[*]` or `['name']`",
                        &path[i..].chars().next().unwrap_or(' ')
                    ),
                ))
            }
        }
    }
    Ok(out)
}

/// Matches `text` against a glob: `*` any run of characters, `?` one character, anything else
/// itself. O(|glob| * |text|).
pub fn glob_match(glob: &str, text: &str) -> bool {
    trac_core::names::glob_match(glob, text)
}

impl Rule {
    /// The leaves of the rule (every variant but `AnyOf`, `AllOf`, `Not`, `Input`, `Output`),
    /// in pre-order (the order they are written).
    pub fn leaves(&self) -> Vec<&Rule> {
        let mut out = Vec::new();
        fn rec<'a>(r: &'a Rule, out: &mut Vec<&'a Rule>) {
            match r {
                Rule::AnyOf(v) | Rule::AllOf(v) => v.iter().for_each(|c| rec(c, out)),
                Rule::Not(c) | Rule::Input(c) | Rule::Output(c) => rec(c, out),
                _ => out.push(r),
            }
        }
        rec(self, &mut out);
        out
    }

    /// How many string literals the leaf is written with in RON (`Field` two, `Arg` its path
    /// plus its `pattern` and `capture` when given, others one); 0 for a non-leaf.
    pub fn literals(&self) -> usize {
        match self {
            Rule::Words(_) | Rule::Regex(_) | Rule::Role(_) | Rule::Tool(_) => 1,
            Rule::Field(..) => 2,
            Rule::Arg {
                pattern, capture, ..
            } => 1 + usize::from(pattern.is_some()) + usize::from(capture.is_some()),
            _ => 0,
        }
    }

    /// True when the rule has a `Tool` or `Arg` leaf (it is then evaluated once per tool call
    /// of an event).
    pub fn reads_tool_calls(&self) -> bool {
        self.leaves()
            .iter()
            .any(|l| matches!(l, Rule::Tool(_) | Rule::Arg { .. }))
    }
}

/// One token of a `Words` pattern (the syntax; `trac_runtime::labeler::WordsPattern` gives it
/// its meaning as a regex).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WordsToken {
    /// A word: a maximal run of letters, digits and `_`.
    Word(String),
    /// `{x}`: a placeholder capturing exactly one word.
    One(String),
    /// `{x...}`: a placeholder capturing one or more words.
    Many(String),
}

/// A malformed `Words` pattern (byte offsets into the pattern).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WordsError {
    /// A `{` without its `}`.
    #[error("unclosed `{{` at byte {at} in Words pattern {pattern:?}")]
    Unclosed {
        /// Byte offset of the `{`.
        at: usize,
        /// The pattern.
        pattern: String,
    },
    /// A `}` without a `{`.
    #[error("stray `}}` at byte {at} in Words pattern {pattern:?}")]
    Stray {
        /// Byte offset of the `}`.
        at: usize,
        /// The pattern.
        pattern: String,
    },
    /// A placeholder that is not `{name}` or `{name...}`.
    #[error("invalid placeholder `{{{inner}}}` in Words pattern {pattern:?}: expected `{{name}}` or `{{name...}}`")]
    Placeholder {
        /// The text between the braces.
        inner: String,
        /// The pattern.
        pattern: String,
    },
    /// A placeholder used twice.
    #[error("placeholder `{{{name}}}` appears twice in Words pattern {pattern:?}")]
    Twice {
        /// The placeholder's name.
        name: String,
        /// The pattern.
        pattern: String,
    },
    /// A pattern without any word or placeholder.
    #[error("Words pattern {pattern:?} has no words")]
    Empty {
        /// The pattern.
        pattern: String,
    },
}

/// A labeling rule's leaf that does not compile (see [`RuleCompiler`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// A malformed `Words` pattern.
    #[error(transparent)]
    Words(#[from] WordsError),
    /// A regex the regex engine rejects, with the engine's one-line message.
    #[error("invalid regex: {0}")]
    Regex(String),
    /// A malformed `Arg` path.
    #[error("invalid argument path: {0}")]
    Path(String),
}

/// The tokens of a `Words` pattern such as `"take {item...} from {place}"`.
///
/// # Errors
/// A [`WordsError`]: an unclosed `{` or a stray `}` (with its byte offset), a placeholder name
/// that is not an identifier, a placeholder used twice, a pattern without any word or
/// placeholder.
pub fn words_tokens(pattern: &str) -> Result<Vec<WordsToken>, WordsError> {
    let mut toks = Vec::new();
    let mut chars = pattern.char_indices().peekable();
    let mut word = String::new();
    while let Some((i, c)) = chars.next() {
        if is_word_char(c) {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            toks.push(WordsToken::Word(std::mem::take(&mut word)));
        }
        if c == '{' {
            let mut inner = String::new();
            let mut closed = false;
            for (_, d) in chars.by_ref() {
                if d == '}' {
                    closed = true;
                    break;
                }
                inner.push(d);
            }
            if !closed {
                return Err(WordsError::Unclosed {
                    at: i,
                    pattern: pattern.to_string(),
                });
            }
            let inner = inner.trim();
            let (name, many) = match inner.strip_suffix("...") {
                Some(n) => (n.trim(), true),
                None => (inner, false),
            };
            if !is_identifier(name) {
                return Err(WordsError::Placeholder {
                    inner: inner.to_string(),
                    pattern: pattern.to_string(),
                });
            }
            toks.push(if many {
                WordsToken::Many(name.to_string())
            } else {
                WordsToken::One(name.to_string())
            });
        } else if c == '}' {
            return Err(WordsError::Stray {
                at: i,
                pattern: pattern.to_string(),
            });
        }
    }
    if !word.is_empty() {
        toks.push(WordsToken::Word(word));
    }
    if toks.is_empty() {
        return Err(WordsError::Empty {
            pattern: pattern.to_string(),
        });
    }
    let mut placeholders: Vec<&str> = Vec::new();
    for t in &toks {
        if let WordsToken::One(name) | WordsToken::Many(name) = t {
            if placeholders.contains(&name.as_str()) {
                return Err(WordsError::Twice {
                    name: name.to_string(),
                    pattern: pattern.to_string(),
                });
            }
            placeholders.push(name);
        }
    }
    Ok(toks)
}

/// The placeholder names of a `Words` pattern, in order (see [`words_tokens`]).
///
/// # Errors
/// As [`words_tokens`].
pub fn words_placeholders(pattern: &str) -> Result<Vec<String>, WordsError> {
    Ok(words_tokens(pattern)?
        .into_iter()
        .filter_map(|t| match t {
            WordsToken::One(n) | WordsToken::Many(n) => Some(n),
            WordsToken::Word(_) => None,
        })
        .collect())
}

/// How [`Spec::check_with`] checks the `Words` and `Regex` leaves of labeling rules.
/// `trac_runtime::labeler::RegexRules` compiles them as the labeler will;
/// [`SyntaxRules`] (what [`Spec::check`] uses) needs no regex engine.
pub trait RuleCompiler {
    /// Checks one `Words` or `Regex` leaf (matching case-sensitively iff `case_sensitive`) and
    /// returns the names of the parameters it captures.
    ///
    /// # Errors
    /// What is wrong with the leaf (reported after the proposition's name).
    fn leaf(&self, leaf: &Rule, case_sensitive: bool) -> Result<Vec<String>, RuleError>;
}

/// The named groups `(?P<x>` / `(?<x>` written in a regex's text.
pub fn regex_group_names(r: &str) -> Vec<String> {
    ["(?P<", "(?<"]
        .iter()
        .flat_map(|open| r.match_indices(open).map(|(i, _)| &r[i + open.len()..]))
        .filter_map(|rest| rest.split_once('>').map(|(name, _)| name.to_string()))
        .collect()
}

/// The checks [`Spec::check`] makes without a regex engine: `Words` patterns fully
/// ([`words_tokens`]); a `Regex` is not compiled, its named groups `(?P<x>` / `(?<x>` are read
/// from the text. Invalid regexes are found by `trac_runtime::labeler::check_spec`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SyntaxRules;

impl RuleCompiler for SyntaxRules {
    fn leaf(&self, leaf: &Rule, _case_sensitive: bool) -> Result<Vec<String>, RuleError> {
        match leaf {
            Rule::Words(w) => Ok(words_placeholders(w)?),
            Rule::Regex(r) | Rule::Field(_, r) => Ok(regex_group_names(r)),
            Rule::Arg { path, capture, .. } => {
                parse_arg_path(path)
                    .map_err(|(at, m)| RuleError::Path(format!("{m} at byte {at} of {path:?}")))?;
                Ok(capture.iter().cloned().collect())
            }
            _ => Ok(Vec::new()),
        }
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn is_identifier(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A property to monitor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct PropertyDecl {
    /// Identifier used in reports (`R1`); unique in the spec.
    pub id: String,
    /// Plain-English statement of the rule.
    #[serde(default)]
    pub description: String,
    /// `[forall VAR:] FORMULA` in Spot syntax.
    pub formula: String,
    /// How the end of the trace is judged.
    #[serde(default)]
    pub semantics: Semantics,
    /// After the property is satisfied, start monitoring it afresh at the next step (TRAC_R).
    #[serde(default)]
    pub reset_on_satisfaction: bool,
}

pub use trac_core::Semantics;

/// A checked spec: every formula parsed, every atom accounted for.
#[derive(Clone, Debug)]
pub struct CheckedSpec {
    /// The spec as read.
    pub spec: Spec,
    /// One entry per property, in the spec's order.
    pub properties: Vec<CheckedProperty>,
}

impl CheckedSpec {
    /// Proposition name → description (possibly with a `{param}` placeholder).
    /// Propositions without a description are left out, so renderers fall back to the name.
    pub fn descriptions(&self) -> HashMap<String, String> {
        self.spec
            .propositions
            .iter()
            .filter(|p| !p.description.trim().is_empty())
            .map(|p| (p.name.clone(), p.description.clone()))
            .collect()
    }
}

/// A property with its parsed formula.
#[derive(Clone, Debug)]
pub struct CheckedProperty {
    /// The declaration.
    pub decl: PropertyDecl,
    /// The property's own arena, holding `formula`.
    pub arena: Arena,
    /// The quantified variable of `forall VAR: ...`, if any.
    pub var: Option<String>,
    /// The body of the formula (with `var` free when quantified).
    pub formula: Formula,
}

/// One problem found in a spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The spec file's name.
    pub file: String,
    /// 1-based line and column (in characters) in the file, when known.
    pub position: Option<(usize, usize)>,
    /// What is wrong; may span several lines (e.g. a caret rendering of a formula).
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some((l, c)) => write!(f, "{}:{}:{}: {}", self.file, l, c, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// Errors reading or checking a spec: one or more [`Diagnostic`]s, sorted by position.
///
/// Displays as one `file:line:column: message` per diagnostic, separated by newlines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// The problems, in order of position in the file (those without a position last).
    pub diagnostics: Vec<Diagnostic>,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SpecError {}

impl SpecError {
    fn single(file: &str, position: Option<(usize, usize)>, message: String) -> SpecError {
        SpecError {
            diagnostics: vec![Diagnostic {
                file: file.to_string(),
                position,
                message,
            }],
        }
    }
}

impl Spec {
    /// Reads a spec from a RON file. The spec remembers the path and text (see
    /// [`Spec::source`]) so that [`Spec::check`] can point into the file.
    ///
    /// Errors: the file cannot be read (`path: cannot read spec: ...`), or as [`Spec::from_str`].
    pub fn from_path(path: &Path) -> Result<Spec, SpecError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| SpecError::single(&file, None, format!("cannot read spec: {e}")))?;
        // A UTF-8 byte-order mark (Windows editors write one) is not part of the text.
        Spec::from_str(text.strip_prefix('\u{feff}').unwrap_or(&text), &file)
    }

    /// Where proposition `i` of the spec is declared: `(file, line, column)` of its `name`'s
    /// value in the file it was read from ([`Spec::source`]); `None` for a spec built in code
    /// or an index out of range. O(size of the file) (the file is scanned again).
    pub fn proposition_position(&self, i: usize) -> Option<(String, usize, usize)> {
        let src = self.source.as_ref()?;
        let map = SourceMap::build(&src.text);
        let item = map.propositions.get(i)?;
        let (line, col) = line_col(&src.text, item.value_start("name"));
        Some((src.file.clone(), line, col))
    }

    /// Reads a spec from RON text; `file` names it in error messages. `Some(..)` around optional
    /// values may be omitted (ron's `implicit_some`).
    ///
    /// Errors: a RON syntax error or a value of the wrong shape (unknown field, missing field,
    /// wrong type), as `file:line:column: message` with ron's position.
    ///
    /// A text with nothing but whitespace and comments is an error of its own (`empty spec
    /// file: ...`, saying what a spec looks like), not ron's "expected opening `(`".
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(src: &str, file: &str) -> Result<Spec, SpecError> {
        if is_blank_ron(src) {
            return Err(SpecError::single(
                file,
                None,
                "empty spec file: a spec is `(name: \"...\", propositions: [(name: \"p\", rule: Some(Words(\"...\"))), ...], properties: [(id: \"R1\", formula: \"G !p\"), ...])` (see examples/specs/)".into(),
            ));
        }
        let options = ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
        match options.from_str::<Spec>(src) {
            Ok(mut spec) => {
                spec.source = Some(SpecSource {
                    file: file.to_string(),
                    text: src.to_string(),
                });
                Ok(spec)
            }
            Err(e) => {
                let pos = (e.position.line > 0).then_some((e.position.line, e.position.col));
                // ron writes "named `x`in `Spec`"; add the missing space.
                let msg = e.code.to_string().replace("`in ", "` in ");
                Err(SpecError::single(file, pos, msg))
            }
        }
    }

    /// Parses every property's formula (each in a fresh [`Arena`]) and checks the spec.
    ///
    /// Errors (all of them are reported, sorted by position in the file):
    /// - duplicate proposition names or property ids, empty names, parameters that are not
    ///   identifiers;
    /// - a labeling rule that does not compile (bad regex, malformed `Words` pattern), a
    ///   placeholder in a proposition without parameter or naming another parameter, a rule of a
    ///   parametric proposition that does not capture its parameter;
    /// - a formula that does not parse (with a caret rendering of the formula);
    /// - an atom that is not a declared proposition (unless the spec declares none), a parameter
    ///   given to a proposition that has none or missing for one that has one, a variable
    ///   (a declared parameter name) used without `forall`, a `forall` variable never used.
    ///
    /// Labeling rules are checked by [`SyntaxRules`] (regexes are not compiled); see
    /// [`Spec::check_with`].
    pub fn check(&self) -> Result<CheckedSpec, SpecError> {
        self.check_with(&SyntaxRules)
    }

    /// [`Spec::check`] with the leaves of labeling rules checked by `rules` (for a full check,
    /// `trac_runtime::labeler::check_spec` passes the regex compiler of the labelers).
    ///
    /// # Errors
    /// As [`Spec::check`], the messages of `rules` included.
    pub fn check_with(&self, rules: &dyn RuleCompiler) -> Result<CheckedSpec, SpecError> {
        let mut cx = CheckCx::new(self, rules);
        cx.check_propositions();
        let properties = cx.check_properties();
        if cx.diags.is_empty() {
            Ok(CheckedSpec {
                spec: self.clone(),
                properties,
            })
        } else {
            let mut diags = cx.diags;
            diags.sort_by_key(|d| d.position.unwrap_or((usize::MAX, usize::MAX)));
            Err(SpecError { diagnostics: diags })
        }
    }
}

struct CheckCx<'a> {
    spec: &'a Spec,
    file: String,
    text: &'a str,
    map: SourceMap,
    diags: Vec<Diagnostic>,
    rules: &'a dyn RuleCompiler,
}

impl<'a> CheckCx<'a> {
    fn new(spec: &'a Spec, rules: &'a dyn RuleCompiler) -> CheckCx<'a> {
        let (file, text) = match &spec.source {
            Some(s) => (s.file.clone(), s.text.as_str()),
            None => (format!("spec `{}`", spec.name), ""),
        };
        let map = SourceMap::build(text);
        CheckCx {
            spec,
            file,
            text,
            map,
            diags: Vec::new(),
            rules,
        }
    }

    fn error(&mut self, offset: Option<usize>, message: String) {
        let position = offset.map(|o| line_col(self.text, o));
        self.diags.push(Diagnostic {
            file: self.file.clone(),
            position,
            message,
        });
    }

    fn prop_item(&self, i: usize) -> Option<&Item> {
        self.map.propositions.get(i)
    }

    fn property_item(&self, i: usize) -> Option<&Item> {
        self.map.properties.get(i)
    }

    fn check_propositions(&mut self) {
        let spec = self.spec;
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (i, p) in spec.propositions.iter().enumerate() {
            let item = self.prop_item(i).cloned();
            let name_at = item.as_ref().map(|it| it.value_start("name"));
            if p.name.trim().is_empty() {
                self.error(name_at, "empty proposition name".into());
            } else if p.name.contains(['(', ')']) {
                self.error(
                    name_at,
                    format!(
                        "invalid proposition name `{}`: use `param` for a parameter, not parentheses",
                        p.name
                    ),
                );
            }
            if let Some(&first) = seen.get(p.name.as_str()) {
                let first_at = self
                    .prop_item(first)
                    .map(|it| line_col(self.text, it.value_start("name")));
                let msg = match first_at {
                    Some((l, c)) => format!(
                        "duplicate proposition `{}` (first declared at {l}:{c})",
                        p.name
                    ),
                    None => format!("duplicate proposition `{}`", p.name),
                };
                self.error(name_at, msg);
            } else {
                seen.insert(&p.name, i);
            }
            if let Some(param) = &p.param {
                if !param.split(',').all(|x| is_identifier(x.trim())) {
                    let at = item.as_ref().map(|it| it.value_start("param"));
                    self.error(
                        at,
                        format!(
                            "proposition `{}`: parameter `{param}` is not an identifier",
                            p.name
                        ),
                    );
                }
            }
            if let Some(rule) = &p.rule {
                self.check_rule(p, rule, item.as_ref());
            }
            if p.labeler == LabelerChoice::Both && p.rule.is_none() {
                let at = item.as_ref().map(|it| it.value_start("labeler"));
                self.error(
                    at,
                    format!(
                        "proposition `{}`: `labeler: Both` needs a `rule` (use `Llm` for a proposition without one)",
                        p.name
                    ),
                );
            }
            for ex in &p.examples {
                if p.param.is_none() && !ex.values.is_empty() {
                    let at = item.as_ref().map(|it| it.value_start("examples"));
                    self.error(
                        at,
                        format!(
                            "proposition `{}`: an example gives `values`, but the proposition has no `param`",
                            p.name
                        ),
                    );
                }
            }
        }
    }

    fn check_rule(&mut self, p: &PropositionDecl, rule: &Rule, item: Option<&Item>) {
        let lits: Vec<usize> = item
            .and_then(|it| it.fields.get("rule"))
            .map(|f| f.strings.iter().map(|s| s.start).collect())
            .unwrap_or_default();
        let rule_at = item.map(|it| it.value_start("rule"));
        let mut ok = true;
        if let Some(kind) = empty_combinator(rule) {
            // `AllOf([])` holds at every step and `AnyOf([])` at none: never what was meant.
            self.error(
                rule_at,
                format!(
                    "proposition `{}`: an empty {kind}([]) (it would hold {}); give it at least one rule",
                    p.name,
                    if kind == "AllOf" { "at every step" } else { "at no step" }
                ),
            );
            ok = false;
        }
        let mut lit = 0;
        for leaf in rule.leaves() {
            // A `Field`'s errors are about its regex, its second literal.
            let k = lit + usize::from(matches!(leaf, Rule::Field(..)));
            let at = lits.get(k).copied().or(rule_at);
            lit += leaf.literals();
            let names = match self.rules.leaf(leaf, self.spec.case_sensitive) {
                Ok(names) => names,
                Err(m) => {
                    self.error(at, format!("proposition `{}`: {m}", p.name));
                    ok = false;
                    continue;
                }
            };
            if let Rule::Words(_) | Rule::Arg { .. } = leaf {
                for name in names {
                    match &p.param {
                        None => {
                            self.error(
                                at,
                                format!(
                                    "proposition `{}`: placeholder `{{{name}}}` but the proposition has no `param`",
                                    p.name
                                ),
                            );
                            ok = false;
                        }
                        Some(param) if !param.split(',').any(|x| x.trim() == name) => {
                            self.error(
                                at,
                                format!(
                                    "proposition `{}`: placeholder `{{{name}}}` is not its parameter `{param}`",
                                    p.name
                                ),
                            );
                            ok = false;
                        }
                        _ => {}
                    }
                }
            }
        }
        if ok {
            if p.params().len() > 1
                && rule.leaves().iter().any(|l| {
                    matches!(
                        l,
                        Rule::Arg {
                            capture: Some(_),
                            ..
                        }
                    )
                })
            {
                self.error(
                    rule_at,
                    format!(
                        "proposition `{}`: its parameters ({}) must be captured together by one match of a Words, Regex or Field leaf; an `Arg` capture gives one value",
                        p.name,
                        p.params().join(", ")
                    ),
                );
            }
            for param in p.params() {
                if !captures(rule, param, self.rules) {
                    self.error(
                        rule_at,
                        format!(
                            "proposition `{}`: the rule does not capture parameter `{param}`: use `{{{param}}}` or `{{{param}...}}` in Words, `(?P<{param}>...)` in Regex{}",
                            p.name,
                            if matches!(rule, Rule::AnyOf(_)) {
                                " (every alternative of AnyOf must capture it)"
                            } else {
                                ""
                            }
                        ),
                    );
                }
            }
        }
    }

    fn check_properties(&mut self) -> Vec<CheckedProperty> {
        let spec = self.spec;
        let declared = Declared::new(spec);
        let mut out = Vec::new();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (i, decl) in spec.properties.iter().enumerate() {
            let item = self.property_item(i).cloned();
            self.check_property_id(i, decl, item.as_ref(), &mut seen);
            out.extend(self.check_property(decl, item.as_ref(), &declared));
        }
        out
    }

    /// The id of property `i`: not empty, not declared before (`seen`: the first index of each
    /// id so far).
    fn check_property_id<'s>(
        &mut self,
        i: usize,
        decl: &'s PropertyDecl,
        item: Option<&Item>,
        seen: &mut HashMap<&'s str, usize>,
    ) {
        let id_at = item.map(|it| it.value_start("id"));
        if decl.id.trim().is_empty() {
            self.error(id_at, "empty property id".into());
        }
        if let Some(&first) = seen.get(decl.id.as_str()) {
            let first_at = self
                .property_item(first)
                .map(|it| line_col(self.text, it.value_start("id")));
            let msg = match first_at {
                Some((l, c)) => format!(
                    "duplicate property id `{}` (first declared at {l}:{c})",
                    decl.id
                ),
                None => format!("duplicate property id `{}`", decl.id),
            };
            self.error(id_at, msg);
        } else {
            seen.insert(&decl.id, i);
        }
    }

    /// One property: its formula parsed, its atoms checked against the declared propositions
    /// and its quantified variables; `None` if the formula does not parse.
    fn check_property(
        &mut self,
        decl: &PropertyDecl,
        item: Option<&Item>,
        declared: &Declared<'_>,
    ) -> Option<CheckedProperty> {
        let lit = item
            .and_then(|it| it.fields.get("formula"))
            .and_then(|f| f.strings.first().cloned());
        let text = self.text;
        let locate =
            |off: usize| -> Option<usize> { lit.as_ref().map(|l| l.source_offset(text, off)) };
        let mut arena = Arena::new();
        let parsed = match parse_property(&mut arena, &decl.formula) {
            Ok(p) => p,
            Err(e) => {
                let at = locate(e.span.start);
                // The caret rendering shows the spec file's line, under the error's column.
                let in_file = at.zip(locate(e.span.end)).map(|(start, end)| ParseError {
                    message: e.message.clone(),
                    span: start..end.max(start),
                });
                let msg = match &in_file {
                    Some(fe) => parse_message(&decl.id, fe, self.text),
                    None => parse_message(&decl.id, &e, &decl.formula),
                };
                self.error(at, msg);
                return None;
            }
        };
        let vars: Vec<String> = parsed.vars().into_iter().map(String::from).collect();
        let mut pcx = PropertyCx {
            pid: &decl.id,
            formula: &decl.formula,
            text,
            lit: lit.clone(),
            used: vec![false; vars.len()],
            vars,
            quantified: parsed.var.as_deref(),
        };
        let todo = self.atoms_to_check(&arena, parsed.body, &mut pcx);
        for (parts, bound) in todo {
            self.check_atom(&mut pcx, &parts, bound.as_deref(), declared);
        }
        for (var, used) in pcx.vars.iter().zip(&pcx.used) {
            if !used {
                let pid = pcx.pid;
                self.error(
                    pcx.locate(find_atom(pcx.formula, var, var)),
                    format!(
                        "property `{pid}`: quantified variable `{var}` is not used in the formula"
                    ),
                );
            }
        }
        Some(CheckedProperty {
            decl: decl.clone(),
            arena,
            var: parsed.var,
            formula: parsed.body,
        })
    }

    /// The atoms of a property to check, with the variables bound where they occur: the
    /// property's `forall` variable, and inside `exists v: body` also `v` (the atoms of the
    /// body). Checks the `exists` quantifiers themselves.
    fn atoms_to_check(
        &mut self,
        arena: &Arena,
        body: Formula,
        pcx: &mut PropertyCx<'_>,
    ) -> Vec<(AtomName, Option<String>)> {
        let pid = pcx.pid;
        let mut todo: Vec<(AtomName, Option<String>)> = Vec::new();
        for sym in arena.atoms(body) {
            let parts = arena.sym_parts(sym).clone();
            let Some((evar, body)) = trac_ltl::parser::split_exists(&parts.name) else {
                todo.push((parts, None));
                continue;
            };
            let at = pcx.locate(pcx.formula.find("exists").unwrap_or(0));
            let mut inner = Arena::new();
            match trac_ltl::parse(&mut inner, body) {
                Ok(b) => {
                    if pcx.is_var(evar) {
                        self.error(at, format!(
                        "property `{pid}`: `exists {evar}: ...` reuses `{evar}`, a variable of the `forall`: name the quantifier's variable differently"
                    ));
                    }
                    let mut mentioned: Vec<String> = Vec::new();
                    for s in inner.atoms(b) {
                        let ip = inner.sym_parts(s).clone();
                        let args = ip.arg.clone().unwrap_or_default();
                        // The body may mention a `forall` variable: the quantifier is
                        // then evaluated per value of it (`trac_runtime::derived`).
                        for a in args.split(", ") {
                            if a != evar {
                                pcx.mark(a);
                                if pcx.is_var(a) && !mentioned.iter().any(|m| m == a) {
                                    mentioned.push(a.to_string());
                                }
                            }
                        }
                        todo.push((ip, Some(evar.to_string())));
                    }
                    if mentioned.len() > 1 {
                        self.error(at, format!(
                        "property `{pid}`: `exists {evar}: ...` mentions {} variables of the `forall` ({}): a quantifier's body may mention one of them (not supported yet)",
                        mentioned.len(),
                        mentioned.join(", ")
                    ));
                    }
                }
                Err(e) => self.error(at, format!("property `{pid}`: {}", e.message)),
            }
        }
        todo
    }

    /// One atom of a property (`bound`: the variable of the `exists` it is in): a declared
    /// proposition, with as many arguments as it has parameters, each a quantified variable or
    /// a value.
    fn check_atom(
        &mut self,
        pcx: &mut PropertyCx<'_>,
        parts: &AtomName,
        bound: Option<&str>,
        declared: &Declared<'_>,
    ) {
        let pid = pcx.pid;
        let at = pcx.locate(find_atom(pcx.formula, &parts.name, &parts.base));
        let args: Vec<&str> = parts
            .arg
            .as_deref()
            .map(|a| a.split(", ").collect())
            .unwrap_or_default();
        if bound.is_none() {
            for a in &args {
                pcx.mark(a);
            }
        }
        if declared.props.is_empty() {
            return;
        }
        let Some(p) = declared.props.get(parts.base.as_str()) else {
            self.error(
                at,
                format!(
                    "property `{pid}`: unknown proposition `{}`; declared: {}",
                    parts.base,
                    declared.names.join(", ")
                ),
            );
            return;
        };
        let want = p.params();
        match (&p.param, &parts.arg) {
            (None, Some(arg)) => self.error(
                at,
                format!(
                    "property `{pid}`: proposition `{}` has no parameter, but is used as `{}({arg})`",
                    p.name, p.name
                ),
            ),
            (Some(param), None) => self.error(
                at,
                format!(
                    "property `{pid}`: proposition `{}` has parameter `{param}`: write `{}(<value>)`, or quantify it: `forall {param}: ... {}({param}) ...`",
                    p.name, p.name, p.name
                ),
            ),
            (Some(param), Some(_)) if args.len() != want.len() => self.error(
                at,
                format!(
                    "property `{pid}`: proposition `{}` has {} parameter{} ({param}), but `{}` gives {}",
                    p.name,
                    want.len(),
                    if want.len() == 1 { "" } else { "s" },
                    parts.name,
                    args.len()
                ),
            ),
            (Some(_), Some(_)) => {
                for arg in &args {
                    let is_bound = pcx.is_var(arg) || Some(*arg) == bound;
                    if !is_bound && declared.params.contains(arg) {
                        self.error(
                            at,
                            format!(
                                "property `{pid}`: variable `{arg}` in `{}` is not quantified: write `forall {arg}: ...`{}",
                                parts.name,
                                match pcx.quantified {
                                    Some(v) => format!(" (the formula quantifies `{v}`)"),
                                    None => String::new(),
                                }
                            ),
                        )
                    }
                }
            }
            (None, None) => {}
        }
    }
}

/// The declared propositions of a spec, as the checks of the properties' atoms read them.
struct Declared<'s> {
    /// By name.
    props: HashMap<&'s str, &'s PropositionDecl>,
    /// The parameters of the parametric ones.
    params: HashSet<&'s str>,
    /// Their names, sorted (for messages).
    names: Vec<&'s str>,
}

impl<'s> Declared<'s> {
    fn new(spec: &'s Spec) -> Declared<'s> {
        let props: HashMap<&str, &PropositionDecl> = spec
            .propositions
            .iter()
            .map(|p| (p.name.as_str(), p))
            .collect();
        let params: HashSet<&str> = spec.propositions.iter().flat_map(|p| p.params()).collect();
        let mut names: Vec<&str> = props.keys().copied().collect();
        names.sort_unstable();
        Declared {
            props,
            params,
            names,
        }
    }
}

/// What the checks of one property's atoms share.
struct PropertyCx<'p> {
    /// The property's id.
    pid: &'p str,
    /// The property's formula.
    formula: &'p str,
    /// The spec file's text.
    text: &'p str,
    /// The formula's string literal in the file, if known.
    lit: Option<Lit>,
    /// The variables of the `forall`.
    vars: Vec<String>,
    /// Per variable of the `forall`: whether some atom uses it.
    used: Vec<bool>,
    /// The `forall` variables as written (`x, y`), for messages.
    quantified: Option<&'p str>,
}

impl PropertyCx<'_> {
    /// The file offset of byte `off` of the formula, if the formula's literal is known.
    fn locate(&self, off: usize) -> Option<usize> {
        self.lit.as_ref().map(|l| l.source_offset(self.text, off))
    }

    /// Whether `a` is a variable of the `forall`.
    fn is_var(&self, a: &str) -> bool {
        self.vars.iter().any(|v| v == a)
    }

    /// Marks the `forall` variable `a` (if it is one) used.
    fn mark(&mut self, a: &str) {
        if let Some(i) = self.vars.iter().position(|v| v == a) {
            self.used[i] = true;
        }
    }
}

/// `property `id`: message` followed by the parser's caret rendering of `src` (the spec file's
/// text, with the error's span in it; or the formula alone, where its position in the file is
/// unknown), indented.
fn parse_message(id: &str, e: &ParseError, src: &str) -> String {
    let rendered = e.render(src);
    let mut lines: Vec<&str> = rendered.lines().collect();
    // The rendering usually starts with the message itself; do not repeat it.
    let first_is_message = lines.first().is_some_and(|l| {
        let l = l.trim();
        l == e.message.trim() || l.strip_prefix("error:").map(str::trim) == Some(e.message.trim())
    });
    if first_is_message {
        lines.remove(0);
    }
    let mut msg = format!("property `{id}`: {}", e.message);
    for l in lines {
        msg.push_str("\n    ");
        msg.push_str(l);
    }
    msg
}

/// Whether every way the rule can hold yields a value for `param`.
/// The first empty `AllOf` / `AnyOf` in `rule`, by name.
fn empty_combinator(rule: &Rule) -> Option<&'static str> {
    match rule {
        Rule::AllOf(v) if v.is_empty() => Some("AllOf"),
        Rule::AnyOf(v) if v.is_empty() => Some("AnyOf"),
        Rule::AllOf(v) | Rule::AnyOf(v) => v.iter().find_map(empty_combinator),
        Rule::Not(r) | Rule::Input(r) | Rule::Output(r) => empty_combinator(r),
        _ => None,
    }
}

fn captures(rule: &Rule, param: &str, rules: &dyn RuleCompiler) -> bool {
    match rule {
        Rule::Words(_) | Rule::Regex(_) | Rule::Field(..) | Rule::Arg { .. } => rules
            .leaf(rule, true)
            .is_ok_and(|names| names.iter().any(|n| n == param)),
        Rule::AnyOf(v) => !v.is_empty() && v.iter().all(|r| captures(r, param, rules)),
        Rule::AllOf(v) => v.iter().any(|r| captures(r, param, rules)),
        Rule::Input(r) | Rule::Output(r) => captures(r, param, rules),
        Rule::Not(_) | Rule::Role(_) | Rule::Tool(_) => false,
    }
}

/// Byte offset in `formula` where the atom is written (0 if not found).
fn find_atom(formula: &str, name: &str, base: &str) -> usize {
    let bounded = |needle: &str| -> Option<usize> {
        if needle.is_empty() {
            return None;
        }
        let mut from = 0;
        while let Some(k) = formula[from..].find(needle) {
            let s = from + k;
            let e = s + needle.len();
            let before = formula[..s].chars().next_back();
            let after = formula[e..].chars().next();
            let ok_before = !before.is_some_and(is_word_char);
            let ok_after = !after.is_some_and(is_word_char) || needle.ends_with(')');
            if ok_before && ok_after {
                return Some(s);
            }
            from = s + needle.len().max(1);
        }
        None
    };
    bounded(name).or_else(|| bounded(base)).unwrap_or(0)
}

/// True when `src` holds only whitespace and RON comments (`// ...`, `/* ... */`).
fn is_blank_ron(src: &str) -> bool {
    let mut rest = src.trim_start();
    loop {
        if rest.is_empty() {
            return true;
        }
        if let Some(r) = rest.strip_prefix("//") {
            rest = r
                .split_once('\n')
                .map_or("", |(_, after)| after)
                .trim_start();
        } else if let Some(r) = rest.strip_prefix("/*") {
            match r.split_once("*/") {
                Some((_, after)) => rest = after.trim_start(),
                None => return false,
            }
        } else {
            return false;
        }
    }
}

/// 1-based line and column (in characters) of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |k| k + 1);
    (line, text[line_start..offset].chars().count() + 1)
}

// ---------------------------------------------------------------------------------------------
// A lenient scanner of the RON text, run after ron accepted it, that finds where the fields of
// each proposition and property are written.

/// A string literal in the RON source.
#[derive(Clone, Debug)]
struct Lit {
    /// Offset of the literal's first byte (`"` or `r`).
    start: usize,
    /// Offset of the first byte of the content.
    content: usize,
    /// Offset just past the content (before the closing quote).
    content_end: usize,
    raw: bool,
}

impl Lit {
    /// The source offset of byte `off` of the decoded string.
    fn source_offset(&self, text: &str, off: usize) -> usize {
        if self.raw {
            return (self.content + off).min(self.content_end);
        }
        let body = &text[self.content..self.content_end];
        let mut decoded = 0usize;
        let mut it = body.char_indices().peekable();
        while let Some((i, c)) = it.next() {
            if decoded >= off {
                return self.content + i;
            }
            if c != '\\' {
                decoded += c.len_utf8();
                continue;
            }
            let esc = it.next().map(|(_, e)| e);
            let ch = match esc {
                Some('x') => {
                    let h: String = (0..2).filter_map(|_| it.next().map(|(_, d)| d)).collect();
                    u8::from_str_radix(&h, 16).map_or('?', char::from)
                }
                Some('u') => {
                    let mut h = String::new();
                    for (_, d) in it.by_ref() {
                        if d == '}' {
                            break;
                        }
                        if d != '{' {
                            h.push(d);
                        }
                    }
                    u32::from_str_radix(&h, 16)
                        .ok()
                        .and_then(char::from_u32)
                        .unwrap_or('?')
                }
                _ => 'x',
            };
            decoded += ch.len_utf8();
        }
        self.content_end
    }
}

#[derive(Clone, Debug, Default)]
struct Field {
    /// Offset of the field's value.
    value: usize,
    /// The string literals inside the value, in order.
    strings: Vec<Lit>,
}

/// One struct in a list (a proposition or a property).
#[derive(Clone, Debug, Default)]
struct Item {
    start: usize,
    fields: HashMap<String, Field>,
}

impl Item {
    /// Where the field's value is written, else where the struct starts.
    fn value_start(&self, field: &str) -> usize {
        self.fields.get(field).map_or(self.start, |f| f.value)
    }
}

#[derive(Default)]
struct SourceMap {
    propositions: Vec<Item>,
    properties: Vec<Item>,
}

#[derive(Clone, Debug)]
enum Tok {
    Open(u8, usize),
    Close(usize),
    Ident(String, usize),
    Colon,
    Comma,
    Str(Lit),
    Other(usize),
}

fn lex(text: &str) -> Vec<Tok> {
    let b = text.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if b[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'#' => {
                // `#![enable(...)]` attributes: skip to the closing bracket.
                let mut depth = 0;
                while i < b.len() {
                    match b[i] {
                        b'[' => depth += 1,
                        b']' => {
                            depth -= 1;
                            if depth == 0 {
                                i += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            b'(' | b'[' | b'{' => {
                toks.push(Tok::Open(c, i));
                i += 1;
            }
            b')' | b']' | b'}' => {
                toks.push(Tok::Close(i));
                i += 1;
            }
            b':' => {
                toks.push(Tok::Colon);
                i += 1;
            }
            b',' => {
                toks.push(Tok::Comma);
                i += 1;
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                let end = i.min(b.len());
                toks.push(Tok::Str(Lit {
                    start,
                    content: start + 1,
                    content_end: end,
                    raw: false,
                }));
                i = end + 1;
            }
            b'r' if matches!(b.get(i + 1), Some(b'"') | Some(b'#')) => {
                let start = i;
                let mut j = i + 1;
                let hashes = b[j..].iter().take_while(|&&x| x == b'#').count();
                j += hashes;
                if b.get(j) != Some(&b'"') {
                    toks.push(Tok::Ident("r".into(), i));
                    i += 1;
                    continue;
                }
                let content = j + 1;
                let mut closing = "\"".to_string();
                closing.push_str(&"#".repeat(hashes));
                let end = text[content..]
                    .find(&closing)
                    .map_or(b.len(), |k| content + k);
                toks.push(Tok::Str(Lit {
                    start,
                    content,
                    content_end: end,
                    raw: true,
                }));
                i = (end + closing.len()).min(b.len());
            }
            b'\'' => {
                let start = i;
                i += 1;
                if b.get(i) == Some(&b'\\') {
                    i += 2;
                }
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
                toks.push(Tok::Other(start));
            }
            _ if c == b'_' || c.is_ascii_alphabetic() => {
                let start = i;
                while i < b.len() && (b[i] == b'_' || b[i].is_ascii_alphanumeric()) {
                    i += 1;
                }
                toks.push(Tok::Ident(text[start..i].to_string(), start));
            }
            _ => {
                toks.push(Tok::Other(i));
                i += 1;
            }
        }
    }
    toks
}

impl SourceMap {
    fn build(text: &str) -> SourceMap {
        let toks = lex(text);
        let mut map = SourceMap::default();
        // The top-level struct: the first `(`.
        let Some(open) = toks.iter().position(|t| matches!(t, Tok::Open(b'(', _))) else {
            return map;
        };
        for (key, _, value) in struct_fields(&toks, open) {
            let list = match key.as_str() {
                "propositions" => &mut map.propositions,
                "properties" => &mut map.properties,
                _ => continue,
            };
            // value: `[` item, item, ... `]`
            if let Some(Tok::Open(b'[', _)) = toks.get(value) {
                for elem in elements(&toks, value) {
                    let mut k = elem;
                    if let Some(Tok::Ident(_, _)) = toks.get(k) {
                        k += 1;
                    }
                    let Some(Tok::Open(b'(', start)) = toks.get(k) else {
                        list.push(Item::default());
                        continue;
                    };
                    let mut item = Item {
                        start: *start,
                        fields: HashMap::new(),
                    };
                    for (fk, _, fv) in struct_fields(&toks, k) {
                        let end = value_end(&toks, fv);
                        let strings = toks[fv..end]
                            .iter()
                            .filter_map(|t| match t {
                                Tok::Str(l) => Some(l.clone()),
                                _ => None,
                            })
                            .collect();
                        item.fields.insert(
                            fk,
                            Field {
                                value: tok_offset(&toks[fv]),
                                strings,
                            },
                        );
                    }
                    list.push(item);
                }
            }
        }
        map
    }
}

fn tok_offset(t: &Tok) -> usize {
    match t {
        Tok::Open(_, o) | Tok::Close(o) | Tok::Ident(_, o) | Tok::Other(o) => *o,
        Tok::Str(l) => l.start,
        Tok::Colon | Tok::Comma => 0,
    }
}

/// Index just past the value starting at token `i` (up to the next `,` or closing bracket at the
/// same depth).
fn value_end(toks: &[Tok], mut i: usize) -> usize {
    let mut depth = 0i32;
    while i < toks.len() {
        match toks[i] {
            Tok::Open(..) => depth += 1,
            Tok::Close(_) => {
                if depth == 0 {
                    return i;
                }
                depth -= 1;
            }
            Tok::Comma if depth == 0 => return i,
            _ => {}
        }
        i += 1;
    }
    i
}

/// The start tokens of the elements of the bracket group opened at `open`.
fn elements(toks: &[Tok], open: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = open + 1;
    while i < toks.len() {
        if matches!(toks[i], Tok::Close(_)) {
            break;
        }
        out.push(i);
        i = value_end(toks, i);
        if matches!(toks.get(i), Some(Tok::Comma)) {
            i += 1;
        }
    }
    out
}

/// `(key, key token, value token)` for the fields of the struct opened at `open`.
fn struct_fields(toks: &[Tok], open: usize) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    for e in elements(toks, open) {
        if let (Some(Tok::Ident(k, _)), Some(Tok::Colon)) = (toks.get(e), toks.get(e + 1)) {
            if e + 2 < toks.len() {
                out.push((k.clone(), e, e + 2));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_tokens_and_errors() {
        let t = words_tokens("take {item...} from {place}").unwrap();
        assert_eq!(
            t,
            [
                WordsToken::Word("take".into()),
                WordsToken::Many("item".into()),
                WordsToken::Word("from".into()),
                WordsToken::One("place".into()),
            ]
        );
        assert!(words_tokens("take {item").is_err());
        assert!(words_tokens("take }").is_err());
        assert!(words_tokens("{a} {a}").is_err());
        assert!(words_tokens(" -- ").is_err());
        let groups = SyntaxRules
            .leaf(&Rule::Regex(r"(?P<a>x)(?<b>y)".into()), false)
            .unwrap();
        assert_eq!(groups, ["a", "b"]);
    }

    #[test]
    fn check_without_a_regex_engine_reads_named_groups() {
        let src = r#"(name: "x", propositions: [
  (name: "a", param: Some("v"), rule: Some(Regex("a[(?P<v>x)"))),
  (name: "b", param: Some("v"), rule: Some(Regex("b (x)"))),
], properties: [])"#;
        let e = Spec::from_str(src, "s.ron").unwrap().check().unwrap_err();
        // The bad class of `a` is left to the labelers' compile step; `b` captures nothing.
        assert_eq!(e.diagnostics.len(), 1, "{e}");
        assert!(
            e.to_string()
                .contains("proposition `b`: the rule does not capture"),
            "{e}"
        );
    }

    #[test]
    fn escaped_offsets_map_to_source() {
        let text = r#"(formula: "a \"b\" \u{e9}c")"#;
        let toks = lex(text);
        let lit = toks
            .iter()
            .find_map(|t| match t {
                Tok::Str(l) => Some(l.clone()),
                _ => None,
            })
            .unwrap();
        let decoded = "a \"b\" \u{e9}c";
        let c_at = decoded.find('c').unwrap();
        assert_eq!(&text[lit.source_offset(text, c_at)..][..1], "c");
        let b_at = decoded.find('b').unwrap();
        assert_eq!(&text[lit.source_offset(text, b_at)..][..1], "b");
    }

    #[test]
    fn line_col_counts_chars() {
        assert_eq!(line_col("ab\ncé d", 8), (2, 5));
        assert_eq!(line_col("x", 0), (1, 1));
    }
}
