//! Support for monitors generated at compile time by `trac_monitor!` (crate `trac-macros`) and
//! `cargo xtask codegen`, and for parametric properties run on compiled [`Table`]s.
//!
//! Generated code names only this module (and [`crate::table`], [`crate::monitor`]), so a crate
//! using generated monitors needs `trac-core` and nothing else at run time:
//! - [`StaticTable`] / [`StaticTableMonitor`]: a [`Table`] in `static` arrays and its monitor.
//! - [`Values`]: the values for which a parametric proposition (`take(item)`) holds at one step,
//!   the field type of such a proposition in a generated valuation.
//! - [`ParamTableMonitor`]: a `forall x: φ` property run on ONE compiled table of `φ` (trace
//!   slicing, as `trac_runtime::engine::parametric::ParametricMonitor` does with progression): `φ[x:=v]` read
//!   on a trace is `φ` read on the trace with `p(v)` renamed `p(x)`, so every instance shares the
//!   table and holds only its own state.

use crate::labels::{LabelSet, StepInput};
use crate::monitor::{Monitor, ResetPolicy, Verdict};
use crate::parametric::{conjunction, new_values, parametric_bases};
use crate::table::{Table, TableMonitor};
use std::collections::HashMap;
use std::sync::Arc;

pub use crate::monitor::Semantics;

/// A compiled table whose arrays are `static` (generated code).
pub type StaticTable = Table<&'static [u32], &'static str>;

/// A table monitor running a [`StaticTable`].
pub type StaticTableMonitor = TableMonitor<&'static [u32], &'static str>;

/// A monitor of a `static` table under `policy`. Allocates once (the shared handle and the label
/// names); stepping it with [`TableMonitor::step_bits`] never allocates.
pub fn static_monitor(table: &'static StaticTable, policy: ResetPolicy) -> StaticTableMonitor {
    TableMonitor::new(Arc::new(table.clone()), policy)
}

/// The fused step of one property of a generated monitor: a `static` array computed at compile
/// time by [`Table::fused_packed`] and the monitor's position in it, stepped with one add and one
/// load per event (as [`crate::table::FusedMonitor`]), the [`StaticTableMonitor`] beside it
/// kept in the same state off that chain ([`TableMonitor::apply_fused_entry`]), so that its
/// verdicts, residuals and `Monitor` methods stay right.
///
/// After the table monitor was stepped or reset another way ([`Monitor::step`] with labels,
/// [`Monitor::reset`]), [`StaticFused::sync`] puts the position back in line with it.
#[derive(Clone, Copy)]
pub struct StaticFused {
    steps: &'static [u64],
    /// `(state · aux_states + aux) << props`.
    at: u32,
    props: u32,
    aux_states: u32,
}

impl std::fmt::Debug for StaticFused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticFused")
            .field("entries", &self.steps.len())
            .field("at", &self.at)
            .finish()
    }
}

impl StaticFused {
    /// The fused step `steps` (from [`Table::fused_packed`] of a table under a policy, with its
    /// `props` and `aux_states`), positioned at main state `state` and auxiliary state `aux`
    /// (the table's initial ones for a new monitor).
    pub const fn new(
        steps: &'static [u64],
        props: u32,
        aux_states: u32,
        state: u32,
        aux: u32,
    ) -> Self {
        StaticFused {
            steps,
            at: (state * aux_states + aux) << props,
            props,
            aux_states,
        }
    }

    /// Puts the position in line with `monitor`'s main and auxiliary states.
    pub fn sync<S: AsRef<[u32]>, T: AsRef<str>>(&mut self, monitor: &TableMonitor<S, T>) {
        self.at = (monitor.state() * self.aux_states + monitor.aux()) << self.props;
    }

    /// Reads one step: `v` is the valuation of the table's propositions as bits (bits from
    /// `props` on are ignored). Steps `monitor` to the same state; returns the verdict reported,
    /// as [`TableMonitor::step_bits`] would. No allocation.
    #[inline(always)]
    pub fn step<S: AsRef<[u32]>, T: AsRef<str>>(
        &mut self,
        v: u64,
        monitor: &mut TableMonitor<S, T>,
    ) -> Option<Verdict> {
        let i = self.at as usize + (v & ((1 << self.props) - 1)) as usize;
        // Out of range only for arrays not made by `Table::fused_packed`: the monitor then
        // stays where it is (no panic).
        let &e = self.steps.get(i)?;
        self.at = e as u32;
        monitor.apply_fused_entry((e >> 32) as u32)
    }
}

