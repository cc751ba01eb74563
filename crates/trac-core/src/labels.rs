//! Label sets: the valuation of one trace step, as the set of atomic propositions that hold.

use std::collections::HashSet;

/// The atomic propositions that hold at one step, by name (`look`, `take(knife)`).
///
/// A parametric proposition's label carries its value in parentheses: `take(red hot pepper)`.
///
/// Steps hold few labels: up to [`LabelSet::SMALL`] labels are kept in a vector and
/// [`LabelSet::contains`] compares strings (no hashing: a few nanoseconds for the usual 1-4
/// labels); a larger set is a hash set (SipHash, as before: labels come from the logs being
/// audited).
#[derive(Clone, Debug, Default)]
pub struct LabelSet {
    /// The labels while there are at most [`LabelSet::SMALL`] (then `large` is empty).
    small: Vec<String>,
    /// Every label, once there are more than [`LabelSet::SMALL`].
    large: HashSet<String>,
}

impl LabelSet {
    /// Up to this many labels, a set is a vector searched linearly.
    pub const SMALL: usize = 16;

    /// An empty label set (no proposition holds).
    pub fn new() -> LabelSet {
        LabelSet::default()
    }

    /// Adds a label. O(labels) up to [`LabelSet::SMALL`] labels, O(1) expected after.
    pub fn insert(&mut self, label: impl Into<String>) {
        let label = label.into();
        if self.large.is_empty() {
            if self.small.contains(&label) {
                return;
            }
            if self.small.len() < Self::SMALL {
                self.small.push(label);
                return;
            }
            self.large.extend(self.small.drain(..));
        }
        self.large.insert(label);
    }

    /// Whether `label` holds. A comparison atom (`=("a", "b")`, see
    /// [`crate::names::comparison_value`]) is no label: it holds when it is decided true,
    /// whatever the step's labels, so that every engine reads it through this one place.
    #[inline]
    pub fn contains(&self, label: &str) -> bool {
        if label.as_bytes().first() == Some(&b'=') {
            return crate::names::comparison_value(label) == Some(true);
        }
        if self.large.is_empty() {
            self.small.iter().any(|l| l == label)
        } else {
            self.large.contains(label)
        }
    }

    /// The labels, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.small
            .iter()
            .chain(self.large.iter())
            .map(String::as_str)
    }

    /// The labels, sorted.
    pub fn sorted(&self) -> Vec<String> {
        let mut v: Vec<String> = self.iter().map(str::to_string).collect();
        v.sort();
        v
    }

    /// Number of labels.
    pub fn len(&self) -> usize {
        self.small.len() + self.large.len()
    }

    /// True if no label holds.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl PartialEq for LabelSet {
    /// Set equality.
    fn eq(&self, other: &LabelSet) -> bool {
        self.len() == other.len() && self.iter().all(|l| other.contains(l))
    }
}

impl Eq for LabelSet {}

impl<S: Into<String>> FromIterator<S> for LabelSet {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        let mut set = LabelSet::new();
        for l in iter {
            set.insert(l);
        }
        set
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_hold_by_their_values_not_by_labels() {
        let labels: LabelSet = ["=(a, b)", "p"].into_iter().collect();
        assert!(labels.contains("p"));
        assert!(
            !labels.contains("=(a, b)"),
            "a side without a value: never holds"
        );
        assert!(labels.contains("=(\"w\", \"w\")"));
        assert!(!labels.contains("=(\"w\", \"W\")"));
        assert!(LabelSet::new().contains("=(a, a)"));
    }
}
