//! Labeling functions: which atomic propositions hold at a step of a trace.
//!
//! - [`TraceLabels`] takes the labels written in the trace (`"labels": [..]` in JSON Lines).
//! - [`RuleLabeler`] evaluates the labeling [`Rule`]s of a spec on each event's text
//!   ([`Event::text`]) and adds the trace's own labels.
//!
//! Label strings are proposition names (`look`) or, for a parametric proposition, `name(value)`
//! for each captured value (`take(red hot pepper)`).

use crate::trace::Event;
use regex::Regex;
use std::fmt;
use trac_spec::spec::{Rule, Spec};

/// A labeling function.
pub trait Labeler {
    /// The labels (atomic propositions true at this step) for `event`, given the previous events
    /// of the trace (`history`, oldest first, not including `event`).
    fn label(&mut self, event: &Event, history: &[Event]) -> Vec<String>;

    /// Like [`Labeler::label`], for labeling functions that can fail (a model that does not
    /// answer, or answers something unusable): the failure is reported instead of a step with
    /// no labels. The default never fails.
    fn try_label(&mut self, event: &Event, history: &[Event]) -> Result<Vec<String>, LabelFailure> {
        Ok(self.label(event, history))
    }
}

/// A step a labeling function could not label.
///
/// Displays as `step N (line L): message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelFailure {
    /// The event's step ([`Event::step`]).
    pub step: usize,
    /// The event's line in the trace file ([`Event::line`]).
    pub line: usize,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for LabelFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "step {} (line {}): {}",
            self.step, self.line, self.message
        )
    }
}

impl std::error::Error for LabelFailure {}

/// Uses the event's own `labels` as they are (none if the event has none).
#[derive(Clone, Copy, Debug, Default)]
pub struct TraceLabels;

impl Labeler for TraceLabels {
    fn label(&mut self, event: &Event, _history: &[Event]) -> Vec<String> {
        event.labels.clone().unwrap_or_default()
    }
}

/// An error compiling a spec's labeling rules.
///
/// Displays as ``proposition `name`: message``.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelerError {
    /// The proposition whose rule is wrong.
    pub proposition: String,
    /// What is wrong (bad regex, malformed `Words` pattern).
    pub message: String,
}

impl fmt::Display for LabelerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "proposition `{}`: {}", self.proposition, self.message)
    }
}

impl std::error::Error for LabelerError {}

#[derive(Clone, Debug)]
enum Compiled {
    /// A `Words` or `Regex` leaf; `group` is the parameter's capture group when the regex has
    /// one.
    Leaf {
        re: Regex,
        group: Option<String>,
    },
    AnyOf(Vec<Compiled>),
    AllOf(Vec<Compiled>),
    Not(Box<Compiled>),
}

#[derive(Clone, Debug)]
struct Prop {
    name: String,
    param: Option<String>,
    rule: Compiled,
}

/// Labels events with a spec's labeling rules (see [`trac_spec::spec`] for their semantics),
/// plus the event's own `labels`.
///
/// For each proposition with a rule, in declaration order: a plain proposition gives `name` when
/// its rule holds on [`Event::text`]; a parametric one gives `name(value)` for every value
/// captured (all matches, deduplicated, in order of appearance in the text). Values are
/// normalized: whitespace runs become one space, surrounding whitespace is removed, and they are
/// lowercased unless the spec is `case_sensitive`. The event's explicit labels follow (union,
/// without duplicates).
#[derive(Clone, Debug)]
pub struct RuleLabeler {
    props: Vec<Prop>,
    case_sensitive: bool,
}

impl RuleLabeler {
    /// Compiles the rules of `spec`'s propositions (those without a rule are skipped: their
    /// labels must come from the trace).
    ///
    /// Errors: the first rule that does not compile (bad regex, malformed `Words` pattern).
    /// [`Spec::check`] reports these and more, with positions in the spec file.
    pub fn new(spec: &Spec) -> Result<RuleLabeler, LabelerError> {
        let mut props = Vec::new();
        for p in &spec.propositions {
            let Some(rule) = &p.rule else { continue };
            let rule =
                compile(rule, p.param.as_deref(), spec.case_sensitive).map_err(|message| {
                    LabelerError {
                        proposition: p.name.clone(),
                        message,
                    }
                })?;
            props.push(Prop {
                name: p.name.clone(),
                param: p.param.clone(),
                rule,
            });
        }
        Ok(RuleLabeler {
            props,
            case_sensitive: spec.case_sensitive,
        })
    }