/// The verdict summing up several reached at one step: ⊥ if one is ⊥, else ⊤ if one is ⊤,
/// `None` if there is none.
pub fn combine(verdicts: impl IntoIterator<Item = Verdict>) -> Option<Verdict> {
    let mut out = None;
    for v in verdicts {
        match v {
            Verdict::Violated => return Some(Verdict::Violated),
            Verdict::Satisfied => out = Some(Verdict::Satisfied),
            Verdict::Pending => {}
        }
    }
    out
}

/// The values `v` for which a parametric proposition `p(v)` holds at one step.
///
/// Either a list given by the caller (`Values::list(&["knife"])`) or read from a [`LabelSet`]
/// (the labels `p(v)` with the proposition's base name `p`). No allocation either way.
#[derive(Clone, Copy, Debug, Default)]
pub enum Values<'a> {
    /// No value: the proposition holds for none.
    #[default]
    None,
    /// The proposition holds exactly for these values.
    List(&'a [&'a str]),
    /// The proposition `base` holds for `v` iff the label `base(v)` is in `labels`.
    Labels {
        /// The step's labels.
        labels: &'a LabelSet,
        /// The proposition's base name (`take` for labels `take(v)`).
        base: &'a str,
    },
}

impl<'a> Values<'a> {
    /// The proposition holds exactly for `values`.
    pub const fn list(values: &'a [&'a str]) -> Values<'a> {
        Values::List(values)
    }

    /// The values `v` of the labels `base(v)` of `labels`.
    pub const fn from_labels(labels: &'a LabelSet, base: &'a str) -> Values<'a> {
        Values::Labels { labels, base }
    }

    /// Whether the proposition holds for `value`. O(number of values, or of labels).
    pub fn contains(&self, value: &str) -> bool {
        match *self {
            Values::None => false,
            Values::List(l) => l.contains(&value),
            Values::Labels { labels, base } => {
                labels.iter().any(|l| arg_of(l, base) == Some(value))
            }
        }
    }

    /// Calls `f` with every value (in no particular order; a value may come more than once).
    pub fn for_each(&self, mut f: impl FnMut(&'a str)) {
        match *self {
            Values::None => {}
            Values::List(l) => l.iter().for_each(|v| f(v)),
            Values::Labels { labels, base } => {
                for l in labels.iter() {
                    if let Some(v) = arg_of(l, base) {
                        f(v);
                    }
                }
            }
        }
    }

    /// Whether the proposition holds for no value.
    pub fn is_empty(&self) -> bool {
        let mut empty = true;
        self.for_each(|_| empty = false);
        empty
    }
}

/// `v` if `label` is `base(v)`.
fn arg_of<'l>(label: &'l str, base: &str) -> Option<&'l str> {
    label
        .strip_prefix(base)?
        .strip_prefix('(')?
        .strip_suffix(')')
        .filter(|v| !v.contains(['(', ')']))
}

/// One instance of a [`ParamTableMonitor`]: a parameter value and its monitor.
#[derive(Clone, Debug)]
pub struct Instance<S = Vec<u32>, T = String> {
    value: String,
    monitor: TableMonitor<S, T>,
    event: Option<Verdict>,
    /// Index of its special table, for a value written in the formula.
    special: Option<usize>,
}

impl<S, T> Instance<S, T> {
    /// The parameter value.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The instance's monitor (its propositions renamed for the value, so [`Monitor::step`]
    /// reads the labels `p(value)`).
    pub fn monitor(&self) -> &TableMonitor<S, T> {
        &self.monitor
    }

    /// The verdict this instance reached at the last step, if any.
    pub fn event(&self) -> Option<Verdict> {
        self.event
    }

    /// The index of the special table this instance runs (see
    /// [`ParamTableMonitor::with_specials`]), `None` if it runs the template's table.
    pub fn special(&self) -> Option<usize> {
        self.special
    }
}

/// The values `c` written in the formula as arguments of its parametric propositions
/// (`go_to(hallway)` beside `go_to(room)` in `forall room: ...`; position by position for
/// several parameters: `a1` in `load(p, a1)` is not beside `p`), sorted: their instances need
/// tables of their own (see [`ParamTableMonitor::with_specials`]).
pub fn special_values<'a>(prop_names: impl IntoIterator<Item = &'a str>, var: &str) -> Vec<String> {
    crate::parametric::Slicing::new(prop_names, var).constants_beside(0)
}

