//! The audit loop: read a trace, label each step, run every property's monitor, and collect
//! verdicts with witnesses.
//!
//! [`Auditor`] is the streaming core (one event in, the verdicts reached at that step out);
//! [`audit_path`] and [`audit_events`] wrap it to produce a [`TraceReport`]. A bad trace line stops
//! the audit but keeps everything computed before it: the report holds the verdicts so far, the
//! end-of-trace verdicts of the prefix read, and the error.

use crate::derived::DerivedAtoms;
use crate::engine::{Engine, EngineMonitor, Mismatch, TableCompiler};
use crate::labeler::RuleLabeler;
use crate::labels::{LabelSet, StepInput};
use crate::monitor::{Change, Monitor, PastCitation, ResetPolicy, Verdict};
use crate::parametric::ParametricMonitor;
use crate::table::TableMonitor;
use crate::trace::{self, Event, TraceError};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;
use trac_spec::spec::{CheckedSpec, Semantics};

/// Options of an audit.
#[derive(Clone, Debug)]
pub struct AuditOptions {
    /// TRAC_R: restart a property after each violation to count violations (default `true`).
    /// `false` is plain TRAC: a violated property stays violated.
    pub reset: bool,
    /// The monitoring engine (default [`Engine::Compiled`]).
    pub engine: Engine,
    /// The compiler of the compiled and cross-check engines (`trac_compile::Compiler::shared()`),
    /// whose [`TableCompiler::oracle`] also decides complete progression's verdicts. Every engine
    /// but plain progression needs one.
    pub compiler: Option<Arc<dyn TableCompiler>>,
}

impl Default for AuditOptions {
    fn default() -> Self {
        AuditOptions {
            reset: true,
            engine: Engine::default(),
            compiler: None,
        }
    }
}

impl PartialEq for AuditOptions {
    fn eq(&self, other: &Self) -> bool {
        self.reset == other.reset
            && self.engine == other.engine
            && match (&self.compiler, &other.compiler) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
    }
}

impl Eq for AuditOptions {}

/// An error that prevents an audit from starting.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The trace could not be opened.
    #[error("{0}")]
    Trace(#[from] TraceError),
    /// A property or labeling rule is unusable.
    #[error("{0}")]
    Spec(String),
}

/// Static facts about one audited property.
#[derive(Clone, Debug, Serialize)]
pub struct PropertyInfo {
    /// The property's id.
    pub id: String,
    /// Its description from the spec.
    pub description: String,
    /// The formula, normalized, in Spot syntax (with its `forall` prefix if parametric).
    pub formula: String,
    /// The formula in plain English, with the spec's proposition descriptions.
    pub english: String,
    /// `ltl3` or `ltlf`.
    pub semantics: &'static str,
}

