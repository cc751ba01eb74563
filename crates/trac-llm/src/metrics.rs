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
//! # Per property (audit F1)
//! Following the paper's appendix F.1, a reported violation is a triple (trace, step, value) —
//! `value` being the parameter value of a parametric property's instance — and likewise a
//! satisfaction. A violation reported by both the audit with the labeler's labels and the audit
//! with the reference labels (same trace, same step, same value) is a TP; reported only with the
//! labeler's labels, an FP; only with the reference labels, an FN. Satisfactions are counted the
//! same way, separately. F1 = 2·TP / (2·TP + FP + FN), undefined when nothing was reported by
//! either. Verdicts at step 0 (decided before the first step) count like any other step.

use serde::Serialize;
use std::collections::BTreeSet;
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
    /// Counts (see the [module docs](self)).
    pub counts: Confusion,
}

impl PropScore {
    /// `agree / steps`, `None` for no step.
    pub fn accuracy(&self) -> Option<f64> {
        ratio(self.agree, self.steps)
    }
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
        }
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
