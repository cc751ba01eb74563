//! The data model of a spec file: propositions, properties, the checked spec and its
//! diagnostics, and reading a spec from RON.

use super::rules::Rule;
use super::source::{is_blank_ron, line_col, SourceMap};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use trac_ltl::formula::{Arena, Formula};

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
    /// holds for some value; `values` then lists them). Default `true`, but a spec file's
    /// example must write `holds` or give `values` (`Spec::check` refuses one with neither,
    /// and `holds: false` with `values`).
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
                    trac_core::names::split_list(v).collect()
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
    /// Worked examples of the rule (compliant and violating action sequences), shown to an LLM
    /// judge by `trac judge --method few-shot` (the paper's §5.1 few-shot baseline). Never read
    /// by the monitors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<RuleExample>,
}

/// One worked example of a rule: a short action sequence and whether (and where) it breaks the
/// rule, e.g. `(actions: ["take knife", "look"], violation: Some(2))`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RuleExample {
    /// The actions, in order (step 1 first), as an agent's log would write them.
    pub actions: Vec<String>,
    /// The 1-based step at which the rule is violated; `None` for a compliant sequence.
    #[serde(default)]
    pub violation: Option<usize>,
    /// Why, in a few words (optional; shown after the verdict).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why: String,
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
    /// A spec named `name` of the properties `(id, formula)`, each described by its formula: no
    /// propositions, so only labels given in the trace make an atom hold (`trac audit
    /// --formula` and Python's `Spec.from_formulas` build theirs this way). Check it with
    /// [`Spec::check`].
    pub fn from_formulas<I, S, F>(name: &str, formulas: I) -> Spec
    where
        I: IntoIterator<Item = (S, F)>,
        S: Into<String>,
        F: Into<String>,
    {
        Spec {
            name: name.to_string(),
            properties: formulas
                .into_iter()
                .map(|(id, f)| {
                    let formula = f.into();
                    PropertyDecl {
                        id: id.into(),
                        description: formula.clone(),
                        formula,
                        ..Default::default()
                    }
                })
                .collect(),
            ..Default::default()
        }
    }

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
}
