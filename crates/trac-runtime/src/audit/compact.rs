//! Idle sessions compacted to their monitors' run states ([`Compact`]), and rebuilt into an
//! [`Auditor`] when their next event comes (or at their end).
//!
//! A file of many sessions without end markers keeps every session open to its end (its end
//! verdicts need the whole file): a full auditor is ≈ 2 KB (three compiled monitors of 352
//! bytes, violation maps, coverage with its label strings, buffers). An auditor whose monitors
//! are compiled tables holding nothing but their run state (no witness entries, no past-time
//! evaluator, not parametric, no derived atoms) is exactly described by its steps, its coverage
//! counts, the labels it saw and, per property, its [`RunState`] and violation count: ≈ 250
//! bytes for three properties, malloc headers included. [`Auditor::restore`] on a fresh auditor of the same plan gives
//! back an auditor that steps and ends exactly as the original would (same records, same end
//! states, same coverage).

use crate::audit::auditor::{Auditor, Runner};
use crate::audit::coverage::Coverage;
use crate::engine::EngineMonitor;
use rustc_hash::FxHashMap;
use trac_core::table::RunState;

/// Labels by number, shared by the compacted sessions of one driver: a compacted session keeps
/// the labels it saw as numbers, not strings. Grows with the distinct labels compacted (never
/// shrinks).
#[derive(Clone, Debug, Default)]
pub struct LabelIds {
    ids: FxHashMap<Box<str>, u32>,
    names: Vec<Box<str>>,
}

impl LabelIds {
    /// The number of `label`, given one the first time. O(|label|).
    fn id(&mut self, label: &str) -> u32 {
        if let Some(&id) = self.ids.get(label) {
            return id;
        }
        let id = u32::try_from(self.names.len()).expect("fewer than 2^32 distinct labels");
        self.names.push(label.into());
        self.ids.insert(label.into(), id);
        id
    }

    /// The label numbered `id` by [`LabelIds::id`].
    fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }
}

/// An idle session's auditor reduced to what tells it apart from a fresh one of its plan
/// ([`Auditor::compact`]).
#[derive(Clone, Debug)]
pub struct Compact {
    steps: usize,
    /// The coverage's counts: steps, with text, with labels, understood, with role, with tools,
    /// with fields.
    counts: [usize; 7],
    /// The labels seen, as numbers of the driver's [`LabelIds`].
    labels: Box<[u32]>,
    /// Per property: its monitor's run state and its violations.
    props: Box<[(RunState, usize)]>,
}

impl Compact {
    /// Steps read.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// Steps understood ([`Coverage::understood`]).
    pub fn understood(&self) -> usize {
        self.counts[3]
    }

    /// Adds this session's coverage to `cov`, as [`Coverage::merge`] of its auditor's would.
    pub fn merge_coverage(&self, cov: &mut Coverage, labels: &LabelIds) {
        let c = &self.counts;
        cov.steps += c[0];
        cov.with_text += c[1];
        cov.with_labels += c[2];
        cov.understood += c[3];
        cov.with_role += c[4];
        cov.with_tools += c[5];
        cov.with_fields += c[6];
        for &id in self.labels.iter() {
            let l = labels.name(id);
            if !cov.labels_seen.contains(l) {
                cov.labels_seen.insert(l.to_string());
            }
        }
    }
}

impl Auditor {
    /// This auditor as a [`Compact`], its labels numbered in `labels`; `None` when it holds more
    /// than a compact keeps: a property not run by a plain compiled table, a monitor with
    /// witness entries, past-time state or shadows ([`trac_core::table::TableMonitor::run_state`]),
    /// violations by value, or derived atoms (whose quantifiers keep state). O(properties +
    /// labels seen).
    pub fn compact(&self, labels: &mut LabelIds) -> Option<Compact> {
        if !self.derived.is_empty() {
            return None;
        }
        let mut props = Vec::with_capacity(self.props.len());
        for p in &self.props {
            let Runner::Plain(EngineMonitor::Table(t)) = &p.runner else {
                return None;
            };
            let v = &p.violations;
            if !v.by_value.is_empty() || !v.unclaimed.is_empty() || v.total != v.unseen {
                return None;
            }
            props.push((t.run_state()?, v.total));
        }
        let c = &self.coverage;
        Some(Compact {
            steps: self.steps,
            counts: [
                c.steps,
                c.with_text,
                c.with_labels,
                c.understood,
                c.with_role,
                c.with_tools,
                c.with_fields,
            ],
            labels: c.labels_seen.iter().map(|l| labels.id(l)).collect(),
            props: props.into_boxed_slice(),
        })
    }

    /// Gives this auditor, fresh from the plan `c` was compacted from
    /// ([`AuditPlan::reset`](crate::audit::plan::AuditPlan::reset)), the state of the auditor
    /// `c` was made of; `labels`: the numbering [`Auditor::compact`] used. O(properties +
    /// labels seen).
    pub fn restore(&mut self, c: &Compact, labels: &LabelIds) {
        self.steps = c.steps;
        let cov = &mut self.coverage;
        [
            cov.steps,
            cov.with_text,
            cov.with_labels,
            cov.understood,
            cov.with_role,
            cov.with_tools,
            cov.with_fields,
        ] = c.counts;
        for &id in c.labels.iter() {
            let l = labels.name(id);
            // The interned labels seen are marked as `advance` marks them.
            if let Some(&i) = self.interned.get(l) {
                self.seen_ids[i as usize / 64] |= 1u64 << (i % 64);
            }
            cov.labels_seen.insert(l.to_string());
        }
        for (p, &(state, violations)) in self.props.iter_mut().zip(c.props.iter()) {
            if let Runner::Plain(EngineMonitor::Table(t)) = &mut p.runner {
                t.set_run_state(state);
            }
            p.violations.total = violations;
            p.violations.unseen = violations;
        }
    }
}
