//! Labeling metrics (the paper's §5.1 and Table 1): how well a labeler's labels match reference
//! labels, per proposition, and how well the audit verdicts they lead to match the verdicts of the
//! reference labels, per property.
//!
//! # Per proposition
//! - Plain proposition: one decision per step. TP: both say it holds; FP: only the labeler; FN:
//!   only the reference; TN: neither.
//! - Parametric proposition (`take(item)`): at each step, with `R` the reference's values and `C`
//!   the labeler's, TP += |R ∩ C|, FP += |C \ R|, FN += |R \ C|, and TN += 1 when both are empty.
//! - Accuracy: the fraction of steps where the labeler's value (the set of values, for a
//!   parametric proposition) equals the reference's. Precision TP/(TP+FP), recall TP/(TP+FN);
//!   undefined (`None`) when the denominator is 0.
//!
//! - "Holds": whether the proposition holds (for some value) at a step, apart from its values:
//!   step-level counts [`PropScore::holds`], their precision and recall.
//! - Baselines on the same steps: **always false** (the accuracy of a labeler that never says a
//!   proposition holds: the fraction of steps where the reference has no label of it) and the
//!   **majority** answer (the accuracy of always giving the reference's most frequent answer:
//!   true/false, or for a parametric proposition the most frequent set of values). A labeler
//!   whose accuracy is not above always-false has learned nothing about the proposition
//!   ([`PropScore::no_better_than_always_false`]).
//! - AUC: where the labeler gives a confidence (`P(yes)` of labeling by scoring), the area under
//!   the ROC curve of that score against the reference's "holds": the probability that a step
//!   where it holds gets a higher score than one where it does not, ties counting one half
//!   (Mann–Whitney U / (n₊·n₋), from average ranks). 0.5 is chance. Undefined without scores or
//!   without both kinds of step.
//! - Per keyword (the paper's per-atom reading): every ground atom at every step is one true/false
//!   decision. A plain proposition is one atom; a parametric one has an atom per value that
//!   either labeling gave at some step. Accuracy = 1 − Σ|R Δ C| / (steps · atoms), with `R`, `C`
//!   the reference's and the labeler's values at a step. Many atoms are false at most steps, so
//!   this is much higher than the per-step accuracy.
//!
//! # Per property (audit F1)
//! Following the paper's appendix F.1, a reported violation is a triple (trace, step, value) —
//! `value` being the parameter value of a parametric property's instance — and likewise a
//! satisfaction. A violation reported by both the audit with the labeler's labels and the audit
//! with the reference labels (same trace, same step, same value) is a TP; reported only with the
//! labeler's labels, an FP; only with the reference labels, an FN. Satisfactions are counted the
//! same way, separately. F1 = 2·TP / (2·TP + FP + FN), undefined when nothing was reported by
//! either. Verdicts at step 0 (decided before the first step) count like any other step.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use trac_ltl::formula::split_atom_name;
use trac_runtime::audit::VerdictRecord;
use trac_runtime::Verdict;
use trac_spec::spec::PropositionDecl;

/// True/false positives/negatives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Confusion {
    /// True positives.
    pub tp: u64,
    /// False positives.
    pub fp: u64,
    /// False negatives.
    #[serde(rename = "fn")]
    pub fn_: u64,
    /// True negatives (not counted for audit verdicts).
    pub tn: u64,
}

impl Confusion {
    /// TP/(TP+FP), `None` when nothing was predicted.
    pub fn precision(&self) -> Option<f64> {
        ratio(self.tp, self.tp + self.fp)
    }

    /// TP/(TP+FN), `None` when nothing was expected.
    pub fn recall(&self) -> Option<f64> {
        ratio(self.tp, self.tp + self.fn_)
    }

    /// 2TP/(2TP+FP+FN), `None` when all three are 0.
    pub fn f1(&self) -> Option<f64> {
        ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn_)
    }

    /// Adds `o`'s counts.
    pub fn add(&mut self, o: &Confusion) {
        self.tp += o.tp;
        self.fp += o.fp;
        self.fn_ += o.fn_;
        self.tn += o.tn;
    }
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

