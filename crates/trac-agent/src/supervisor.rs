//! The [`Supervisor`]: the monitors of a spec between an agent and its environment.
//!
//! Usable as a library by anyone with their own agent loop:
//!
//! ```no_run
//! # use trac_agent::supervisor::{Supervisor, SupervisorOptions};
//! # let specs: Vec<trac_spec::spec::CheckedSpec> = vec![];
//! let mut sup = Supervisor::new(&specs, &SupervisorOptions::default()).unwrap();
//! sup.initial();
//! let action = "LOAD package1 into area a2 at location l1";
//! let labels = sup.label(action, Some(vec!["load_into(a2)".into()]));
//! let check = sup.check(action, &labels);          // what would happen, nothing committed
//! if check.violated.is_empty() {
//!     let verdicts = sup.commit(action, None, &labels); // the step happened
//! }
//! ```
//!
//! Under the hood it is the audit driver of `trac audit`, pushed one event at a time
//! ([`Driver::feed`], compiled engine, TRAC_R by default): the run is one session of it, opened
//! at [`Supervisor::initial`] and closed at [`Supervisor::end_of_run`], so a run's log re-audited
//! by `trac audit` gives the same verdicts. A candidate action or a sampled continuation is tried
//! on a clone of the session's [`Auditor`], which commits nothing. The exact look-ahead
//! ([`Supervisor::exact`]) reads the compiled automaton of each property
//! ([`crate::lookahead`]).
//!
//! Steps that are trace events rather than action text (chat messages with roles, tool calls
//! and arguments, as `trac gateway` sees them) go through [`Supervisor::check_event`] and
//! [`Supervisor::commit_event`]: labeled by the specs' rules exactly as `trac audit` labels
//! them. [`Supervisor::fork`] opens another run (session) on the same compiled monitors.

use crate::lookahead::{self, ExactRisk, Lookahead};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use trac_core::labels::LabelSet;
use trac_core::table::Table;
use trac_runtime::audit::{
    AuditError, AuditOptions, AuditPlan, Auditor, Checks, CrossCheckFailure, Driver, Sink,
    TraceEnd, TraceStart, VerdictRecord,
};
use trac_runtime::engine::Engine;
use trac_runtime::label::labeler::{LabelerError, RuleLabeler};
use trac_runtime::trace::Event;
use trac_runtime::Verdict;
use trac_spec::spec::CheckedSpec;

/// Options of a [`Supervisor`].
#[derive(Clone, Debug)]
pub struct SupervisorOptions {
    /// TRAC_R: restart a property after each violation (default `true`).
    pub reset: bool,
    /// The session name written in the events (one per run).
    pub session: Option<String>,
}

impl Default for SupervisorOptions {
    fn default() -> Self {
        SupervisorOptions {
            reset: true,
            session: None,
        }
    }
}

/// A monitored property.
#[derive(Clone, Debug, Serialize)]
pub struct PropertyMeta {
    /// Its id.
    pub id: String,
    /// Its description (the rule as the agent is told it).
    pub description: String,
    /// Its formula in plain English.
    pub english: String,
    /// The variable of a parametric property.
    pub var: Option<String>,
}

/// The exact look-ahead of one property (see [`Supervisor::exact`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Exact {
    /// The property's id.
    pub property: String,
    /// The probability of a violation within `k` steps when the automaton alone decides it
    /// (0 or 1), else `None`.
    pub risk: Option<f64>,
    /// The least number of steps to ⊥ from the current state(s), if ⊥ is reachable.
    pub min_steps: Option<u32>,
    /// The next-step valuations that lead to ⊥ at once, as cubes in Spot syntax (parametric
    /// instances prefixed by their value).
    pub immediate: Vec<String>,
}

/// What a candidate action would do (see [`Supervisor::check`]).
#[derive(Clone, Debug)]
pub struct Check {
    /// The verdicts the action would produce.
    pub records: Vec<VerdictRecord>,
    /// `(property, value)` of each violation it would cause.
    pub violated: Vec<(String, Option<String>)>,
}

impl Check {
    /// Whether the action would violate no property now.
    pub fn compliant(&self) -> bool {
        self.violated.is_empty()
    }
}

/// Look-aheads computed so far, by table (kept alive with it).
type LookaheadCache = Vec<(Arc<Table>, Arc<Lookahead>)>;

