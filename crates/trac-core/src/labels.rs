//! Label sets: the valuation of one trace step, as the set of atomic propositions that hold.

use std::collections::HashSet;

/// The atomic propositions that hold at one step, by name (`look`, `take(knife)`).
///
/// A parametric proposition's label carries its value in parentheses: `take(red hot pepper)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSet {
    set: HashSet<String>,
}

impl LabelSet {
    /// An empty label set (no proposition holds).
    pub fn new() -> LabelSet {
        LabelSet::default()
    }

    /// Adds a label.
    pub fn insert(&mut self, label: impl Into<String>) {
        self.set.insert(label.into());
    }

    /// Whether `label` holds.
    pub fn contains(&self, label: &str) -> bool {
        self.set.contains(label)
    }

    /// The labels, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.set.iter().map(String::as_str)
    }

    /// The labels, sorted.
    pub fn sorted(&self) -> Vec<String> {
        let mut v: Vec<String> = self.set.iter().cloned().collect();
        v.sort();
        v
    }

    /// Number of labels.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// True if no label holds.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

impl<S: Into<String>> FromIterator<S> for LabelSet {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        LabelSet {
            set: iter.into_iter().map(Into::into).collect(),
        }
    }
}

/// What a monitor reads at one step: its number, its text (for witnesses) and its labels.
#[derive(Clone, Copy, Debug)]
pub struct StepInput<'a> {
    /// 1-based step number in the trace.
    pub step: usize,
    /// The step's text (the action or output), kept in witnesses.
    pub text: &'a str,
    /// The atomic propositions that hold at this step.
    pub labels: &'a LabelSet,
}