/// A verdict reached at one step, with its witness.
#[derive(Clone, Debug, Serialize)]
pub struct VerdictRecord {
    /// The property's id.
    pub property: String,
    /// 1-based step; 0 for a verdict decided before the first step.
    pub step: usize,
    /// `violated` or `satisfied`.
    pub verdict: Verdict,
    /// For a parametric property, the value of its variable.
    pub value: Option<String>,
    /// The residual formula at the verdict: `false` or `true` (Spot syntax).
    pub residual: String,
    /// The residual the property restarted with (TRAC_R), if it restarted.
    pub restarted_with: Option<String>,
    /// The witness: the steps since the property's last (re)start that changed its residual,
    /// ending with the verdict step.
    pub witness: Vec<Change>,
    /// For a property with past-time operators: why the past-time subformulas that decided the
    /// verdict step had their values, with the steps that made them so
    /// ([`crate::past`]). Empty (and not serialized) otherwise, and for verdicts at step 0, at
    /// the end of an LTLf trace, and inherited by a parametric instance from its template.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub past: Vec<PastCitation>,
    /// The step number the log itself gives the verdict step ([`Event::declared_step`]), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_step: Option<u64>,
    /// The timestamp the log gives the verdict step ([`Event::timestamp`]), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

/// The state of one instance of a property at the end of the trace.
#[derive(Clone, Debug, Serialize)]
pub struct InstanceEnd {
    /// The parameter value (None for a non-parametric property).
    pub value: Option<String>,
    /// LTL3 verdict at the end of the trace (after restarts).
    pub verdict: Verdict,
    /// Finite-trace (LTLf) verdict of the whole trace.
    pub ltlf: Verdict,
    /// Residual formula at the end.
    pub residual: String,
    /// Number of violations reported.
    pub violations: usize,
}

/// One property at the end of the trace.
#[derive(Clone, Debug, Serialize)]
pub struct PropertyEnd {
    /// The property's id.
    pub property: String,
    /// LTL3 verdict at the end. For a parametric property `forall x: φ`, the conjunction over
    /// every value, seen or not: violated if an instance or the template (standing for every
    /// value not seen yet) is currently violated, satisfied if all of them are satisfied,
    /// pending otherwise. For `ltlf` properties, the LTLf verdict.
    pub verdict: Verdict,
    /// Number of violations reported over the trace (all instances).
    pub violations: usize,
    /// Finite-trace verdict: violated if the LTLf verdict of an instance or of the template
    /// (every value not seen yet) is.
    pub ltlf: Verdict,
    /// Per-instance details (one entry for a non-parametric property).
    pub instances: Vec<InstanceEnd>,
}

/// What an audit could read of a trace: how many steps carried text or labels, how many it
/// understood, and which labels held. A trace of which no step was understood was not audited at
/// all, whatever its verdicts say (a `forall` or `G !p` property is vacuously clean on it).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Coverage {
    /// Steps read.
    pub steps: usize,
    /// Steps whose event had non-blank text (output or input).
    pub with_text: usize,
    /// Steps whose event gave a `labels` field (even an empty one).
    pub with_labels: usize,
    /// Steps understood: the event gave `labels`, or it had text and some spec has labeling rules
    /// that read it.
    pub understood: usize,
    /// Every label that held at some step (given by the trace or computed by the rules).
    #[serde(skip)]
    pub labels_seen: FxHashSet<String>,
    /// Steps whose event had a role.
    #[serde(skip)]
    pub with_role: usize,
    /// Steps whose event made a tool call or was a tool result.
    #[serde(skip)]
    pub with_tools: usize,
    /// Steps whose event had record fields (other than `session_end`).
    #[serde(skip)]
    pub with_fields: usize,
}

impl Coverage {
    /// Adds `other`'s counts and labels (for a file audited as several sessions).
    pub fn merge(&mut self, other: &Coverage) {
        self.steps += other.steps;
        self.with_text += other.with_text;
        self.with_labels += other.with_labels;
        self.understood += other.understood;
        self.with_role += other.with_role;
        self.with_tools += other.with_tools;
        self.with_fields += other.with_fields;
        // Only new labels are cloned: a file of many sessions merges the same few labels once
        // per session.
        for l in &other.labels_seen {
            if !self.labels_seen.contains(l) {
                self.labels_seen.insert(l.clone());
            }
        }
    }

    /// Whether atom `name` of a property quantified over `var` (if any) held at some step: the
    /// label `name` itself, or for `base(var)` any label `base(value)`. O(distinct labels) for a
    /// quantified atom, O(1) otherwise.
    pub fn ever_labeled(&self, name: &str, var: Option<&str>) -> bool {
        if self.labels_seen.contains(name) {
            return true;
        }
        let Some((base, arg)) = trac_spec::formula::split_atom_name(name) else {
            return false;
        };
        // Several variables (`tool, rid`) and several parameters (`load(p, a1)`): a label
        // of the same base and arity whose constants agree.
        let Some(var) = var else {
            return false;
        };
        let vars: Vec<&str> = var.split(", ").collect();
        let args: Vec<&str> = arg.split(", ").collect();
        if !args.iter().any(|a| vars.contains(a)) {
            return false;
        }
        self.labels_seen.iter().any(|l| {
            trac_spec::formula::split_atom_name(l).is_some_and(|(b, a)| {
                let vals: Vec<&str> = a.split(", ").collect();
                b == base
                    && vals.len() == args.len()
                    && args
                        .iter()
                        .zip(&vals)
                        .all(|(x, v)| vars.contains(x) || x == v)
            })
        })
    }

