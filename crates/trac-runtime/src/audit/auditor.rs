//! The streaming audit of one trace ([`Auditor`]): one event in, the verdicts reached at that
//! step out.

use crate::audit::coverage::Coverage;
use crate::audit::records::{InstanceEnd, PropertyEnd, PropertyInfo, VerdictRecord};
use crate::engine::monitor::{Change, Monitor, Verdict};
use crate::engine::parametric::ParametricMonitor;
use crate::engine::{EngineMonitor, Mismatch};
use crate::label::derived::DerivedAtoms;
use crate::label::labeler::RuleLabeler;
use crate::trace::Event;
use rustc_hash::FxHashMap;
use std::sync::Arc;
use trac_core::labels::{LabelSet, StepInput};
use trac_core::table::TableMonitor;
use trac_spec::spec::Semantics;

#[derive(Clone)]
pub(super) enum Runner {
    Plain(EngineMonitor),
    Param(ParametricMonitor<EngineMonitor>),
}

/// The violations of one property counted so far: in total and per value. O(values) memory,
/// not O(violations): a long trace with a violation at every step keeps counts, not a list.
#[derive(Clone, Default)]
pub(super) struct Violations {
    pub(super) total: usize,
    /// Those of no value: every value not seen yet, or the property itself when it is not
    /// parametric.
    pub(super) unseen: usize,
    pub(super) by_value: rustc_hash::FxHashMap<String, usize>,
    /// A parametric property's template violations (no value) by step, not yet moved to a
    /// value that inherits them (see [`Violations::inherit`]); empty for other properties.
    pub(super) unclaimed: rustc_hash::FxHashMap<usize, usize>,
}

impl Violations {
    /// A violation of `value` at `step`; `template`: of a parametric property's template
    /// (every value not seen yet), which a value that inherits it may claim.
    pub(super) fn push(&mut self, step: usize, value: Option<String>, template: bool) {
        self.total += 1;
        match value {
            Some(v) => *self.by_value.entry(v).or_default() += 1,
            None => {
                self.unseen += 1;
                if template {
                    *self.unclaimed.entry(step).or_default() += 1;
                }
            }
        }
    }

    /// Counts a violation of `value` at `step`. An inherited violation is the template's
    /// violation at `step`, already counted with no value: the count moves to the first value
    /// that inherits it (so each failing position counts once per value, plus once for the
    /// template while no value had it).
    fn inherit(&mut self, step: usize, inherited: bool, value: &str) {
        let claimed = inherited
            && match self.unclaimed.get_mut(&step) {
                Some(n) => {
                    *n -= 1;
                    if *n == 0 {
                        self.unclaimed.remove(&step);
                    }
                    true
                }
                None => false,
            };
        if claimed {
            self.unseen -= 1;
            *self.by_value.entry(value.to_string()).or_default() += 1;
        } else {
            self.push(step, Some(value.to_string()), false);
        }
    }

    /// Violations of `value` (`None`: of no value).
    fn count(&self, value: Option<&str>) -> usize {
        match value {
            None => self.unseen,
            Some(v) => self.by_value.get(v).copied().unwrap_or(0),
        }
    }
}

#[derive(Clone)]
pub(super) struct Prop {
    /// Shared by every auditor of an [`AuditPlan`](crate::audit::plan::AuditPlan).
    pub(super) info: Arc<PropertyInfo>,
    pub(super) semantics: Semantics,
    pub(super) runner: Runner,
    pub(super) violations: Violations,
    /// Decided before the first step and free of past-time operators: every restart would be
    /// decided the same way, so the step-0 verdict is the only one reported.
    pub(super) frozen: bool,
    /// A compiled, non-parametric property of at most 64 propositions: per proposition of its
    /// table, the id of its label in the auditor's [`Interned`] map (the valuation path).
    pub(super) ids: Option<Arc<[u32]>>,
}