/// A monitor for `forall var: φ` running one compiled table of `φ`: a template instance for the
/// values not seen yet, and one instance per value seen, created as a copy of the template's
/// state when the value first appears in a label `p(value)` of a parametric proposition `p(var)`
/// of `φ` (Chen & Roşu's trace slicing, as `trac_runtime::engine::parametric::ParametricMonitor`).
///
/// # Values written in the formula
/// For a value `v` not written in `φ`, `φ[var:=v]` on a trace is `φ` on the trace renamed, with
/// the same complete verdicts: the renamed propositions are distinct. A value `c` written in the
/// formula (`forall room: G(go_to(room) -> go_to(hallway) | ..)` and `c = hallway`) merges two
/// propositions, so the template's table would stay sound but not complete (`φ[room:=hallway]`
/// is `G true`, which the template's table never reports). Such values get tables of their own,
/// compiled from `φ[var:=c]` ([`ParamTableMonitor::with_specials`]): their monitors run from the
/// first step, silently until `c` appears; if that monitor has reached a verdict by then, the
/// verdict is reported at the step where `c` appears (where a progression instance created
/// from the template would reach it).
///
/// Memory: one [`TableMonitor`] state per value seen (and per special value); a step allocates
/// only when new values appear ([`ParamTableMonitor::step_with`]), or for witnesses
/// ([`ParamTableMonitor::step`]).
#[derive(Clone, Debug)]
pub struct ParamTableMonitor<S = Vec<u32>, T = String> {
    var: String,
    bases: Vec<String>,
    template: TableMonitor<S, T>,
    instances: Vec<Instance<S, T>>,
    index: HashMap<String, usize>,
    fresh: Vec<String>,
    /// The verdict of the whole property reached at the last step.
    reached: Option<Verdict>,
    /// The verdict the template (every value not seen yet) reached at the last step.
    template_event: Option<Verdict>,
}

impl<S: AsRef<[u32]> + Clone, T: AsRef<str> + Clone> ParamTableMonitor<S, T> {
    /// A monitor for `forall var: φ` where `table` is the compiled table of `φ` (its
    /// propositions `p(var)` are the parametric ones), without special tables: complete only
    /// when [`special_values`] of the table is empty.
    pub fn new(table: Arc<Table<S, T>>, var: &str, policy: ResetPolicy) -> Self {
        ParamTableMonitor::with_specials(table, var, policy, Vec::new())
    }

    /// A monitor for `forall var: φ` with the tables of `φ[var:=c]` for the values `c` written in
    /// the formula (`specials`: `(c, table)`, normally for every value of [`special_values`]).
    pub fn with_specials(
        table: Arc<Table<S, T>>,
        var: &str,
        policy: ResetPolicy,
        specials: Vec<(String, Arc<Table<S, T>>)>,
    ) -> Self {
        let bases = parametric_bases(table.prop_names(), var);
        // The special tables are the template's shadows (see `TableMonitor::with_shadows`):
        // they run from the first step, and `TableMonitor::instantiate` makes the instance of
        // a special value from its shadow, reporting a verdict it reached before.
        let shadows = specials
            .into_iter()
            .map(|(value, t)| (value, TableMonitor::new(t, policy)))
            .collect();
        ParamTableMonitor {
            var: var.to_string(),
            bases,
            template: TableMonitor::new(table, policy).with_shadows(shadows),
            instances: Vec::new(),
            index: HashMap::new(),
            fresh: Vec::new(),
            reached: None,
            template_event: None,
        }
    }

    /// The quantified variable.
    pub fn var(&self) -> &str {
        &self.var
    }

    /// The base names of the parametric propositions (`take` for `take(var)`), sorted.
    pub fn bases(&self) -> &[String] {
        &self.bases
    }

    /// The monitor standing for every value not seen yet.
    pub fn template(&self) -> &TableMonitor<S, T> {
        &self.template
    }

    /// The instances, in the order their values first appeared.
    pub fn instances(&self) -> &[Instance<S, T>] {
        &self.instances
    }

    /// The instance of `value`, if that value was seen.
    pub fn instance(&self, value: &str) -> Option<&Instance<S, T>> {
        self.index.get(value).map(|&i| &self.instances[i])
    }