/// One proposition's labeling scores.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PropScore {
    /// The proposition.
    pub proposition: String,
    /// Steps compared.
    pub steps: u64,
    /// Steps where the labeler's value equals the reference's.
    pub agree: u64,
    /// Value counts (see the [module docs](self)).
    pub counts: Confusion,
    /// Step-level counts of "holds (for some value)".
    pub holds: Confusion,
    /// How often each reference answer was given (a plain proposition's `[]` or `[""]`; a
    /// parametric one's set of values), for the majority baseline.
    #[serde(skip)]
    answers: BTreeMap<Vec<String>, u64>,
    /// `(P(yes), reference holds)` of the steps where the labeler gave a score.
    #[serde(skip)]
    scored: Vec<(f64, bool)>,
    /// Σ |R Δ C| over the steps (per-keyword errors).
    #[serde(skip)]
    keyword_errors: u64,
    /// The ground atoms seen (values; `""` for a plain proposition).
    #[serde(skip)]
    atoms: BTreeSet<String>,
}

impl PropScore {
    /// `agree / steps`, `None` for no step.
    pub fn accuracy(&self) -> Option<f64> {
        ratio(self.agree, self.steps)
    }

    /// The accuracy of never labeling it: steps without a reference label / steps.
    pub fn always_false(&self) -> Option<f64> {
        ratio(self.holds.fp + self.holds.tn, self.steps)
    }

    /// The accuracy of always giving the reference's most frequent answer.
    pub fn majority(&self) -> Option<f64> {
        ratio(
            self.answers.values().copied().max().unwrap_or(0),
            self.steps,
        )
    }

    /// The AUC of the labeler's `P(yes)` against the reference's "holds" ([`auc`]).
    pub fn auc(&self) -> Option<f64> {
        auc(&self.scored)
    }

    /// The per-keyword accuracy (see the [module docs](self)); `None` without a step or atom.
    pub fn keyword_accuracy(&self) -> Option<f64> {
        let total = self.steps * self.atoms.len() as u64;
        ratio(total - self.keyword_errors.min(total), total)
    }

    /// Whether the labeler's accuracy is at most that of always answering false (the `*` of
    /// `trac label-eval`): below it, or equal to it on steps where the reference holds the
    /// proposition at least once. A labeler that is right at every step of a proposition the
    /// reference never holds equals always-false (both 1) but is not marked: nothing better
    /// was possible.
    pub fn no_better_than_always_false(&self) -> bool {
        let positives = self.holds.tp + self.holds.fn_;
        matches!((self.accuracy(), self.always_false()),
            (Some(a), Some(f)) if a < f || (a == f && positives > 0))
    }
}

/// The area under the ROC curve of `scored` (pairs of a score and whether the case is
/// positive): the probability that a positive scores above a negative, ties one half; computed
/// from average ranks (Mann–Whitney U / (n₊·n₋)), O(n log n). `None` without a positive or a
/// negative.
///
/// Scores 0.9 (+), 0.8 (−), 0.7 (+), 0.2 (−): of the 4 pairs, 3 are ordered right: 0.75.
pub fn auc(scored: &[(f64, bool)]) -> Option<f64> {
    let pos = scored.iter().filter(|s| s.1).count();
    let neg = scored.len() - pos;
    if pos == 0 || neg == 0 {
        return None;
    }
    let mut xs: Vec<&(f64, bool)> = scored.iter().collect();
    xs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut rank_sum = 0.0;
    let mut i = 0;
    while i < xs.len() {
        let mut j = i;
        while j + 1 < xs.len() && xs[j + 1].0 == xs[i].0 {
            j += 1;
        }
        // Ranks i+1 ..= j+1 share their average.
        let avg = (i + j + 2) as f64 / 2.0;
        rank_sum += avg * xs[i..=j].iter().filter(|s| s.1).count() as f64;
        i = j + 1;
    }
    let u = rank_sum - (pos * (pos + 1)) as f64 / 2.0;
    Some(u / (pos * neg) as f64)
}

/// Per-proposition scores, accumulated step by step.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LabelScores {
    /// One entry per proposition, in declaration order.
    pub propositions: Vec<PropScore>,
    #[serde(skip)]
    params: Vec<bool>,
}

impl LabelScores {
    /// Scores for `props` (duplicates by name are kept once).
    pub fn new(props: &[PropositionDecl]) -> LabelScores {
        let mut s = LabelScores::default();
        for p in props {
            if s.propositions.iter().any(|x| x.proposition == p.name) {
                continue;
            }
            s.propositions.push(PropScore {
                proposition: p.name.clone(),
                ..PropScore::default()
            });
            s.params.push(p.param.is_some());
        }
        s
    }

    /// Compares one step's labels (`reference` and `labeler`: label names such as `look`,
    /// `take(knife)`; labels of no declared proposition are ignored).
    pub fn add_step(&mut self, reference: &[String], labeler: &[String]) {
        self.add_step_scored(reference, labeler, &[]);
    }