/// The labels the compiled, non-parametric monitors read, interned once per [`AuditPlan`](crate::audit::plan::AuditPlan):
/// label → id (FxHash; the map is never grown by the trace, so chosen labels cannot make it
/// degrade beyond its fixed probe lengths).
pub(super) type Interned = FxHashMap<Box<str>, u32>;

/// The streaming audit of one trace against a set of checked specs.
///
/// Cloning an auditor copies every monitor's state (tables, labeling rules and property facts
/// are shared behind `Arc`s): a supervisor clones it to try candidate actions and sampled
/// continuations without committing them, and [`AuditPlan::auditor`](crate::audit::plan::AuditPlan::auditor) clones a fresh one per
/// session.
///
/// The auditor keeps no per-step history: its labeling rules read one event at a time (the
/// LLM labeler's context window is kept by `trac-llm`'s pipeline, from the events it reads).
pub struct Auditor {
    pub(super) props: Vec<Prop>,
    /// The specs' labeling rules, compiled once per [`AuditPlan`](crate::audit::plan::AuditPlan).
    pub(super) labelers: Arc<[RuleLabeler]>,
    pub(super) steps: usize,
    /// Some spec has labeling rules that read the events' text.
    pub(super) text_rules: bool,
    pub(super) coverage: Coverage,
    /// Derived atoms of the properties (patterns, `exists` quantifiers), computed per step.
    pub(super) derived: DerivedAtoms,
    /// Interned labels of the properties with `ids` (shared by every auditor of a plan).
    pub(super) interned: Arc<Interned>,
    /// The step's valuation over `interned`'s ids (scratch, reused at every step).
    pub(super) valuation: Vec<u64>,
    /// The interned labels seen so far (bits over `interned`'s ids; the coverage has them).
    pub(super) seen_ids: Vec<u64>,
    /// Verdict records carry witnesses and past-time citations ([`AuditPlan::set_witnesses`](crate::audit::plan::AuditPlan::set_witnesses)).
    pub(super) witnesses: bool,
}

impl Clone for Auditor {
    fn clone(&self) -> Self {
        Auditor {
            props: self.props.clone(),
            labelers: Arc::clone(&self.labelers),
            steps: self.steps,
            text_rules: self.text_rules,
            coverage: self.coverage.clone(),
            derived: self.derived.clone(),
            interned: Arc::clone(&self.interned),
            valuation: self.valuation.clone(),
            seen_ids: self.seen_ids.clone(),
            witnesses: self.witnesses,
        }
    }

    /// Field by field, so that the buffers of `self` (its properties' vector, the valuation)
    /// are reused: [`AuditPlan::reset`](crate::audit::plan::AuditPlan::reset) recycles a finished session's auditor this way.
    fn clone_from(&mut self, source: &Self) {
        self.props.clone_from(&source.props);
        self.labelers.clone_from(&source.labelers);
        self.steps = source.steps;
        self.text_rules = source.text_rules;
        self.coverage.clone_from(&source.coverage);
        self.derived.clone_from(&source.derived);
        self.interned.clone_from(&source.interned);
        self.valuation.clone_from(&source.valuation);
        self.seen_ids.clone_from(&source.seen_ids);
        self.witnesses = source.witnesses;
    }
}

impl Auditor {
    /// The audited properties, in spec order.
    pub fn properties(&self) -> Vec<PropertyInfo> {
        self.props.iter().map(|p| (*p.info).clone()).collect()
    }