    /// The verdict decided before the first step (the template's), if any.
    pub fn initial(&self) -> Option<Verdict> {
        self.template.initial()
    }

    /// The verdicts reached at the last step, with their values, in instance order.
    pub fn events(&self) -> impl Iterator<Item = (&str, Verdict)> {
        self.instances
            .iter()
            .filter_map(|i| i.event.map(|v| (i.value.as_str(), v)))
    }

    /// The current verdict of `forall var: φ`, as the audit reports it at the end of a trace:
    /// the conjunction over every value, seen or not, i.e. over the instances, the template
    /// (every value not seen yet) and the special monitors of values not seen yet: ⊥ if one is
    /// violated, ⊤ if all are satisfied, ? otherwise. A ⊤ is never taken back (LTL3).
    pub fn verdict(&self) -> Verdict {
        let index = &self.index;
        conjunction(
            std::iter::once(self.template.unseen_verdict(&|v| index.contains_key(v)))
                .chain(self.instances.iter().map(|i| i.monitor.verdict())),
        )
    }

    /// The finite-trace (LTLf) verdict of `forall var: φ`: ⊥ if that of an instance, of the
    /// template or of a special monitor of a value not seen yet is, ⊤ otherwise.
    pub fn ltlf(&self) -> Verdict {
        let index = &self.index;
        conjunction(
            std::iter::once(self.template.unseen_ltlf(&|v| index.contains_key(v)))
                .chain(self.instances.iter().map(|i| i.monitor.ltlf())),
        )
    }

    /// The verdict the template (standing for every value not seen yet) reached at the last
    /// step, if any: a ⊥ is a violation of every value not seen yet (counted once, with no
    /// value; a value appearing later starts from the template's state after it).
    pub fn template_event(&self) -> Option<Verdict> {
        self.template_event
    }

    /// The verdict of the whole property reached at the last step: ⊥ if an instance or the
    /// template (every value not seen yet) was violated at that step, else ⊤ if the property became satisfied for every value, seen or
    /// not, at that step ([`ParamTableMonitor::verdict`]), else `None`. A value satisfied alone
    /// is not the property satisfied: see [`ParamTableMonitor::events`] for the values.
    pub fn reached(&self) -> Option<Verdict> {
        self.reached
    }

    fn summarize(&mut self, before: Verdict) {
        let whole = self.verdict();
        self.reached = if self.template_event == Some(Verdict::Violated)
            || self
                .instances
                .iter()
                .any(|i| i.event == Some(Verdict::Violated))
        {
            Some(Verdict::Violated)
        } else if whole == Verdict::Satisfied && before != Verdict::Satisfied {
            Some(Verdict::Satisfied)
        } else {
            None
        };
    }

    fn create_fresh(&mut self) {
        if self.fresh.is_empty() {
            return;
        }
        self.fresh.sort();
        self.fresh.dedup();
        for v in std::mem::take(&mut self.fresh) {
            let instance = Instance {
                monitor: self.template.instantiate(&self.var, &v),
                special: self.template.shadow_index(&v),
                value: v,
                event: None,
            };
            self.index
                .insert(instance.value.clone(), self.instances.len());
            self.instances.push(instance);
        }
    }

    /// Reads one step from a label set, with witnesses ([`Monitor::step`] on every instance);
    /// returns the verdicts reached, with their values, in instance order (as
    /// `trac_runtime::engine::parametric::ParametricMonitor::step`); [`ParamTableMonitor::reached`] then
    /// tells the verdict of the whole property reached at this step.
    pub fn step(&mut self, input: &StepInput<'_>) -> Vec<(String, Verdict)> {
        let whole_before = self.verdict();
        let index = &self.index;
        new_values(
            input.labels,
            &self.bases,
            |v| index.contains_key(v),
            &mut self.fresh,
        );
        self.create_fresh();
        // Steps the shadows too.
        self.template_event = self.template.step(input);
        let mut out = Vec::new();
        for i in &mut self.instances {
            i.event = i.monitor.step(input);
            if let Some(v) = i.event {
                out.push((i.value.clone(), v));
            }
        }
        self.summarize(whole_before);
        out
    }