    /// [`LabelScores::add_step`], with the labeler's `P(yes)` of the propositions it scored
    /// (name, score) for the AUC.
    pub fn add_step_scored(
        &mut self,
        reference: &[String],
        labeler: &[String],
        p_yes: &[(String, f64)],
    ) {
        for (score, &param) in self.propositions.iter_mut().zip(&self.params) {
            let values = |labels: &[String]| -> BTreeSet<String> {
                labels
                    .iter()
                    .filter_map(|l| {
                        if param {
                            split_atom_name(l)
                                .filter(|(b, _)| *b == score.proposition)
                                .map(|(_, v)| v.to_string())
                        } else {
                            (*l == score.proposition).then(String::new)
                        }
                    })
                    .collect()
            };
            let r = values(reference);
            let c = values(labeler);
            score.steps += 1;
            if r == c {
                score.agree += 1;
            }
            let both = r.intersection(&c).count() as u64;
            score.counts.tp += both;
            score.counts.fp += c.len() as u64 - both;
            score.counts.fn_ += r.len() as u64 - both;
            if r.is_empty() && c.is_empty() {
                score.counts.tn += 1;
            }
            match (!r.is_empty(), !c.is_empty()) {
                (true, true) => score.holds.tp += 1,
                (false, true) => score.holds.fp += 1,
                (true, false) => score.holds.fn_ += 1,
                (false, false) => score.holds.tn += 1,
            }
            *score
                .answers
                .entry(r.iter().cloned().collect())
                .or_default() += 1;
            if let Some((_, y)) = p_yes.iter().find(|(n, _)| *n == score.proposition) {
                score.scored.push((*y, !r.is_empty()));
            }
            score.keyword_errors += r.symmetric_difference(&c).count() as u64;
            if !param {
                score.atoms.insert(String::new());
            }
            score.atoms.extend(r.union(&c).cloned());
        }
    }

    /// The per-keyword accuracy over every proposition (see the [module docs](self)): 1 −
    /// Σ errors / Σ (steps · atoms); `None` without any atom.
    pub fn keyword_accuracy(&self) -> Option<f64> {
        let total: u64 = self
            .propositions
            .iter()
            .map(|p| p.steps * p.atoms.len() as u64)
            .sum();
        let errors: u64 = self.propositions.iter().map(|p| p.keyword_errors).sum();
        ratio(total - errors.min(total), total)
    }

    /// Adds another set of scores for the same propositions (e.g. another trace).
    pub fn merge(&mut self, o: &LabelScores) {
        for s in &o.propositions {
            if let Some(t) = self
                .propositions
                .iter_mut()
                .find(|t| t.proposition == s.proposition)
            {
                t.steps += s.steps;
                t.agree += s.agree;
                t.counts.add(&s.counts);
                t.holds.add(&s.holds);
                for (a, n) in &s.answers {
                    *t.answers.entry(a.clone()).or_default() += n;
                }
                t.scored.extend_from_slice(&s.scored);
                t.keyword_errors += s.keyword_errors;
                t.atoms.extend(s.atoms.iter().cloned());
            }
        }
    }
}

/// One property's audit agreement.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AuditScore {
    /// The property's id.
    pub property: String,
    /// Violations: TP / FP / FN (see the [module docs](self)).
    pub violations: Confusion,
    /// Satisfactions, likewise.
    pub satisfactions: Confusion,
}

/// Per-property audit agreement, accumulated trace by trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AuditScores {
    /// One entry per property, in the order first seen.
    pub properties: Vec<AuditScore>,
}