    /// Warnings about labels and propositions that do not meet, for a trace audited against
    /// `specs` (empty when no spec declares a proposition, i.e. only `--formula`s):
    /// - labels that held (given by the trace) whose name is no proposition any spec declares and
    ///   no atom of any property: a label spelled differently from the spec's proposition is
    ///   otherwise silently ignored (up to 8 listed, then a count);
    /// - when the trace gave no `labels` at all and `model` is false (no LLM labels anything):
    ///   propositions that a property reads, that have no labeling rule and so never held;
    /// - propositions that a property reads whose rule reads structure no step had
    ///   ([`Coverage::never_hold`]: roles, tools, arguments or fields on a text log).
    ///
    /// Each warning is one line without the `warning:` prefix, naming `file`.
    /// O(distinct labels × declared propositions).
    pub fn label_warnings(&self, file: &str, specs: &[CheckedSpec], model: bool) -> Vec<String> {
        let declared: Vec<&trac_spec::spec::PropositionDecl> = specs
            .iter()
            .flat_map(|c| c.spec.propositions.iter())
            .collect();
        if declared.is_empty() {
            return Vec::new();
        }
        let base_of = |l: &str| -> String {
            trac_spec::formula::split_atom_name(l)
                .map_or(l, |(b, _)| b)
                .to_string()
        };
        let mut read: FxHashSet<String> = FxHashSet::default();
        for p in specs.iter().flat_map(|c| c.properties.iter()) {
            for s in p.arena.atoms(p.formula) {
                let name = p.arena.sym_name(s);
                read.insert(name.to_string());
                read.insert(base_of(name));
            }
        }
        let mut out = Vec::new();
        let mut stray: Vec<&str> = self
            .labels_seen
            .iter()
            .map(String::as_str)
            .filter(|l| {
                let b = base_of(l);
                !declared.iter().any(|d| d.name == b) && !read.contains(*l) && !read.contains(&b)
            })
            .collect();
        if !stray.is_empty() {
            stray.sort_unstable();
            let n = stray.len();
            let shown: Vec<String> = stray.iter().take(8).map(|l| format!("`{l}`")).collect();
            let more = if n > 8 {
                format!(" and {} more", n - 8)
            } else {
                String::new()
            };
            out.push(format!(
                "{file}: label(s) {}{more} match no proposition of the spec(s) and were ignored",
                shown.join(", ")
            ));
        }
        // Only the propositions some property reads: an unused one cannot hide a verdict.
        for (name, why) in self.never_hold(specs, model) {
            if !read.contains(&name) {
                continue;
            }
            out.push(format!(
                "{file}: proposition `{name}` can never hold: {why}, and no step has any"
            ));
        }
        if self.with_labels == 0 && !model {
            for d in &declared {
                if d.rule.is_none()
                    && read.contains(&d.name)
                    && !self.labels_seen.iter().any(|l| base_of(l) == d.name)
                {
                    out.push(format!(
                        "{file}: proposition `{}` has no labeling rule and the trace gives no labels: it never held",
                        d.name
                    ));
                }
            }
        }
        out
    }

    /// What the steps carried beyond text and labels (roles, tool calls, fields).
    pub fn structure(&self) -> crate::labeler::Structure {
        crate::labeler::Structure {
            roles: self.with_role > 0,
            tools: self.with_tools > 0,
            fields: self.with_fields > 0,
        }
    }

    /// The propositions of `specs` that can never hold on this trace, with why: their labeling
    /// rule reads structure (roles, tools, arguments, fields) that no step had
    /// ([`crate::labeler::never_holds`]), and the trace gives no labels (none held with their
    /// name) and no LLM labels anything (`model` false). In declaration order.
    /// O(propositions × rule size).
    pub fn never_hold(&self, specs: &[CheckedSpec], model: bool) -> Vec<(String, String)> {
        if model || self.with_labels > 0 {
            return Vec::new();
        }
        let has = self.structure();
        let mut out: Vec<(String, String)> = Vec::new();
        for d in specs.iter().flat_map(|c| c.spec.propositions.iter()) {
            if out.iter().any(|(n, _)| *n == d.name) {
                continue;
            }
            if let Some(why) = d
                .rule
                .as_ref()
                .and_then(|r| crate::labeler::never_holds(r, has))
            {
                out.push((d.name.clone(), why));
            }
        }
        out
    }