    /// Reads one step from a typed valuation (generated code): `values` calls its argument with
    /// every value of the step's parametric propositions; `bits(value)` is the valuation of the
    /// template table's propositions for the instance of `value` (the template reads
    /// `bits(var)`), and `special_bits(k)` that of the propositions of special table `k`, as for
    /// [`TableMonitor::step_bits`]. Returns the verdict of the whole property reached at this
    /// step ([`ParamTableMonitor::reached`]: ⊥ if an instance was violated, ⊤ if the property
    /// became satisfied for every value, seen or not); [`ParamTableMonitor::events`] tells the
    /// values. Allocates only for values not seen before; records no witness.
    pub fn step_with<B: AsRef<[u64]>>(
        &mut self,
        values: impl FnOnce(&mut dyn FnMut(&str)),
        bits: impl Fn(&str) -> B,
        special_bits: impl Fn(usize) -> B,
    ) -> Option<Verdict> {
        let whole_before = self.verdict();
        let (index, fresh) = (&self.index, &mut self.fresh);
        values(&mut |v: &str| {
            if !index.contains_key(v) && !fresh.iter().any(|f| f == v) {
                fresh.push(v.to_string());
            }
        });
        self.create_fresh();
        self.template_event = self.template.step_bits(bits(&self.var).as_ref());
        self.template.step_shadows_bits(&special_bits);
        for i in &mut self.instances {
            i.event = match i.special {
                None => i.monitor.step_bits(bits(&i.value).as_ref()),
                Some(k) => i.monitor.step_bits(special_bits(k).as_ref()),
            };
        }
        self.summarize(whole_before);
        self.reached
    }

    /// Back to the state before the first step, forgetting every instance.
    pub fn reset(&mut self) {
        self.template.reset();
        self.instances.clear();
        self.index.clear();
        self.fresh.clear();
        self.reached = None;
        self.template_event = None;
    }
}

/// One monitor of a [`ParamTupleMonitor`]: a partial value tuple and its monitor.
#[derive(Clone, Debug)]
struct TupleNode<S, T> {
    /// Per variable, its value, or `None`: every value of it not seen yet.
    key: Vec<Option<String>>,
    /// The key as reports show it: the values joined by `, ` (`*` for none).
    value: String,
    monitor: TableMonitor<S, T>,
    event: Option<Verdict>,
}

/// A monitor for `forall x1, ..., xn: φ` (several variables) running one compiled table of `φ`,
/// sliced per value tuple as `trac_runtime::engine::parametric::ParametricMonitor` does
/// (Chen & Roşu's trace slicing): monitors keyed by *partial* tuples, each place a value seen
/// or `None` (every value of that variable not seen yet); the template is `(None, ..., None)`.
/// When a value `v` first appears for `xk`, every monitor whose key has `None` at `k` gets a
/// copy with `xk := v` (its state before this step), variables in order, values sorted: the
/// keys are the cross product of the values seen per variable, with `None`. A key's atoms
/// that mention a variable without a value are false, and so is a comparison with such a
/// variable (also `x = y` with neither seen, as the runtime's template reads it).
///
/// The caller gives the valuation of the table's propositions per key
/// ([`ParamTupleMonitor::step_with`]); [`ParamTupleMonitor::step`] computes it from labels.
/// As with [`ParamTableMonitor`]'s template, a verdict of a partial tuple is reached with no
/// value ([`ParamTupleMonitor::template_event`]) and is not reported again for the full tuples
/// made from it later (the audit also reports those, as inherited, with their values).
/// Values written in the formula (constants beside a variable) are not handled here: the
/// code generator refuses such properties. Memory: one [`TableMonitor`] state per key, i.e.
/// Π (values seen of `xk` + 1); no witness is recorded.
#[derive(Clone, Debug)]
pub struct ParamTupleMonitor<S = Vec<u32>, T = String> {
    vars: Vec<String>,
    /// Per variable, the base names of the one-argument propositions `p(xk)`, sorted.
    bases: Vec<Vec<String>>,
    /// `nodes[0]` is the template; the others in the order they were made.
    nodes: Vec<TupleNode<S, T>>,
    /// Per variable, the values seen.
    seen: Vec<std::collections::HashSet<String>>,
    /// Per variable, the values first seen at the current step.
    fresh: Vec<Vec<String>>,
    reached: Option<Verdict>,
    template_event: Option<Verdict>,
}