    /// Verdicts decided before the first step (reported at step 0, and counted). Call once,
    /// before the first [`Auditor::step`]. For a parametric property, such a verdict holds for
    /// every value: a violation is reported (and counted) once with no value, and again for
    /// each value when it first appears (the count then moves to the value).
    pub fn initial(&mut self) -> Vec<VerdictRecord> {
        let mut out = Vec::new();
        for p in &mut self.props {
            let m = match &p.runner {
                Runner::Plain(m) => m,
                Runner::Param(pm) => {
                    // Satisfied for every value before the first step.
                    if pm.verdict() == Verdict::Satisfied {
                        out.push(whole_satisfied(&p.info.id, 0, Vec::new()));
                    }
                    // Violated for every value (so for every value not seen yet) before the
                    // first step: reported once, value null.
                    if pm.initial() == Some(Verdict::Violated) {
                        p.violations.push(0, None, true);
                        out.push(VerdictRecord {
                            property: p.info.id.clone(),
                            step: 0,
                            verdict: Verdict::Violated,
                            value: None,
                            residual: Verdict::Violated.residual_str().to_string(),
                            restarted_with: None,
                            witness: Vec::new(),
                            past: Vec::new(),
                            log_step: None,
                            call_index: None,
                            timestamp: None,
                        });
                    }
                    continue;
                }
            };
            if let Some(v) = m.initial() {
                if v == Verdict::Violated {
                    p.violations.push(0, None, false);
                }
                out.push(VerdictRecord {
                    property: p.info.id.clone(),
                    step: 0,
                    verdict: v,
                    value: None,
                    residual: v.residual_str().to_string(),
                    restarted_with: None,
                    witness: Vec::new(),
                    past: Vec::new(),
                    log_step: None,
                    call_index: None,
                    timestamp: None,
                });
            }
        }
        out
    }

    /// Verdicts decided by the end of the trace for `ltlf` properties: an instance whose
    /// finite-trace verdict is violated while its LTL3 verdict is still pending (an obligation
    /// the trace ended without meeting) is reported as violated at the last step, and counted;
    /// for a parametric property, the template too (every value not seen yet, no value).
    /// Call once, after the last [`Auditor::step`].
    pub fn end_of_trace(&mut self) -> Vec<VerdictRecord> {
        let step = self.steps;
        let witnesses = self.witnesses;
        let mut out = Vec::new();
        for p in &mut self.props {
            if p.semantics != Semantics::Ltlf {
                continue;
            }
            let mut found: Vec<(Option<String>, String, Vec<Change>)> = Vec::new();
            let mut check = |value: Option<String>, m: &EngineMonitor| {
                if m.verdict() != Verdict::Pending {
                    return false;
                }
                // TRAC_R: only the run since the last restart is judged here (the whole trace
                // if it never restarted); the failures before it were counted when they were
                // reported (each failing position once). A run that read no step (restarted
                // afresh after the last step) is not judged.
                let violated = m.ltlf_since_restart() == Some(Verdict::Violated);
                if violated {
                    let witness = if witnesses {
                        m.explanation_owned()
                    } else {
                        Vec::new()
                    };
                    found.push((value, m.residual(), witness));
                }
                violated
            };
            match &p.runner {
                Runner::Plain(m) => {
                    check(None, m);
                }
                Runner::Param(pm) => {
                    // The template: every value not seen yet (several variables: the
                    // monitors of partial tuples too; one record for them all).
                    for (_, m) in pm.unseen() {
                        if check(None, m) {
                            break;
                        }
                    }
                    for (v, m) in pm.instances() {
                        check(Some(v.to_string()), m);
                    }
                }
            }
            let param = matches!(p.runner, Runner::Param(_));
            for (value, residual, witness) in found {
                p.violations.push(step, value.clone(), param);
                out.push(VerdictRecord {
                    property: p.info.id.clone(),
                    step,
                    verdict: Verdict::Violated,
                    value,
                    residual: format!("end of trace with pending obligation: {residual}"),
                    restarted_with: None,
                    witness,
                    past: Vec::new(),
                    log_step: None,
                    call_index: None,
                    timestamp: None,
                });
            }
        }
        out
    }