    /// The properties of `specs` none of whose atoms can hold on this trace: each atom is a
    /// proposition of [`Coverage::never_hold`] (a property with an atom of no spec, or a derived
    /// atom, is kept). `(property id, its propositions)`, in order. Such a property would pass
    /// every `G !p` rule vacuously: it was not audited.
    pub fn unaudited_properties(
        &self,
        specs: &[CheckedSpec],
        model: bool,
    ) -> Vec<(String, Vec<String>)> {
        let never = self.never_hold(specs, model);
        if never.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for p in specs.iter().flat_map(|c| c.properties.iter()) {
            let mut props: Vec<String> = Vec::new();
            let mut all = true;
            for s in p.arena.atoms(p.formula) {
                let name = p.arena.sym_name(s);
                let base = trac_spec::formula::split_atom_name(name).map_or(name, |(b, _)| b);
                if never.iter().any(|(n, _)| n == base) {
                    if !props.iter().any(|x| x == base) {
                        props.push(base.to_string());
                    }
                } else {
                    all = false;
                }
            }
            if all && !props.is_empty() {
                out.push((p.decl.id.clone(), props));
            }
        }
        out
    }

    /// The atoms of `spec`'s properties that never held: `(property id, atom name)`, in property
    /// order, each atom once per property. An atom of a `--formula` that no step labeled is often
    /// a typo.
    pub fn never_labeled(&self, spec: &CheckedSpec) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for p in &spec.properties {
            for s in p.arena.atoms(p.formula) {
                let name = p.arena.sym_name(s);
                if !self.ever_labeled(name, p.var.as_deref()) {
                    let pair = (p.decl.id.clone(), name.to_string());
                    if !out.contains(&pair) {
                        out.push(pair);
                    }
                }
            }
        }
        out
    }
}

#[derive(Clone)]
enum Runner {
    Plain(EngineMonitor),
    Param(ParametricMonitor<EngineMonitor>),
}

/// The violations of one property counted so far: in total and per value. O(values) memory,
/// not O(violations): a long trace with a violation at every step keeps counts, not a list.
#[derive(Clone, Default)]
struct Violations {
    total: usize,
    /// Those of no value: every value not seen yet, or the property itself when it is not
    /// parametric.
    unseen: usize,
    by_value: rustc_hash::FxHashMap<String, usize>,
    /// A parametric property's template violations (no value) by step, not yet moved to a
    /// value that inherits them (see [`Violations::inherit`]); empty for other properties.
    unclaimed: rustc_hash::FxHashMap<usize, usize>,
}