impl<S: AsRef<[u32]> + Clone, T: AsRef<str> + Clone> ParamTupleMonitor<S, T> {
    /// A monitor for `forall vars: φ` where `table` is the compiled table of `φ` and `vars`
    /// the quantified variables in the order of the `forall`.
    pub fn new(table: Arc<Table<S, T>>, vars: &[&str], policy: ResetPolicy) -> Self {
        let bases = vars
            .iter()
            .map(|v| parametric_bases(table.prop_names(), v))
            .collect();
        let n = vars.len();
        ParamTupleMonitor {
            vars: vars.iter().map(|v| v.to_string()).collect(),
            bases,
            nodes: vec![TupleNode {
                key: vec![None; n],
                value: vec!["*"; n].join(", "),
                monitor: TableMonitor::new(table, policy),
                event: None,
            }],
            seen: vec![Default::default(); n],
            fresh: vec![Vec::new(); n],
            reached: None,
            template_event: None,
        }
    }

    /// The quantified variables, in order.
    pub fn vars(&self) -> &[String] {
        &self.vars
    }

    /// Per variable, the base names of its parametric propositions (`send` for `send(to)`).
    pub fn bases(&self) -> &[Vec<String>] {
        &self.bases
    }

    /// The monitor of the tuples of values not seen yet (every variable).
    pub fn template(&self) -> &TableMonitor<S, T> {
        &self.nodes[0].monitor
    }

    /// Every monitor with its key, written `v1, v2` (`*` for a variable without a value), in
    /// the order they were made (the template first).
    pub fn monitors(&self) -> impl Iterator<Item = (&str, &TableMonitor<S, T>)> {
        self.nodes.iter().map(|n| (n.value.as_str(), &n.monitor))
    }

    /// The monitor of a full tuple (`"a, b"`: values joined by `, `), if its values were seen.
    pub fn instance(&self, value: &str) -> Option<&TableMonitor<S, T>> {
        self.nodes
            .iter()
            .find(|n| n.value == value && n.key.iter().all(Option::is_some))
            .map(|n| &n.monitor)
    }

    /// The verdict decided before the first step (the template's), if any.
    pub fn initial(&self) -> Option<Verdict> {
        self.nodes[0].monitor.initial()
    }

    /// The verdicts the full tuples reached at the last step, with their values (`a, b`).
    pub fn events(&self) -> impl Iterator<Item = (&str, Verdict)> {
        self.nodes
            .iter()
            .filter(|n| n.key.iter().all(Option::is_some))
            .filter_map(|n| n.event.map(|v| (n.value.as_str(), v)))
    }

    /// The verdict of `forall vars: φ`: the conjunction over every monitor (full and partial
    /// tuples): ⊥ if one is violated, ⊤ if all are satisfied, ? otherwise.
    pub fn verdict(&self) -> Verdict {
        conjunction(self.nodes.iter().map(|n| n.monitor.verdict()))
    }

    /// The finite-trace (LTLf) verdict: ⊥ if that of a monitor is, ⊤ otherwise.
    pub fn ltlf(&self) -> Verdict {
        conjunction(self.nodes.iter().map(|n| n.monitor.ltlf()))
    }

    /// The verdict a monitor of a partial tuple (values not seen yet) reached at the last
    /// step, ⊥ first, if any.
    pub fn template_event(&self) -> Option<Verdict> {
        self.template_event
    }

    /// The verdict of the whole property reached at the last step: ⊥ if a monitor was
    /// violated at that step, else ⊤ if the property became satisfied for every tuple at that
    /// step, else `None`.
    pub fn reached(&self) -> Option<Verdict> {
        self.reached
    }

    /// Makes the copies for the values first seen at this step (see the type's docs).
    fn create_fresh(&mut self) {
        for k in 0..self.vars.len() {
            let mut fresh = std::mem::take(&mut self.fresh[k]);
            fresh.sort();
            fresh.dedup();
            for v in fresh.drain(..) {
                let parents: Vec<usize> = (0..self.nodes.len())
                    .filter(|&i| self.nodes[i].key[k].is_none())
                    .collect();
                for i in parents {
                    let mut key = self.nodes[i].key.clone();
                    key[k] = Some(v.clone());
                    let value = key
                        .iter()
                        .map(|x| x.as_deref().unwrap_or("*"))
                        .collect::<Vec<_>>()
                        .join(", ");
                    let monitor = self.nodes[i].monitor.clone();
                    self.nodes.push(TupleNode {
                        key,
                        value,
                        monitor,
                        event: None,
                    });
                }
                self.seen[k].insert(v);
            }
            self.fresh[k] = fresh;
        }
    }