    /// The labels of `event`: the union of every spec's labeling function (which also keeps the
    /// labels given in the event itself).
    pub fn label(&mut self, event: &Event) -> LabelSet {
        let mut labels = LabelSet::new();
        if let Some(given) = &event.labels {
            for l in given {
                labels.insert(l.clone());
            }
        }
        // `RuleLabeler::label` = its rules' labels, then the event's own (inserted above).
        // Each rule labeler reads the whole event: its text and, for structural rules (`Role`,
        // `Tool`, `Arg`, `Field`), its role, tool calls and fields.
        if self.text_rules {
            for l in self.labelers.iter() {
                for label in l.label_event(event) {
                    labels.insert(label);
                }
            }
        }
        labels
    }

    /// Reads one event; returns the verdicts reached at this step.
    pub fn step(&mut self, event: &Event) -> Vec<VerdictRecord> {
        let labels = self.label(event);
        let text_read = self.text_rules;
        self.advance(event, labels, text_read)
    }

    /// Reads one event whose labels were computed elsewhere (an LLM labeler, labeling steps
    /// concurrently); `labels` replace [`Auditor::label`]'s. Returns the verdicts reached at
    /// this step. Steps must still come in trace order. A step with text counts as understood
    /// (the external labeling function read it), as does one with `labels`.
    pub fn step_labeled(&mut self, event: &Event, labels: LabelSet) -> Vec<VerdictRecord> {
        self.advance(event, labels, true)
    }

    /// One step with its valuation; `text_read`: whether a labeling function read the text.
    fn advance(
        &mut self,
        event: &Event,
        mut labels: LabelSet,
        text_read: bool,
    ) -> Vec<VerdictRecord> {
        self.steps += 1;
        if !self.derived.is_empty() {
            self.derived.extend(&mut labels);
        }
        let c = &mut self.coverage;
        let has_text = event.has_content();
        c.steps += 1;
        c.with_text += usize::from(has_text);
        c.with_labels += usize::from(event.labels.is_some());
        c.understood += usize::from(event.labels.is_some() || (has_text && text_read));
        c.with_role += usize::from(event.role.is_some());
        c.with_tools += usize::from(
            !event.tool_calls.is_empty()
                || event.tool_call_id.is_some()
                || event.tool_name.is_some(),
        );
        c.with_fields += usize::from(event.fields.len() > usize::from(event.ends_session()));
        // One lookup per label: its interned id sets the valuation bit, and marks it seen
        // for the coverage (the label string is copied the first time only).
        self.valuation.fill(0);
        for l in labels.iter() {
            match self.interned.get(l) {
                Some(&id) => {
                    let (w, bit) = (id as usize / 64, 1u64 << (id % 64));
                    self.valuation[w] |= bit;
                    if self.seen_ids[w] & bit == 0 {
                        self.seen_ids[w] |= bit;
                        c.labels_seen.insert(l.to_string());
                    }
                }
                None => {
                    if !c.labels_seen.contains(l) {
                        c.labels_seen.insert(l.to_string());
                    }
                }
            }
        }
        // Witnesses quote the original line of a plain-text log (step number and decoration
        // included) and the output of a JSON Lines event; without witnesses no text is read.
        let shown;
        let text = if self.witnesses {
            let raw = event.raw.trim();
            shown = event.display_text();
            let text = if raw.is_empty() || raw.starts_with('{') {
                shown.as_ref()
            } else {
                raw
            };
            if text.trim().is_empty() {
                "(no text)"
            } else {
                text
            }
        } else {
            ""
        };
        let input = StepInput {
            step: self.steps,
            text,
            labels: &labels,
        };
        let mut out = Vec::new();
        for p in &mut self.props {
            match &mut p.runner {
                Runner::Plain(m) => {
                    let reached = match (&p.ids, &mut *m) {
                        (Some(ids), EngineMonitor::Table(t)) => {
                            let mut v = 0u64;
                            for (i, &id) in ids.iter().enumerate() {
                                v |= (self.valuation[id as usize / 64] >> (id % 64) & 1) << i;
                            }
                            if self.witnesses {
                                t.step_valuation(&input, v)
                            } else {
                                // Verdicts only: the fused step (one load per step).
                                t.step_bits(&[v])
                            }
                        }
                        _ => m.step(&input),
                    };
                    if let Some(v) = reached.filter(|_| !p.frozen) {
                        if v == Verdict::Violated {
                            p.violations.push(input.step, None, false);
                        }
                        out.push(record(&p.info.id, input.step, v, None, m, self.witnesses));
                    }
                }
                Runner::Param(pm) => {
                    let frozen = p.frozen;
                    for e in pm.step(&input) {
                        if frozen && !(e.inherited && e.step == 0) {
                            continue;
                        }
                        let m = pm
                            .instance(&e.value)
                            .expect("verdicts come from existing instances");
                        if e.verdict == Verdict::Violated {
                            p.violations.inherit(e.step, e.inherited, &e.value);
                        }
                        let mut r = record(
                            &p.info.id,
                            e.step,
                            e.verdict,
                            Some(e.value),
                            m,
                            self.witnesses,
                        );
                        if e.inherited {
                            // The template's witness (none in a witness-less audit).
                            if self.witnesses {
                                r.witness = e.witness;
                            }
                            r.past = Vec::new();
                            r.restarted_with = None;
                        }
                        out.push(r);
                    }
                    // A violation of every value not seen yet: reported once, value null.
                    if pm.template_reached() == Some(Verdict::Violated) && !frozen {
                        p.violations.push(input.step, None, true);
                        out.push(record(
                            &p.info.id,
                            input.step,
                            Verdict::Violated,
                            None,
                            pm.template_reached_monitor(),
                            self.witnesses,
                        ));
                    }
                    if pm.satisfied_now() && !frozen {
                        out.push(whole_satisfied(
                            &p.info.id,
                            input.step,
                            if self.witnesses {
                                pm.satisfied_witness().to_vec()
                            } else {
                                Vec::new()
                            },
                        ));
                    }
                }
            }
        }
        stamp(&mut out, self.steps, event);
        out
    }