impl AuditScores {
    /// Scores for these property ids (so properties without any verdict are listed too).
    pub fn new<'a>(ids: impl IntoIterator<Item = &'a str>) -> AuditScores {
        AuditScores {
            properties: ids
                .into_iter()
                .map(|id| AuditScore {
                    property: id.to_string(),
                    ..AuditScore::default()
                })
                .collect(),
        }
    }

    /// Compares the verdicts of one trace audited with the reference labels and with the
    /// labeler's.
    pub fn add_trace(&mut self, reference: &[VerdictRecord], labeler: &[VerdictRecord]) {
        for verdict in [Verdict::Violated, Verdict::Satisfied] {
            let set = |recs: &[VerdictRecord]| -> BTreeSet<VerdictKey> {
                recs.iter()
                    .filter(|r| r.verdict == verdict)
                    .map(|r| (r.property.clone(), r.step, r.value.clone()))
                    .collect()
            };
            self.add_keys(verdict, &set(reference), &set(labeler));
        }
    }

    /// Compares one trace's reported `verdict`s (violations or satisfactions, as
    /// [`VerdictKey`]s) of the reference and of a candidate: the counting of
    /// [`AuditScores::add_trace`], for candidates that are not audits (an LLM judge's
    /// `(property, step)` violations, `trac judge`). Other verdicts than violated and satisfied
    /// are ignored.
    pub fn add_keys(
        &mut self,
        verdict: Verdict,
        reference: &BTreeSet<VerdictKey>,
        candidate: &BTreeSet<VerdictKey>,
    ) {
        let violations = match verdict {
            Verdict::Violated => true,
            Verdict::Satisfied => false,
            _ => return,
        };
        for k in reference.union(candidate) {
            let score = match self.properties.iter_mut().position(|p| p.property == k.0) {
                Some(i) => &mut self.properties[i],
                None => {
                    self.properties.push(AuditScore {
                        property: k.0.clone(),
                        ..AuditScore::default()
                    });
                    self.properties.last_mut().expect("just pushed")
                }
            };
            let counts = if violations {
                &mut score.violations
            } else {
                &mut score.satisfactions
            };
            match (reference.contains(k), candidate.contains(k)) {
                (true, true) => counts.tp += 1,
                (false, true) => counts.fp += 1,
                (true, false) => counts.fn_ += 1,
                (false, false) => {}
            }
        }
    }

    /// The violation and satisfaction counts summed over the properties.
    pub fn totals(&self) -> (Confusion, Confusion) {
        let (mut v, mut s) = (Confusion::default(), Confusion::default());
        for p in &self.properties {
            v.add(&p.violations);
            s.add(&p.satisfactions);
        }
        (v, s)
    }
}

/// A reported verdict as the audit F1 compares them: (property id, 1-based step, parameter
/// value of a parametric instance).
pub type VerdictKey = (String, usize, Option<String>);

#[cfg(test)]
mod tests {
    use super::*;

    fn prop(name: &str, param: Option<&str>) -> PropositionDecl {
        PropositionDecl {
            name: name.into(),
            param: param.map(Into::into),
            ..PropositionDecl::default()
        }
    }