    /// Reads one step from a typed valuation (generated code): `values(k, each)` calls `each`
    /// with every value of the step's parametric propositions of variable `k`; `bits(key)` is
    /// the valuation of the table's propositions for a key (per variable, its value or `None`),
    /// as for [`TableMonitor::step_bits`]. Returns [`ParamTupleMonitor::reached`]. Allocates
    /// only for values not seen before (and per step for more than 4 variables).
    pub fn step_with<B: AsRef<[u64]>>(
        &mut self,
        values: impl Fn(usize, &mut dyn FnMut(&str)),
        bits: impl Fn(&[Option<&str>]) -> B,
    ) -> Option<Verdict> {
        let before = self.verdict();
        for k in 0..self.vars.len() {
            let (seen, fresh) = (&self.seen[k], &mut self.fresh[k]);
            values(k, &mut |v: &str| {
                if !seen.contains(v) && !fresh.iter().any(|f| f == v) {
                    fresh.push(v.to_string());
                }
            });
        }
        self.create_fresh();
        // The key as `&str`s: on the stack for up to 4 variables (no allocation per step).
        let n_vars = self.vars.len();
        let mut small: [Option<&str>; 4] = [None; 4];
        let mut big: Vec<Option<&str>> = Vec::new();
        self.template_event = None;
        for n in &mut self.nodes {
            let key: &mut [Option<&str>] = if n_vars <= small.len() {
                &mut small[..n_vars]
            } else {
                big.clear();
                big.resize(n_vars, None);
                &mut big
            };
            for (k, x) in key.iter_mut().zip(&n.key) {
                *k = x.as_deref();
            }
            n.event = n.monitor.step_bits(bits(key).as_ref());
            if n.key.iter().any(Option::is_none)
                && n.event.is_some()
                && self.template_event != Some(Verdict::Violated)
            {
                self.template_event = n.event;
            }
        }
        let whole = self.verdict();
        self.reached = if self
            .nodes
            .iter()
            .any(|n| n.event == Some(Verdict::Violated))
        {
            Some(Verdict::Violated)
        } else if whole == Verdict::Satisfied && before != Verdict::Satisfied {
            Some(Verdict::Satisfied)
        } else {
            None
        };
        self.reached
    }

    /// Reads one step from a label set: the values of variable `k` are the arguments of the
    /// labels `p(v)` of its bases; a key's valuation has `p(x)` true iff `x` has a value `v`
    /// and the label `p(v)` is there, a comparison true iff both sides have values and they
    /// are equal. Returns [`ParamTupleMonitor::reached`]. O(monitors × propositions) name
    /// instantiations per step.
    pub fn step(&mut self, input: &StepInput<'_>) -> Option<Verdict> {
        let labels = input.labels;
        let names: Vec<String> = self.nodes[0]
            .monitor
            .table()
            .prop_names()
            .map(String::from)
            .collect();
        let vars = self.vars.clone();
        let bases = self.bases.clone();
        self.step_with(
            |k, each| {
                for b in &bases[k] {
                    Values::from_labels(labels, b).for_each(&mut *each);
                }
            },
            |key| {
                let mut words = vec![0u64; names.len().div_ceil(64).max(1)];
                for (i, name) in names.iter().enumerate() {
                    if tuple_holds(name, &vars, key, labels) {
                        words[i / 64] |= 1 << (i % 64);
                    }
                }
                words
            },
        )
    }

    /// Back to the state before the first step, forgetting every value.
    pub fn reset(&mut self) {
        self.nodes.truncate(1);
        self.nodes[0].monitor.reset();
        self.nodes[0].event = None;
        self.seen.iter_mut().for_each(|s| s.clear());
        self.fresh.iter_mut().for_each(Vec::clear);
        self.reached = None;
        self.template_event = None;
    }
}