    /// True when the spec has no labeling rule: the labeler then only passes on the trace's
    /// own labels and never reads the text.
    pub fn is_empty(&self) -> bool {
        self.props.is_empty()
    }

    /// The labels the rules give for `text` alone (without any trace labels).
    pub fn label_text(&self, text: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for p in &self.props {
            let Some(mut values) = eval(&p.rule, text) else {
                continue;
            };
            match &p.param {
                None => out.push(p.name.clone()),
                Some(_) => {
                    values.sort_by_key(|(pos, _)| *pos);
                    let mut seen: Vec<String> = Vec::new();
                    for (_, v) in values {
                        let v = normalize(&v, self.case_sensitive);
                        if !v.is_empty() && !seen.contains(&v) {
                            seen.push(v);
                        }
                    }
                    out.extend(seen.into_iter().map(|v| format!("{}({v})", p.name)));
                }
            }
        }
        out
    }
}

impl Labeler for RuleLabeler {
    fn label(&mut self, event: &Event, _history: &[Event]) -> Vec<String> {
        let mut out = self.label_text(event.text());
        for l in event.labels.iter().flatten() {
            if !out.contains(l) {
                out.push(l.clone());
            }
        }
        out
    }
}

/// Whitespace runs to one space, trimmed, lowercased unless `case_sensitive`.
fn normalize(v: &str, case_sensitive: bool) -> String {
    let joined = v.split_whitespace().collect::<Vec<_>>().join(" ");
    if case_sensitive {
        joined
    } else {
        joined.to_lowercase()
    }
}

fn compile(rule: &Rule, param: Option<&str>, case_sensitive: bool) -> Result<Compiled, String> {
    let all = |v: &[Rule]| -> Result<Vec<Compiled>, String> {
        v.iter()
            .map(|r| compile(r, param, case_sensitive))
            .collect()
    };
    Ok(match rule {
        Rule::Words(_) | Rule::Regex(_) => {
            let src = rule
                .leaf_regex(case_sensitive)
                .expect("a leaf rule has a regex")?;
            let re = Regex::new(&src).map_err(|e| format!("invalid regex: {e}"))?;
            let group = param
                .filter(|p| re.capture_names().flatten().any(|n| n == *p))
                .map(str::to_string);
            Compiled::Leaf { re, group }
        }
        Rule::AnyOf(v) => Compiled::AnyOf(all(v)?),
        Rule::AllOf(v) => Compiled::AllOf(all(v)?),
        Rule::Not(r) => Compiled::Not(Box::new(compile(r, param, case_sensitive)?)),
    })
}

/// `None` when the rule does not hold; else the captured values with their byte positions.
fn eval(rule: &Compiled, text: &str) -> Option<Vec<(usize, String)>> {
    match rule {
        Compiled::Leaf { re, group } => {
            let Some(group) = group else {
                return re.is_match(text).then(Vec::new);
            };
            let mut matched = false;
            let mut values = Vec::new();
            for caps in re.captures_iter(text) {
                matched = true;
                if let Some(m) = caps.name(group) {
                    values.push((m.start(), m.as_str().to_string()));
                }
            }
            matched.then_some(values)
        }
        Compiled::AnyOf(v) => {
            let mut matched = false;
            let mut values = Vec::new();
            for r in v {
                if let Some(vals) = eval(r, text) {
                    matched = true;
                    values.extend(vals);
                }
            }
            matched.then_some(values)
        }
        Compiled::AllOf(v) => {
            let mut values: Option<Vec<(usize, String)>> = None;
            for r in v {
                let vals = eval(r, text)?;
                if values.is_none() && !vals.is_empty() {
                    values = Some(vals);
                }
            }
            Some(values.unwrap_or_default())
        }
        Compiled::Not(r) => match eval(r, text) {
            Some(_) => None,
            None => Some(Vec::new()),
        },
    }
}