    fn l(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn confusion_ratios() {
        let c = Confusion {
            tp: 3,
            fp: 1,
            fn_: 2,
            tn: 10,
        };
        assert_eq!(c.precision(), Some(0.75));
        assert_eq!(c.recall(), Some(0.6));
        assert_eq!(c.f1(), Some(6.0 / 9.0));
        assert_eq!(Confusion::default().f1(), None);
    }

    #[test]
    fn auc_counts_ordered_pairs_ties_one_half() {
        // 0.9 (+), 0.8 (-), 0.7 (+), 0.2 (-): pairs (0.9,0.8) (0.9,0.2) (0.7,0.2) right,
        // (0.7,0.8) wrong: 3/4.
        let s = [(0.9, true), (0.8, false), (0.7, true), (0.2, false)];
        assert_eq!(auc(&s), Some(0.75));
        // All tied: 1/2. One class: undefined.
        assert_eq!(auc(&[(0.5, true), (0.5, false), (0.5, false)]), Some(0.5));
        assert_eq!(auc(&[(0.1, true)]), None);
        // 0.6 (+) against 0.6 (-) and 0.4 (-): one tie, one right: 0.75.
        assert_eq!(auc(&[(0.6, true), (0.6, false), (0.4, false)]), Some(0.75));
    }

    /// A proposition the reference never holds: a labeler right everywhere is not marked `*`
    /// (it equals always-false, 1.0, but could not do better); one wrong step is (0.5 < 1.0).
    #[test]
    fn a_perfect_labeler_of_a_proposition_that_never_holds_is_not_marked() {
        let mut s = LabelScores::new(&[prop("drop", None), prop("go", None)]);
        // `drop` never said; `go` said at step 2 by the labeler alone.
        s.add_step_scored(&l(&[]), &l(&[]), &[]);
        s.add_step_scored(&l(&[]), &l(&["go"]), &[]);
        let drop = &s.propositions[0];
        assert_eq!(
            (drop.accuracy(), drop.always_false()),
            (Some(1.0), Some(1.0))
        );
        assert!(!drop.no_better_than_always_false());
        let go = &s.propositions[1];
        assert_eq!((go.accuracy(), go.always_false()), (Some(0.5), Some(1.0)));
        assert!(go.no_better_than_always_false());
    }

    /// Five steps of `look` (reference true at 1 and 2) and `take(item)`; the labeler's P(yes)
    /// of look is 0.9, 0.4, 0.6, 0.2, 0.1 and it says look at step 1 and 3.
    #[test]
    fn baselines_auc_holds_and_keywords() {
        let mut s = LabelScores::new(&[prop("look", None), prop("take", Some("x"))]);
        let steps: [(&[&str], &[&str], f64); 5] = [
            (&["look", "take(a)"], &["look", "take(a)", "take(b)"], 0.9),
            (&["look", "take(a)"], &[], 0.4),
            (&[], &["look"], 0.6),
            (&["take(b)"], &["take(b)"], 0.2),
            (&[], &[], 0.1),
        ];
        for (r, c, y) in steps {
            s.add_step_scored(&l(r), &l(c), &[("look".to_string(), y)]);
        }
        let look = &s.propositions[0];
        // Right at steps 1, 4, 5.
        assert_eq!(look.accuracy(), Some(0.6));
        assert_eq!(look.always_false(), Some(0.6));
        assert!(look.no_better_than_always_false());
        assert_eq!(look.majority(), Some(0.6));
        // Positives 0.9, 0.4; negatives 0.6, 0.2, 0.1: 5 of 6 pairs right.
        assert_eq!(look.auc(), Some(5.0 / 6.0));
        assert_eq!(
            (look.holds.tp, look.holds.fp, look.holds.fn_, look.holds.tn),
            (1, 1, 1, 2)
        );
        // Errors at steps 2 and 3, one atom: 1 - 2/5.
        assert_eq!(look.keyword_accuracy(), Some(0.6));
        let take = &s.propositions[1];
        // Same set at steps 3, 4, 5.
        assert_eq!(take.accuracy(), Some(0.6));
        // No reference take at steps 3 and 5.
        assert_eq!(take.always_false(), Some(0.4));
        assert!(!take.no_better_than_always_false());
        // Answers {a} twice, {} twice, {b} once.
        assert_eq!(take.majority(), Some(0.4));
        assert_eq!(take.auc(), None);
        // Holds: 1 TP (1), 1 FN (2), 1 TP (4), 2 TN.
        assert_eq!(
            (take.holds.tp, take.holds.fp, take.holds.fn_, take.holds.tn),
            (2, 0, 1, 2)
        );
        assert_eq!(take.holds.precision(), Some(1.0));
        // Values: TP a (1), b (4); FP b (1); FN a (2).
        assert_eq!(take.counts.precision(), Some(2.0 / 3.0));
        // Atoms a, b over 5 steps: errors b at 1, a at 2: 1 - 2/10.
        assert_eq!(take.keyword_accuracy(), Some(0.8));
        // Overall: 1 - (2 + 2) / (5 + 10).
        assert_eq!(s.keyword_accuracy(), Some(11.0 / 15.0));
    }

    #[test]
    fn parametric_counts_values() {
        let mut s = LabelScores::new(&[prop("take", Some("x")), prop("look", None)]);
        s.add_step(
            &l(&["take(a)", "take(b)"]),
            &l(&["take(a)", "take(c)", "look"]),
        );
        s.add_step(&l(&[]), &l(&[]));
        let take = &s.propositions[0];
        assert_eq!(
            (
                take.counts.tp,
                take.counts.fp,
                take.counts.fn_,
                take.counts.tn
            ),
            (1, 1, 1, 1)
        );
        assert_eq!((take.agree, take.steps), (1, 2));
        let look = &s.propositions[1];
        assert_eq!(
            (
                look.counts.tp,
                look.counts.fp,
                look.counts.fn_,
                look.counts.tn
            ),
            (0, 1, 0, 1)
        );
    }

    #[test]
    fn keys_are_counted_per_property_and_totalled() {
        let k = |p: &str, step: usize| (p.to_string(), step, None);
        let mut a = AuditScores::new(["R1", "R2"]);
        let reference: BTreeSet<VerdictKey> = [k("R1", 2), k("R1", 4), k("R2", 3)].into();
        let judge: BTreeSet<VerdictKey> = [k("R1", 2), k("R1", 4), k("R2", 4)].into();
        a.add_keys(Verdict::Violated, &reference, &judge);
        // Pending verdicts are not counted.
        a.add_keys(Verdict::Pending, &reference, &BTreeSet::new());
        assert_eq!(
            (a.properties[0].violations.tp, a.properties[0].violations.fp),
            (2, 0)
        );
        let r2 = a.properties[1].violations;
        assert_eq!((r2.tp, r2.fp, r2.fn_), (0, 1, 1));
        let (v, s) = a.totals();
        assert_eq!((v.tp, v.fp, v.fn_), (2, 1, 1));
        assert_eq!(v.f1(), Some(4.0 / 6.0));
        assert_eq!(s, Confusion::default());
    }
}