/// Whether the table proposition `name` holds for `key` (per variable of `vars`, its value or
/// `None`) on `labels`: an atom mentioning a variable without a value is false, so is a
/// comparison with such a side.
fn tuple_holds(name: &str, vars: &[String], key: &[Option<&str>], labels: &LabelSet) -> bool {
    let mut name = name.to_string();
    for (var, value) in vars.iter().zip(key) {
        if let Some(value) = value {
            name = crate::names::instantiate_name(&name, var, value);
        }
    }
    if crate::names::comparison_sides(&name).is_some() {
        // A side without a value stays a bare variable: undecided, so false (but `x = x`).
        return crate::names::comparison_value(&name) == Some(true);
    }
    if vars
        .iter()
        .zip(key)
        .any(|(v, x)| x.is_none() && mentions(&name, v))
    {
        return false;
    }
    labels.contains(&name)
}

/// Whether the atom `name` has `var` as an argument (or a comparison side).
fn mentions(name: &str, var: &str) -> bool {
    crate::names::split_atom_name(name)
        .is_some_and(|(_, args)| crate::names::split_list(args).any(|a| a == var))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `G(p -> X q)` by hand (as in `table.rs`'s tests): state 2 = G(p -> X q), 3 = q & G(p ->
    /// X q).
    fn response() -> Table {
        use crate::table::{AuxFile, TableFile, FORMAT, LEAF, VERSION};
        let file = TableFile {
            format: FORMAT.into(),
            version: VERSION,
            formula: "G(p -> X q)".into(),
            semantics: Semantics::Ltl3,
            minimized: true,
            props: vec!["p".into(), "q".into()],
            initial: 2,
            residuals: vec![
                "false".into(),
                "true".into(),
                "G(p -> X q)".into(),
                "q & G(p -> X q)".into(),
            ],
            roots: vec![LEAF, LEAF | 1, 0, 1],
            // node 0: p ? 3 : 2 (state 2); node 1: q ? node 2 : ⊥ (state 3); node 2: p ? 3 : 2.
            nodes: vec![0, LEAF | 2, LEAF | 3, 1, LEAF, 2, 0, LEAF | 2, LEAF | 3],
            aux: AuxFile {
                initial: 0,
                roots: vec![LEAF],
                nodes: vec![],
                accepting: vec![true],
                restart: vec![2],
            },
            accepting: None,
        };
        Table::from_file(file).unwrap()
    }

    /// `Table::fused_packed` stepped by `StaticFused` (generated monitors) reports what
    /// `step_bits` does and leaves the table monitor in the same state. `G(p -> X q)` under
    /// TRAC_R (bit 0 = p, bit 1 = q): a `p` not followed by `q` is violated at the next step.
    #[test]
    fn packed_fused_steps_match_step_bits() {
        let t = Arc::new(response());
        let policy = ResetPolicy {
            on_violation: true,
            on_satisfaction: false,
        };
        let packed = t.fused_packed(policy).expect("a fused step");
        assert_eq!((packed.props, packed.aux_states), (2, 1));
        let steps: &'static [u64] = Box::leak(packed.steps.into_boxed_slice());
        let mut m = TableMonitor::new(t.clone(), policy);
        let mut f = StaticFused::new(steps, 2, 1, t.initial(), t.aux_initial());
        let mut reference = TableMonitor::new(t.clone(), policy);
        let v = Some(Verdict::Violated);
        let trace = [0b01, 0b00, 0b01, 0b10, 0b11, 0b01];
        let got: Vec<_> = trace.iter().map(|&b| f.step(b, &mut m)).collect();
        assert_eq!(got, [None, v, None, None, None, v]);
        let want: Vec<_> = trace.iter().map(|&b| reference.step_bits(&[b])).collect();
        assert_eq!(got, want);
        assert_eq!((m.state(), m.aux()), (reference.state(), reference.aux()));
        assert_eq!(m.verdict(), reference.verdict());
        // Stepped another way, then synced: the next fused step starts from there.
        m.step_bits(&[0b01]);
        f.sync(&m);
        assert_eq!(f.step(0b00, &mut m), v);
    }

    #[test]
    fn values_from_labels_and_lists() {
        let labels: LabelSet = ["take(knife)", "take(red apple)", "look", "takes(x)"]
            .into_iter()
            .collect();
        let v = Values::from_labels(&labels, "take");
        assert!(v.contains("knife") && v.contains("red apple") && !v.contains("x"));
        let mut all = Vec::new();
        v.for_each(|x| all.push(x));
        all.sort_unstable();
        assert_eq!(all, ["knife", "red apple"]);
        let l = Values::list(&["a"]);
        assert!(l.contains("a") && !l.contains("b") && !l.is_empty());
        assert!(Values::None.is_empty());
    }
}