impl Violations {
    /// A violation of `value` at `step`; `template`: of a parametric property's template
    /// (every value not seen yet), which a value that inherits it may claim.
    fn push(&mut self, step: usize, value: Option<String>, template: bool) {
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
struct Prop {
    /// Shared by every auditor of an [`AuditPlan`].
    info: Arc<PropertyInfo>,
    semantics: Semantics,
    runner: Runner,
    violations: Violations,
    /// Decided before the first step and free of past-time operators: every restart would be
    /// decided the same way, so the step-0 verdict is the only one reported.
    frozen: bool,
    /// A compiled, non-parametric property of at most 64 propositions: per proposition of its
    /// table, the id of its label in the auditor's [`Interned`] map (the valuation path).
    ids: Option<Arc<[u32]>>,
}

/// The labels the compiled, non-parametric monitors read, interned once per [`AuditPlan`]:
/// label → id (FxHash; the map is never grown by the trace, so chosen labels cannot make it
/// degrade beyond its fixed probe lengths).
type Interned = FxHashMap<Box<str>, u32>;

/// The streaming audit of one trace against a set of checked specs.
///
/// Cloning an auditor copies every monitor's state (tables, labeling rules and property facts
/// are shared behind `Arc`s): a supervisor clones it to try candidate actions and sampled
/// continuations without committing them, and [`AuditPlan::auditor`] clones a fresh one per
/// session.
///
/// The auditor keeps no per-step history: its labeling rules read one event at a time (the
/// LLM labeler's context window is kept by `trac-llm`'s pipeline, from the events it reads).
pub struct Auditor {
    props: Vec<Prop>,
    /// The specs' labeling rules, compiled once per [`AuditPlan`].
    labelers: Arc<[RuleLabeler]>,
    steps: usize,
    /// Some spec has labeling rules that read the events' text.
    text_rules: bool,
    coverage: Coverage,
    /// Derived atoms of the properties (patterns, `exists` quantifiers), computed per step.
    derived: DerivedAtoms,
    /// Interned labels of the properties with `ids` (shared by every auditor of a plan).
    interned: Arc<Interned>,
    /// The step's valuation over `interned`'s ids (scratch, reused at every step).
    valuation: Vec<u64>,
    /// The interned labels seen so far (bits over `interned`'s ids; the coverage has them).
    seen_ids: Vec<u64>,
    /// Verdict records carry witnesses and past-time citations ([`AuditPlan::set_witnesses`]).
    witnesses: bool,
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
    /// are reused: [`AuditPlan::reset`] recycles a finished session's auditor this way.
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

/// Everything an audit builds once per set of specs and options: the validated properties, their
/// compiled monitors (tables behind `Arc`s), the labeling rules' regexes. [`AuditPlan::auditor`]
/// instantiates a fresh [`Auditor`] from it in O(properties) without compiling anything, so a
/// trace file of many sessions costs what its events cost, not one compilation per session.
#[derive(Clone)]
pub struct AuditPlan {
    proto: Auditor,
}

impl AuditPlan {
    /// Validates and compiles every property of `specs` and their labeling rules.
    ///
    /// # Errors
    /// As [`Auditor::new`].
    pub fn new(specs: &[CheckedSpec], opts: &AuditOptions) -> Result<AuditPlan, AuditError> {
        Ok(AuditPlan {
            proto: Auditor::build(specs, opts)?,
        })
    }

    /// A fresh auditor (no step read), sharing the plan's tables, rules and property facts.
    /// O(properties): the monitors' initial states are copied.
    pub fn auditor(&self) -> Auditor {
        self.proto.clone()
    }

    /// Makes `auditor` (of this plan, e.g. one whose trace ended) fresh again, as
    /// [`AuditPlan::auditor`] would give it, reusing its allocations: for audits of many short
    /// traces (sessions), one allocation less per trace.
    pub fn reset(&self, auditor: &mut Auditor) {
        auditor.clone_from(&self.proto);
    }

    /// The audited properties, in spec order.
    pub fn properties(&self) -> Vec<PropertyInfo> {
        self.proto.properties()
    }

    /// Whether the auditors of this plan record witnesses (default `true`). Off, every verdict
    /// record is the same but for an empty `witness` and `past` and no `restarted_with` (the
    /// residual a restart left, which explains a witness), and
    /// the compiled monitors skip recording witness entries at every state change (most of a
    /// step's cost on traces whose properties change state often): for reports that print
    /// counts and steps only (`trac audit --summary`).
    pub fn set_witnesses(&mut self, on: bool) {
        self.proto.witnesses = on;
        for p in &mut self.proto.props {
            match &mut p.runner {
                Runner::Plain(m) => m.set_witnesses(on),
                Runner::Param(pm) => pm.for_each_monitor_mut(|m| m.set_witnesses(on)),
            }
        }
    }
}

impl Auditor {
    /// An auditor for every property of `specs`. To audit many traces (sessions) with the same
    /// specs, build an [`AuditPlan`] once and call [`AuditPlan::auditor`] per trace.
    ///
    /// # Errors
    /// A property whose past-time operator contains a future-time one, a duplicate property id
    /// across specs, or a labeling rule that cannot be built.
    pub fn new(specs: &[CheckedSpec], opts: &AuditOptions) -> Result<Auditor, AuditError> {
        Auditor::build(specs, opts)
    }

    fn build(specs: &[CheckedSpec], opts: &AuditOptions) -> Result<Auditor, AuditError> {
        let mut props = Vec::new();
        let mut labelers = Vec::new();
        let mut ids = std::collections::HashSet::new();
        for spec in specs {
            let descriptions = spec.descriptions();
            labelers
                .push(RuleLabeler::new(&spec.spec).map_err(|e| AuditError::Spec(e.to_string()))?);
            for p in &spec.properties {
                if !ids.insert(p.decl.id.clone()) {
                    return Err(AuditError::Spec(format!(
                        "duplicate property id `{}` across specs",
                        p.decl.id
                    )));
                }
                trac_spec::progress::validate(&p.arena, p.formula)
                    .map_err(|e| AuditError::Spec(format!("property {}: {e}", p.decl.id)))?;
                let policy = ResetPolicy {
                    on_violation: opts.reset,
                    on_satisfaction: opts.reset && p.decl.reset_on_satisfaction,
                };
                let printed = trac_spec::print(&p.arena, p.formula);
                let formula = match &p.var {
                    Some(v) => format!("forall {v}: {printed}"),
                    None => printed,
                };
                let english = trac_spec::english::render(&p.arena, p.formula, &descriptions);
                let english = match &p.var {
                    Some(v) => format!("for every {v}, {english}"),
                    None => english,
                };
                let monitor = match &p.var {
                    Some(v) => EngineMonitor::new_parametric(
                        opts.engine,
                        &p.arena,
                        p.formula,
                        v,
                        policy,
                        p.decl.semantics,
                        opts.compiler.as_deref(),
                    ),
                    None => EngineMonitor::new(
                        opts.engine,
                        &p.arena,
                        p.formula,
                        policy,
                        p.decl.semantics,
                        opts.compiler.as_deref(),
                    ),
                }
                .map_err(|e| AuditError::Spec(format!("property {}: {e}", p.decl.id)))?;
                let runner = match &p.var {
                    Some(v) => Runner::Param(ParametricMonitor::with_template(
                        &p.arena, p.formula, v, monitor,
                    )),
                    None => Runner::Plain(monitor),
                };
                props.push(Prop {
                    info: Arc::new(PropertyInfo {
                        id: p.decl.id.clone(),
                        description: p.decl.description.clone(),
                        formula,
                        english,
                        semantics: match p.decl.semantics {
                            Semantics::Ltl3 => "ltl3",
                            Semantics::Ltlf => "ltlf",
                        },
                    }),
                    semantics: p.decl.semantics,
                    frozen: !p.arena.info(p.formula).has_past
                        && match &runner {
                            Runner::Plain(m) => m.initial().is_some(),
                            Runner::Param(m) => m.initial().is_some(),
                        },
                    runner,
                    violations: Violations::default(),
                    ids: None,
                });
            }
        }
        let derived = DerivedAtoms::new(specs.iter().flat_map(|s| {
            s.properties
                .iter()
                .map(|p| (&p.arena, p.formula, p.var.as_deref()))
        }))
        .map_err(AuditError::Spec)?;
        // The valuation path: each label read by a compiled monitor gets an id once, and each
        // step is looked up once per label of the step instead of once per proposition per
        // property (`TableMonitor::step_valuation`).
        let mut interned = Interned::default();
        for p in &mut props {
            let Runner::Plain(EngineMonitor::Table(m)) = &p.runner else {
                continue;
            };
            if m.labels().len() > 64 {
                continue;
            }
            let ids: Arc<[u32]> = m
                .labels()
                .iter()
                .map(|l| {
                    let next = interned.len() as u32;
                    *interned.entry(l.as_str().into()).or_insert(next)
                })
                .collect();
            p.ids = Some(ids);
        }
        let valuation = vec![0; interned.len().div_ceil(64)];
        Ok(Auditor {
            interned: Arc::new(interned),
            seen_ids: valuation.clone(),
            valuation,
            derived,
            props,
            text_rules: labelers.iter().any(|l| !l.is_empty()),
            labelers: labelers.into(),
            steps: 0,
            coverage: Coverage::default(),
            witnesses: true,
        })
    }

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
        for r in out.iter_mut().filter(|r| r.step == self.steps) {
            r.log_step = event.declared_step;
            r.timestamp.clone_from(&event.timestamp);
        }
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
        timestamp: None,
    }
}

/// Everything an audit of one trace found.
#[derive(Clone, Debug, Serialize)]
pub struct TraceReport {
    /// The trace's name (its path as given).
    pub trace: String,
    /// Steps read.
    pub steps: usize,
    /// The audited properties.
    pub properties: Vec<PropertyInfo>,
    /// Every verdict reached, in step order (step 0 first).
    pub records: Vec<VerdictRecord>,
    /// Every property's state at the end of the trace.
    pub ends: Vec<PropertyEnd>,
    /// The trace error that stopped the audit early, if any.
    #[serde(skip)]
    pub error: Option<TraceError>,
    /// What the audit could read of the trace.
    pub coverage: Coverage,
}

/// One property's part of a [`TraceReport`].
#[derive(Clone, Debug)]
pub struct PropertyReport<'a> {
    /// Static facts.
    pub info: &'a PropertyInfo,
    /// The property's verdicts, in step order.
    pub records: Vec<&'a VerdictRecord>,
    /// Its end-of-trace state.
    pub end: &'a PropertyEnd,
}

impl PropertyReport<'_> {
    /// Sorted, deduplicated 1-based steps with a violation (0 if decided before the first step).
    pub fn violation_steps(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .records
            .iter()
            .filter(|r| r.verdict == Verdict::Violated)
            .map(|r| r.step)
            .collect();
        v.dedup();
        v
    }