/// Why a [`Supervisor`] cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum SupervisorError {
    /// A property cannot be compiled or monitored, or two share an id.
    #[error("{0}")]
    Audit(#[from] AuditError),
    /// A labeling rule is unusable.
    #[error("{0}")]
    Labeler(#[from] LabelerError),
}

/// The supervisor's sink: the verdicts the driver gave during one call, taken by it.
#[derive(Clone, Debug, Default)]
struct Taken(Vec<VerdictRecord>);

impl Sink for Taken {
    type Trace = ();

    fn start(&mut self, _trace: &TraceStart<'_>) {}

    fn verdicts(&mut self, _trace: &mut (), records: Vec<VerdictRecord>) {
        self.0.extend(records);
    }

    fn end(&mut self, _trace: (), _end: TraceEnd) {}
}

/// The monitors of a spec, run step by step over an agent's actions (see the module docs).
#[derive(Clone)]
pub struct Supervisor {
    /// The audit driver; the run is its one session, `session`.
    driver: Driver<()>,
    /// The step-0 verdicts, computed when the session opened, until [`Supervisor::initial`].
    pending: Vec<VerdictRecord>,
    /// The first step where the cross-check engines differed (never with the compiled engine).
    failure: Option<CrossCheckFailure>,
    labelers: Vec<RuleLabeler>,
    props: Vec<PropertyMeta>,
    fallbacks: Vec<trac_runtime::audit::Fallback>,
    descriptions: Arc<HashMap<String, String>>,
    lookaheads: Arc<Mutex<LookaheadCache>>,
    session: Option<String>,
    steps: usize,
}

impl Supervisor {
    /// A supervisor of every property of `specs` on compiled monitors.
    ///
    /// # Errors
    /// A property that cannot be compiled or monitored, a duplicate id, a bad labeling rule.
    pub fn new(
        specs: &[CheckedSpec],
        opts: &SupervisorOptions,
    ) -> Result<Supervisor, SupervisorError> {
        let audit = AuditOptions {
            reset: opts.reset,
            engine: Engine::Compiled,
            compiler: Some(trac_compile::Compiler::shared()),
        };
        let plan = AuditPlan::new(specs, &audit)?;
        let properties = plan.properties();
        let fallbacks = plan.fallbacks().to_vec();
        let name = opts.session.as_deref().unwrap_or("run");
        let mut driver = Driver::new(plan, Checks::default(), name);
        let mut taken = Taken::default();
        driver.open_session(&mut taken, opts.session.as_deref());
        let mut descriptions = HashMap::new();
        let mut labelers = Vec::new();
        let mut vars = Vec::new();
        for s in specs {
            descriptions.extend(s.descriptions());
            labelers.push(RuleLabeler::new(&s.spec)?);
            vars.extend(s.properties.iter().map(|p| p.var.clone()));
        }
        let props = properties
            .into_iter()
            .zip(vars)
            .map(|(p, var)| PropertyMeta {
                id: p.id,
                description: p.description,
                english: p.english,
                var,
            })
            .collect();
        Ok(Supervisor {
            driver,
            pending: taken.0,
            failure: None,
            labelers,
            props,
            fallbacks,
            descriptions: Arc::new(descriptions),
            lookaheads: Arc::new(Mutex::new(Vec::new())),
            session: opts.session.clone(),
            steps: 0,
        })
    }

    /// The monitored properties, in spec order.
    pub fn properties(&self) -> &[PropertyMeta] {
        &self.props
    }

    /// The properties whose table is over the compiler's state budget, run by progression with
    /// bounded satisfiability checks ([`trac_runtime::audit::AuditPlan::fallbacks`]).
    pub fn fallbacks(&self) -> &[trac_runtime::audit::Fallback] {
        &self.fallbacks
    }

    /// Steps committed so far.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// Verdicts decided before the first step (call once, first; later calls give none).
    pub fn initial(&mut self) -> Vec<VerdictRecord> {
        std::mem::take(&mut self.pending)
    }

    /// Verdicts decided by the end of the run (`ltlf` properties with a pending obligation);
    /// call once, last: the run's session is closed, and later steps are a new run.
    pub fn end_of_run(&mut self) -> Vec<VerdictRecord> {
        let mut taken = Taken::default();
        self.driver
            .close_session(&mut taken, self.session.as_deref());
        taken.0
    }

    /// The first step at which the cross-check engines differed, if any (the supervisor runs the
    /// compiled engine alone, so none is expected; kept rather than lost).
    pub fn failure(&self) -> Option<&CrossCheckFailure> {
        self.failure.as_ref()
    }

    /// What the run's steps so far let the audit read (as `trac audit` computes it: which
    /// properties could be audited, [`trac_runtime::audit::Coverage::unaudited_properties`]):
    /// `None` after [`Supervisor::end_of_run`].
    pub fn coverage(&self) -> Option<&trac_runtime::audit::Coverage> {
        self.auditor().map(Auditor::coverage)
    }

    /// The auditor of the run's session: `None` after [`Supervisor::end_of_run`].
    fn auditor(&self) -> Option<&Auditor> {
        self.driver.session(self.session.as_deref())
    }

    /// The labels of `action`: the spec's labeling rules on the action's text, plus `given`
    /// (the environment's ground-truth labels).
    pub fn label(&self, action: &str, given: Option<Vec<String>>) -> LabelSet {
        let mut set = LabelSet::new();
        for l in &self.labelers {
            for x in l.label_text(action) {
                set.insert(x);
            }
        }
        for x in given.into_iter().flatten() {
            set.insert(x);
        }
        set
    }

    /// The trace event of a step (as written to the run log and re-read by `trac audit`).
    pub fn event(&self, action: &str, input: Option<&str>, labels: &LabelSet) -> Event {
        let mut l: Vec<String> = labels.iter().map(|s| s.to_string()).collect();
        l.sort();
        Event {
            session: self.session.clone(),
            step: self.steps + 1,
            declared_step: Some(self.steps as u64 + 1),
            input: input.map(str::to_string),
            output: Some(action.to_string()),
            labels: Some(l),
            ..Event::default()
        }
    }

    fn violations(records: &[VerdictRecord]) -> Vec<(String, Option<String>)> {
        records
            .iter()
            .filter(|r| r.verdict == Verdict::Violated)
            .map(|r| (r.property.clone(), r.value.clone()))
            .collect()
    }

    /// What `action` with `labels` would do now, without committing it (the session's monitors
    /// are cloned). O(properties). After the end of the run: no verdicts.
    pub fn check(&self, action: &str, labels: &LabelSet) -> Check {
        let records = match self.auditor() {
            Some(a) => a
                .clone()
                .step_labeled(&self.event(action, None, labels), labels.clone()),
            None => Vec::new(),
        };
        Check {
            violated: Self::violations(&records),
            records,
        }
    }

    /// The step happened: it is fed to the driver (every monitor progresses); returns its
    /// verdicts (the step-0 verdicts first, if [`Supervisor::initial`] was not called).
    pub fn commit(
        &mut self,
        action: &str,
        input: Option<&str>,
        labels: &LabelSet,
    ) -> Vec<VerdictRecord> {
        let ev = self.event(action, input, labels);
        self.steps += 1;
        let mut taken = Taken(std::mem::take(&mut self.pending));
        if let Err(f) = self.driver.feed(&mut taken, &ev, Some(labels.clone())) {
            self.failure.get_or_insert(f);
        }
        taken.0
    }

    /// A supervisor of a new run, session `session`, on the same compiled monitors (nothing is
    /// compiled again: cheap next to [`Supervisor::new`]). None of this supervisor's steps
    /// carry over; its step-0 verdicts are pending until [`Supervisor::initial`] (or the first
    /// commit). One supervisor per conversation of a gateway, all forked from one.
    pub fn fork(&self, session: Option<&str>) -> Supervisor {
        let mut s = self.clone();
        let mut discarded = Taken::default();
        s.driver
            .close_session(&mut discarded, self.session.as_deref());
        s.session = session.map(str::to_string);
        let mut taken = Taken::default();
        s.driver.open_session(&mut taken, s.session.as_deref());
        s.pending = taken.0;
        s.failure = None;
        s.steps = 0;
        s
    }

    /// The session name of the run (events fed to it belong to it).
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// `event` in the run's session (its `session` set to the supervisor's, when it differs).
    fn own<'e>(&self, event: &'e Event) -> std::borrow::Cow<'e, Event> {
        if event.session == self.session {
            std::borrow::Cow::Borrowed(event)
        } else {
            let mut ev = event.clone();
            ev.session = self.session.clone();
            std::borrow::Cow::Owned(ev)
        }
    }

    /// What trace event `event` (a chat message, as a trace reader reads it) would do now,
    /// without committing it: it is labeled as `trac audit` labels it (the specs' rules over its
    /// text, role, tool calls, arguments and fields, plus its own labels) and stepped on a clone
    /// of the session's auditor. After the end of the run: no verdicts.
    pub fn check_event(&self, event: &Event) -> Check {
        let records = match self.auditor() {
            Some(a) => a.clone().step(&self.own(event)),
            None => Vec::new(),
        };
        Check {
            violated: Self::violations(&records),
            records,
        }
    }

    /// Trace event `event` happened: it is fed to the driver as `trac audit` feeds an event of a
    /// trace (labeled by the specs' rules, [`Driver::feed`] with no labels given), so that a log
    /// of these events re-audits to the same verdicts. Returns its verdicts (the step-0 verdicts
    /// first, if [`Supervisor::initial`] was not called).
    pub fn commit_event(&mut self, event: &Event) -> Vec<VerdictRecord> {
        self.steps += 1;
        let mut taken = Taken(std::mem::take(&mut self.pending));
        let ev = self.own(event);
        if let Err(f) = self.driver.feed(&mut taken, &ev, None) {
            self.failure.get_or_insert(f);
        }
        taken.0
    }

    /// Per property, the number of violations a hypothetical continuation (actions with their
    /// labels) would cause from now, on cloned monitors.
    pub fn simulate(&self, steps: &[(String, LabelSet)]) -> Vec<usize> {
        let mut counts = vec![0; self.props.len()];
        let Some(a) = self.auditor() else {
            return counts;
        };
        let mut a = a.clone();
        let index: HashMap<&str, usize> = self
            .props
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id.as_str(), i))
            .collect();
        for (t, (action, labels)) in steps.iter().enumerate() {
            let mut ev = self.event(action, None, labels);
            ev.step += t;
            for r in a.step_labeled(&ev, labels.clone()) {
                if r.verdict == Verdict::Violated {
                    if let Some(&i) = index.get(r.property.as_str()) {
                        counts[i] += 1;
                    }
                }
            }
        }
        counts
    }

    /// Per property, the number of violations a hypothetical continuation of trace events
    /// (chat messages, as [`Supervisor::check_event`] reads them) would cause from now, on
    /// cloned monitors: what [`Supervisor::simulate`] is for actions.
    pub fn simulate_events(&self, events: &[Event]) -> Vec<usize> {
        let mut counts = vec![0; self.props.len()];
        let Some(a) = self.auditor() else {
            return counts;
        };
        let mut a = a.clone();
        for ev in events {
            for r in a.step(&self.own(ev)) {
                if r.verdict == Verdict::Violated {
                    if let Some(i) = self.props.iter().position(|p| p.id == r.property) {
                        counts[i] += 1;
                    }
                }
            }
        }
        counts
    }

    fn lookahead(&self, table: &Arc<Table>) -> Arc<Lookahead> {
        let mut cache = self.lookaheads.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, l)) = cache.iter().find(|(t, _)| Arc::ptr_eq(t, table)) {
            return l.clone();
        }
        let l = Arc::new(Lookahead::new(table));
        cache.push((table.clone(), l.clone()));
        l
    }

    /// The exact look-ahead of every property for a violation within `k` steps, given what is
    /// known of the next step's labels (`known(label)`: `Some(value)` when known, e.g. the
    /// environment's state propositions, or every label of a candidate action).
    ///
    /// Per property, over its monitors (a parametric property's template stands for the values
    /// not seen yet and is looked at with nothing known): risk 1 if some monitor must reach ⊥ at
    /// the next step, 0 if none can within `k` steps, else unknown with the least number of
    /// steps. O(monitors × diagram size) after a one-time BFS per table.
    pub fn exact(&self, k: u32, known: &dyn Fn(&str) -> Option<bool>) -> Vec<Exact> {
        let mut out = Vec::with_capacity(self.props.len());
        for (i, p) in self.props.iter().enumerate() {
            let Some(monitors) = self.auditor().and_then(|a| a.table_monitors(i)) else {
                out.push(Exact {
                    property: p.id.clone(),
                    risk: None,
                    min_steps: None,
                    immediate: Vec::new(),
                });
                continue;
            };
            let mut any_one = false;
            let mut min_steps: Option<u32> = None;
            let mut all_zero = true;
            let mut immediate = Vec::new();
            for (value, m) in monitors {
                let table = m.table();
                let la = self.lookahead(table);
                let template = p.var.is_some() && value.is_none();
                let names: Vec<String> = table
                    .prop_names()
                    .map(|n| match (&p.var, value) {
                        (Some(var), Some(v)) => trac_ltl::formula::instantiate_name(n, var, v),
                        _ => n.to_string(),
                    })
                    .collect();
                let kn = |i: u32| {
                    if template {
                        None
                    } else {
                        known(&names[i as usize])
                    }
                };
                let r = la.exact_risk(table.as_ref(), m.state(), k, &kn);
                let steps = match r {
                    ExactRisk::One => {
                        any_one = true;
                        Some(1)
                    }
                    ExactRisk::Zero if m.state() > 1 => la.steps_to_violation(m.state()),
                    ExactRisk::Zero => None,
                    ExactRisk::Unknown { min_steps: s } => {
                        all_zero = false;
                        Some(s)
                    }
                };
                if let Some(s) = steps {
                    min_steps = Some(min_steps.map_or(s, |x| x.min(s)));
                }
                for cube in lookahead::violating_cubes(table.as_ref(), m.state()) {
                    let s = cube
                        .iter()
                        .map(|&(i, v)| {
                            let n = &names[i as usize];
                            if v {
                                n.clone()
                            } else {
                                format!("!{n}")
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" & ");
                    let s = if s.is_empty() { "true".into() } else { s };
                    immediate.push(match (template, value) {
                        (true, _) => format!("(any new {}) {s}", p.var.as_deref().unwrap_or("")),
                        (_, Some(v)) => format!("({v}) {s}"),
                        _ => s,
                    });
                }
            }
            let risk = if any_one {
                Some(1.0)
            } else if all_zero {
                Some(0.0)
            } else {
                None
            };
            out.push(Exact {
                property: p.id.clone(),
                risk,
                min_steps,
                immediate,
            });
        }
        out
    }

    /// The residual obligation of property `index` in plain English (its pending monitors'
    /// residual formulas rendered with the spec's proposition descriptions; a parametric
    /// instance prefixed by its value), for the *inject* intervention. Falls back to the
    /// property's formula in English.
    pub fn residual_english(&self, index: usize) -> String {
        let p = &self.props[index];
        let mut parts = Vec::new();
        if let Some(monitors) = self.auditor().and_then(|a| a.table_monitors(index)) {
            for (value, m) in monitors {
                if m.state() <= 1 {
                    continue;
                }
                let residual = trac_runtime::Monitor::residual(m);
                let mut arena = trac_ltl::Arena::new();
                let text = match trac_ltl::parse(&mut arena, &residual) {
                    Ok(f) => trac_ltl::english::render(&arena, f, &self.descriptions),
                    Err(_) => residual.clone(),
                };
                let text = match value {
                    Some(v) => format!("for {v}: {text}"),
                    None if p.var.is_some() => {
                        format!("for every {}: {text}", p.var.as_deref().unwrap_or(""))
                    }
                    None => text,
                };
                if !parts.contains(&text) {
                    parts.push(text);
                }
            }
        }
        if parts.is_empty() {
            p.english.clone()
        } else {
            parts.join("; ")
        }
    }

    /// The residual formula(s) of property `index` (Spot syntax; `; `-separated for parametric
    /// instances).
    pub fn residual(&self, index: usize) -> String {
        match self.auditor().and_then(|a| a.table_monitors(index)) {
            Some(ms) => ms
                .iter()
                .map(|(v, m)| {
                    let r = trac_runtime::Monitor::residual(*m);
                    match v {
                        Some(v) => format!("{v}: {r}"),
                        None => r,
                    }
                })
                .collect::<Vec<_>>()
                .join("; "),
            None => String::new(),
        }
    }
}