    /// The first difference found by the cross-check engine, with the property id (and value
    /// of a parametric instance): the audit should stop there.
    pub fn mismatch(&self) -> Option<(String, Option<String>, Mismatch)> {
        for p in &self.props {
            match &p.runner {
                Runner::Plain(m) => {
                    if let Some(x) = m.mismatch() {
                        return Some((p.info.id.clone(), None, x.clone()));
                    }
                }
                Runner::Param(pm) => {
                    for (v, m) in pm.instances() {
                        if let Some(x) = m.mismatch() {
                            return Some((p.info.id.clone(), Some(v.to_string()), x.clone()));
                        }
                    }
                    // The template and, with several variables, the partial tuples (every
                    // value not seen yet).
                    for (_, m) in pm.unseen() {
                        if let Some(x) = m.mismatch() {
                            return Some((p.info.id.clone(), None, x.clone()));
                        }
                    }
                }
            }
        }
        None
    }

    /// The compiled monitors of the `index`-th property (in [`Auditor::properties`] order): for
    /// a plain property its monitor; for a parametric one its template (value `None`, standing
    /// for every value not seen yet) then one monitor per value seen. `None` when the property
    /// does not run on compiled tables (the progression engines) or `index` is out of range.
    /// Used for exact look-ahead over the monitor automaton.
    pub fn table_monitors(&self, index: usize) -> Option<Vec<(Option<&str>, &TableMonitor)>> {
        fn table(m: &EngineMonitor) -> Option<&TableMonitor> {
            match m {
                EngineMonitor::Table(t) => Some(t),
                EngineMonitor::CrossCheck(c) => Some(c.compiled()),
                EngineMonitor::Progression(_) => None,
            }
        }
        match &self.props.get(index)?.runner {
            Runner::Plain(m) => Some(vec![(None, table(m)?)]),
            Runner::Param(pm) => {
                let mut out = vec![(None, table(pm.template())?)];
                for (v, m) in pm.instances() {
                    out.push((Some(v), table(m)?));
                }
                Some(out)
            }
        }
    }