    /// `(step, value)` of every violation, sorted.
    pub fn violations_by_value(&self) -> Vec<(usize, Option<String>)> {
        let mut v: Vec<(usize, Option<String>)> = self
            .records
            .iter()
            .filter(|r| r.verdict == Verdict::Violated)
            .map(|r| (r.step, r.value.clone()))
            .collect();
        v.sort();
        v
    }
}

impl TraceReport {
    /// The part of the report about property `id`.
    ///
    /// # Panics
    /// If no audited property has that id (a programming error in the caller).
    pub fn property(&self, id: &str) -> PropertyReport<'_> {
        self.try_property(id)
            .unwrap_or_else(|| panic!("no property `{id}` in this audit"))
    }

    /// The part of the report about property `id`, if it exists.
    pub fn try_property(&self, id: &str) -> Option<PropertyReport<'_>> {
        let info = self.properties.iter().find(|p| p.id == id)?;
        let end = self.ends.iter().find(|e| e.property == id)?;
        Some(PropertyReport {
            info,
            records: self.records.iter().filter(|r| r.property == id).collect(),
            end,
        })
    }

    /// Total number of violations over all properties.
    pub fn violation_count(&self) -> usize {
        self.ends.iter().map(|e| e.violations).sum()
    }
}

/// Audits a stream of events (stops at the first trace error, keeping what was computed).
pub fn audit_events(
    specs: &[CheckedSpec],
    name: &str,
    events: impl IntoIterator<Item = Result<Event, TraceError>>,
    opts: &AuditOptions,
) -> Result<TraceReport, AuditError> {
    let mut auditor = Auditor::new(specs, opts)?;
    let mut records = auditor.initial();
    let mut error = None;
    for ev in events {
        match ev {
            Ok(ev) => records.extend(auditor.step(&ev)),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    if error.is_none() {
        records.extend(auditor.end_of_trace());
    }
    Ok(TraceReport {
        trace: name.to_string(),
        steps: auditor.steps(),
        properties: auditor.properties(),
        records,
        ends: auditor.finish(),
        error,
        coverage: auditor.coverage().clone(),
    })
}

/// Audits the trace file at `path` (JSON Lines or plain-text log, detected by [`trace::open`]).
///
/// # Errors
/// The file cannot be opened or read, or the specs cannot be monitored. A malformed line is not an
/// error here: it ends the audit and is returned in [`TraceReport::error`].
pub fn audit_path(
    spec: &CheckedSpec,
    path: &Path,
    opts: &AuditOptions,
) -> Result<TraceReport, AuditError> {
    let reader = trace::open(path)?;
    audit_events(
        std::slice::from_ref(spec),
        &path.display().to_string(),
        reader,
        opts,
    )
}