    /// Number of steps read.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// What the audit could read of the trace so far (see [`Coverage`]).
    pub fn coverage(&self) -> &Coverage {
        &self.coverage
    }

    /// True when some spec has labeling rules that read the events' text (else only labels
    /// given in the trace can make an atom hold).
    pub fn has_text_rules(&self) -> bool {
        self.text_rules
    }

    /// Every property's state at the end of the trace read so far.
    pub fn finish(&self) -> Vec<PropertyEnd> {
        self.props
            .iter()
            .map(|p| {
                let mut instances = Vec::new();
                let count = |value: Option<&str>| p.violations.count(value);
                match &p.runner {
                    Runner::Plain(m) => instances.push(InstanceEnd {
                        value: None,
                        verdict: m.verdict(),
                        ltlf: m.ltlf(),
                        residual: m.residual(),
                        violations: count(None),
                    }),
                    Runner::Param(pm) => {
                        for (v, m) in pm.instances() {
                            instances.push(InstanceEnd {
                                value: Some(v.to_string()),
                                verdict: m.verdict(),
                                ltlf: m.ltlf(),
                                residual: m.residual(),
                                violations: count(Some(v)),
                            });
                        }
                    }
                }
                // `forall x: φ` is the conjunction over every value, seen or not.
                let (ltl3, ltlf) = match &p.runner {
                    Runner::Plain(m) => (m.verdict(), m.ltlf()),
                    Runner::Param(pm) => (pm.verdict(), pm.ltlf()),
                };
                PropertyEnd {
                    property: p.info.id.clone(),
                    verdict: match p.semantics {
                        Semantics::Ltl3 => ltl3,
                        Semantics::Ltlf => ltlf,
                    },
                    violations: p.violations.total,
                    ltlf,
                    instances,
                }
            })
            .collect()
    }
}

/// The record of a parametric property satisfied for every value, seen or not.
/// Gives the records of `out` reached at `step` the log's own facts about `event`, that step:
/// its log step, timestamp and, for a call step, its call's place in its message.
fn stamp(out: &mut [VerdictRecord], step: usize, event: &Event) {
    let call_index = event
        .fields
        .get(crate::trace::CALL_INDEX)
        .and_then(serde_json::Value::as_u64);
    for r in out.iter_mut().filter(|r| r.step == step) {
        r.log_step = event.declared_step;
        r.timestamp.clone_from(&event.timestamp);
        r.call_index = call_index;
    }
}

fn whole_satisfied(id: &str, step: usize, witness: Vec<Change>) -> VerdictRecord {
    VerdictRecord {
        property: id.to_string(),
        step,
        verdict: Verdict::Satisfied,
        value: None,
        residual: Verdict::Satisfied.residual_str().to_string(),
        restarted_with: None,
        witness,
        past: Vec::new(),
        log_step: None,
        call_index: None,
        timestamp: None,
    }
}

fn record(
    id: &str,
    step: usize,
    verdict: Verdict,
    value: Option<String>,
    m: &EngineMonitor,
    witnesses: bool,
) -> VerdictRecord {
    // The residual a restart left, the witness and the citations explain the verdict: none of
    // them is built for a witness-less audit.
    let (restarted_with, witness, past) = if witnesses {
        let restarted = m.verdict() != verdict;
        (
            restarted.then(|| m.residual()),
            m.witness_owned(),
            m.past_citations(),
        )
    } else {
        (None, Vec::new(), Vec::new())
    };
    VerdictRecord {
        property: id.to_string(),
        step,
        verdict,
        value,
        residual: verdict.residual_str().to_string(),
        restarted_with,
        witness,
        past,
        log_step: None,
        call_index: None,
        timestamp: None,
    }
}
