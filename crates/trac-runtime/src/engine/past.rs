//! Past-time citations: why a property's past-time subformulas had their values at a verdict
//! ([`PastCiter`], the [`PastWitness`] of every engine).
//!
//! A verdict's witness lists the steps that changed the property's residual; for a property
//! with past-time operators (`G(book -> O confirm)`), the step that *decided* is often not the
//! one that explains: `O confirm` is false at step 9 because no step 1..9 had `confirm`. A
//! [`PastCiter`] is a side evaluator of the property's past-time subformulas (the NuSMV
//! operators `Y Z O H S` of `trac_ltl::progress`, nested or not) that keeps, per past node,
//! the step since which it has had its value and its *anchor*:
//!
//! | node | anchor |
//! | --- | --- |
//! | `O a` | the last step where `a` held |
//! | `H a` | the first step where `a` failed |
//! | `a S b` | the last step where `b` held |
//! | `Y a`, `Z a` | (the previous step) |
//!
//! with the text of those steps. O(past nodes + their operands) per step, and one shared text
//! per step; built once per property (at plan time) and attached only to properties with past
//! operators, so the others pay nothing. Both the compiled engine
//! ([`trac_core::table::TableMonitor::with_past`]) and progression
//! ([`crate::engine::monitor::ProgressionMonitor`]) use it, so their citations are the same.
//!
//! **Which subformulas are cited** at a verdict at step `t`: the property's *step formulas* are
//! its maximal subformulas without future operators that contain a past node (for
//! `G(write -> (!deny S confirm))`: `write -> (!deny S confirm)`). A maximal past node `p` of a
//! step formula is cited when its value at `t` decides that step formula at `t` (flipping `p`
//! flips it). A cited `Y ψ` / `Z ψ` also cites the maximal past nodes of `ψ` at step `t - 1`
//! (recursively, as deep as the formula nests `Y`/`Z` over past nodes). Operands of `O`, `H`,
//! `S` are explained by their anchor steps, not by nested citations. Cited subformulas come in
//! the order of their text (the same on every engine), each followed by what it reads.
//!
//! An abbreviation of `trac_ltl::sugar` over past steps (`count[w](a) <= k`, `count(a) >= k`,
//! `Y[n] a`, `Z[n] a`, `O[n:m] a`, `H[n:m] a`) is cited as one subformula, as written, with the
//! steps of its window that decide it (`unit`): not as the nodes of its expansion, which
//! printed hundreds of kilobytes per witness. It is taken as a whole wherever a maximal past
//! node would be, and a `Y` around one cites no further.

mod unit;

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::Arc;
use trac_core::labels::StepInput;
use trac_core::monitor::{CitedStep, PastCitation, PastWitness};
use trac_ltl::formula::{Arena, Formula, Node};
use unit::{Unit, UnitState};

/// No entry in a dense index.
const NONE: u32 = u32::MAX;

/// The past operator of a node, with its operands.
#[derive(Clone, Copy, Debug)]
enum Op {
    Y(Formula),
    Z(Formula),
    O(Formula),
    H(Formula),
    S(Formula, Formula),
}

/// What is built once per property and shared by its monitors and their instances.
struct Plan {
    arena: Arena,
    /// Past nodes, children before parents.
    nodes: Vec<Formula>,
    ops: Vec<Op>,
    /// Per formula handle index (`Formula::index`): its past node, or [`NONE`].
    past_of: Vec<u32>,
    /// Per symbol index (`Sym::index`): its position in `labels`, or [`NONE`].
    atom_of: Vec<u32>,
    /// The atoms (positions in `labels`) read inside past nodes: looked up at every step.
    past_atoms: Vec<usize>,
    /// Step formulas and, per step formula, its maximal past nodes and units (a citable `i`:
    /// the past node `i` below `nodes.len()`, the unit `i - nodes.len()` from there).
    roots: Vec<(Formula, Vec<usize>)>,
    /// The abbreviations cited as a whole (`unit`).
    units: Vec<Unit>,
    /// Per past node: the maximal past nodes of its operand (for `Y`/`Z`), not inside a unit.
    inner: Vec<Vec<usize>>,
    /// How many earlier steps a chain of `Y`/`Z` over past nodes reads.
    depth: usize,
}

/// Printed texts of one past node and its operands, per instance.
#[derive(Clone, Debug)]
struct Texts {
    node: String,
    a: String,
    b: String,
}

/// The state of one past node after a step.
#[derive(Clone, Debug, Default)]
struct NodeState {
    value: bool,
    /// `Y`/`Z`: the operand's value at this step (read at the next one).
    slot: bool,
    since: usize,
    since_text: Option<Arc<str>>,
    anchor: usize,
    anchor_text: Option<Arc<str>>,
}

/// The states of every past node after one step, and the text of the step before it.
#[derive(Clone, Debug, Default)]
struct Snapshot {
    nodes: Vec<NodeState>,
    step: usize,
    prev_text: Option<Arc<str>>,
}

/// A side evaluator of a property's past-time subformulas that cites, at a verdict, the steps
/// that gave them their values (see the module docs). Cheap to clone (the plan is shared).
#[derive(Clone)]
pub struct PastCiter {
    plan: Arc<Plan>,
    /// Per atom (by `Plan::atom_of`): the label that makes it hold (renamed in instances).
    labels: Arc<[String]>,
    /// Per citable (past nodes, then units): its text and its operands'.
    texts: Arc<[Texts]>,
    now: Snapshot,
    /// Per unit: the record of its window.
    units: Vec<UnitState>,
    /// `hist[k]`: the snapshot `k + 1` steps ago (`Plan::depth` of them at most).
    hist: VecDeque<Snapshot>,
    /// The text of the step just read.
    text: Option<Arc<str>>,
    /// Per atom: whether it held at the step just read (the atoms of `Plan::past_atoms`).
    atomv: Vec<bool>,
}

impl fmt::Debug for PastCiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PastCiter")
            .field(
                "nodes",
                &self.texts.iter().map(|t| &t.node).collect::<Vec<_>>(),
            )
            .field("step", &self.now.step)
            .finish()
    }
}

impl PastCiter {
    /// The citer of `formula` (a handle in `arena`), or `None` when it has no past-time
    /// operator (nothing to cite). `formula` should pass `trac_ltl::progress::validate`.
    /// O(|formula|).
    pub fn new(arena: &Arena, formula: Formula) -> Option<PastCiter> {
        if !arena.info(formula).has_past {
            return None;
        }
        let nodes: Vec<Formula> = arena
            .subformulas_postorder(formula)
            .into_iter()
            .filter(|&g| arena.node(g).is_past_operator())
            .collect();
        let index: HashMap<Formula, usize> =
            nodes.iter().enumerate().map(|(i, &g)| (g, i)).collect();
        let ops: Vec<Op> = nodes
            .iter()
            .map(|&g| match arena.node(g) {
                Node::Yesterday(a) => Op::Y(*a),
                Node::WeakYesterday(a) => Op::Z(*a),
                Node::Once(a) => Op::O(*a),
                Node::Historically(a) => Op::H(*a),
                Node::Since(a, b) => Op::S(*a, *b),
                _ => unreachable!("only past nodes are kept"),
            })
            .collect();
        let atoms = arena.atoms(formula);
        let subs = arena.subformulas_postorder(formula);
        let mut past_of = vec![NONE; subs.iter().map(|g| g.index() + 1).max().unwrap_or(0)];
        for (i, g) in nodes.iter().enumerate() {
            past_of[g.index()] = i as u32;
        }
        let mut atom_of = vec![NONE; atoms.iter().map(|s| s.index() + 1).max().unwrap_or(0)];
        for (i, s) in atoms.iter().enumerate() {
            atom_of[s.index()] = i as u32;
        }
        let mut past_atoms: Vec<usize> = Vec::new();
        for &g in &nodes {
            for s in arena.atoms(g) {
                let i = atom_of[s.index()] as usize;
                if !past_atoms.contains(&i) {
                    past_atoms.push(i);
                }
            }
        }
        let labels: Arc<[String]> = atoms
            .iter()
            .map(|&s| arena.sym_name(s).to_string())
            .collect();
        let mut roots = Vec::new();
        step_formulas(arena, formula, &mut roots);
        let mut units = Units {
            first: nodes.len(),
            list: Vec::new(),
            keep: true,
        };
        let roots: Vec<(Formula, Vec<usize>)> = roots
            .into_iter()
            .map(|r| {
                let mut m = Vec::new();
                maximal_past(arena, r, &index, &mut units, &mut m);
                (r, m)
            })
            .collect();
        units.keep = false;
        let inner: Vec<Vec<usize>> = ops
            .iter()
            .map(|op| {
                let mut m = Vec::new();
                if let Op::Y(a) | Op::Z(a) = op {
                    maximal_past(arena, *a, &index, &mut units, &mut m);
                }
                m
            })
            .collect();
        let units = units.list;
        // Longest chain of Y/Z over past nodes (children come first in `nodes`).
        let mut chain = vec![0usize; nodes.len()];
        for i in 0..nodes.len() {
            chain[i] = inner[i].iter().map(|&j| chain[j] + 1).max().unwrap_or(0);
        }
        // Only what a citation reads back: the chains under the past nodes a verdict can cite
        // (not the nodes inside a unit: a `count[w]` window needs no snapshots).
        let depth = roots
            .iter()
            .flat_map(|(_, m)| m)
            .filter(|&&p| p < nodes.len())
            .map(|&p| chain[p])
            .max()
            .unwrap_or(0);
        let print = |f: Formula| trac_ltl::print(arena, f);
        let texts: Arc<[Texts]> = ops
            .iter()
            .zip(&nodes)
            .map(|(op, &g)| {
                let (a, b) = match *op {
                    Op::Y(a) | Op::Z(a) | Op::O(a) | Op::H(a) => (print(a), String::new()),
                    Op::S(a, b) => (print(a), print(b)),
                };
                Texts {
                    node: print(g),
                    a,
                    b,
                }
            })
            .chain(units.iter().map(|u| Texts {
                node: print(u.f),
                a: print(u.body),
                b: String::new(),
            }))
            .collect();
        let n = nodes.len();
        let plan_units = units.len();
        let plan = Plan {
            arena: arena.clone(),
            nodes,
            ops,
            past_of,
            atom_of,
            past_atoms,
            roots,
            units,
            inner,
            depth,
        };
        let mut c = PastCiter {
            plan: Arc::new(plan),
            labels,
            texts,
            now: Snapshot {
                nodes: vec![NodeState::default(); n],
                step: 0,
                prev_text: None,
            },
            hist: VecDeque::new(),
            text: None,
            atomv: vec![false; atoms.len()],
            units: vec![UnitState::default(); plan_units],
        };
        c.reset_state();
        Some(c)
    }

    /// Back to the state before the first step.
    pub fn reset_state(&mut self) {
        for (i, st) in self.now.nodes.iter_mut().enumerate() {
            // Before the first step: Z and H are true, Y, O and S false (NuSMV).
            let init = matches!(self.plan.ops[i], Op::Z(_) | Op::H(_));
            *st = NodeState {
                value: init,
                slot: init,
                ..NodeState::default()
            };
        }
        for u in &mut self.units {
            *u = UnitState::default();
        }
        self.now.step = 0;
        self.now.prev_text = None;
        self.hist.clear();
        self.text = None;
    }

    /// A copy for the value `value` of the parametric variable `var` (labels and printed
    /// subformulas renamed; state kept: trace slicing).
    pub fn instantiate_citer(&self, var: &str, value: &str) -> PastCiter {
        let mut c = self.clone();
        c.labels = self
            .labels
            .iter()
            .map(|l| trac_ltl::formula::instantiate_name(l, var, value))
            .collect();
        let r = |s: &str| {
            if s.is_empty() {
                String::new()
            } else {
                crate::engine::rename::rename_residual(s, var, value)
            }
        };
        c.texts = self
            .texts
            .iter()
            .map(|t| Texts {
                node: r(&t.node),
                a: r(&t.a),
                b: r(&t.b),
            })
            .collect();
        c
    }

    /// Reads one step.
    pub fn read(&mut self, input: &StepInput<'_>) {
        let plan = &*self.plan;
        if plan.depth > 0 {
            let mut old = if self.hist.len() == plan.depth {
                self.hist.pop_back().unwrap_or_default()
            } else {
                Snapshot::default()
            };
            old.clone_from(&self.now);
            self.hist.push_front(old);
        }
        let t = input.step;
        let text = trac_core::table::shared_text(input.text);
        for &i in &plan.past_atoms {
            self.atomv[i] = input.labels.contains(&self.labels[i]);
        }
        let holds = &self.atomv[..];
        let first = self.now.step == 0;
        let nodes = &mut self.now.nodes;
        for i in 0..plan.nodes.len() {
            let old = nodes[i].value;
            let value = match plan.ops[i] {
                Op::Y(_) | Op::Z(_) => nodes[i].slot,
                Op::O(a) => {
                    let av = eval(plan, a, holds, nodes, None);
                    if av {
                        nodes[i].anchor = t;
                        nodes[i].anchor_text = Some(text.clone());
                    }
                    av || old
                }
                Op::H(a) => {
                    let av = eval(plan, a, holds, nodes, None);
                    if !av && nodes[i].anchor == 0 {
                        nodes[i].anchor = t;
                        nodes[i].anchor_text = Some(text.clone());
                    }
                    av && old
                }
                Op::S(a, b) => {
                    let bv = eval(plan, b, holds, nodes, None);
                    if bv {
                        nodes[i].anchor = t;
                        nodes[i].anchor_text = Some(text.clone());
                    }
                    bv || (eval(plan, a, holds, nodes, None) && old)
                }
            };
            nodes[i].value = value;
            if first || value != old {
                nodes[i].since = t;
                nodes[i].since_text = Some(text.clone());
            }
        }
        for i in 0..plan.nodes.len() {
            if let Op::Y(a) | Op::Z(a) = plan.ops[i] {
                nodes[i].slot = eval(plan, a, holds, nodes, None);
            }
        }
        for (u, st) in plan.units.iter().zip(&mut self.units) {
            st.read(u, t, eval(plan, u.body, holds, nodes, None), &text);
            let value = eval(plan, u.f, holds, nodes, None);
            if first || value != st.value {
                st.since = t;
                st.since_text = Some(text.clone());
            }
            st.value = value;
        }
        self.now.prev_text = self.text.take();
        self.now.step = t;
        self.text = Some(text);
    }

    /// The citations of a verdict at the step just read (see the module docs).
    pub fn citations(&self, input: &StepInput<'_>) -> Vec<PastCitation> {
        let plan = &*self.plan;
        let atomv: Vec<bool> = self
            .labels
            .iter()
            .map(|l| input.labels.contains(l))
            .collect();
        let holds = &atomv[..];
        let nodes = &self.now.nodes;
        let mut cited: Vec<usize> = Vec::new();
        for (root, maximal) in &plan.roots {
            let v = eval(plan, *root, holds, nodes, None);
            for &p in maximal {
                if !cited.contains(&p) && eval(plan, *root, holds, nodes, Some(self.handle(p))) != v
                {
                    cited.push(p);
                }
            }
        }
        // In the order of their text: the same whatever arena built the plan (a parametric
        // instance's shadow table is compiled from its own).
        cited.sort_by(|&x, &y| self.texts[x].node.cmp(&self.texts[y].node));
        let mut out = Vec::new();
        for p in cited {
            self.cite(p, 0, &mut out);
        }
        out
    }

    /// The formula of citable `i` (a past node or a unit).
    fn handle(&self, i: usize) -> Formula {
        let plan = &*self.plan;
        match i.checked_sub(plan.nodes.len()) {
            Some(u) => plan.units[u].f,
            None => plan.nodes[i],
        }
    }

    /// Cites node `i` as it was `back` steps ago, then what a `Y`/`Z` reads; or the unit
    /// `i - nodes.len()` (at the step just read).
    fn cite(&self, i: usize, back: usize, out: &mut Vec<PastCitation>) {
        if let Some(u) = i.checked_sub(self.plan.nodes.len()) {
            let t = self.now.step;
            let st = &self.units[u];
            let (steps, reason) = st.cite(&self.plan.units[u], t, &self.texts[i].a);
            out.push(PastCitation {
                subformula: self.texts[i].node.clone(),
                step: t,
                value: st.value,
                since_step: st.since,
                steps,
                reason,
            });
            return;
        }
        let snap = if back == 0 {
            &self.now
        } else {
            match self.hist.get(back - 1) {
                Some(s) => s,
                None => return,
            }
        };
        let t = snap.step;
        if t == 0 {
            return;
        }
        let st = &snap.nodes[i];
        let tx = &self.texts[i];
        let step = |s: usize, text: &Option<Arc<str>>, what: String| CitedStep {
            step: s,
            text: text.as_deref().unwrap_or_default().to_string(),
            what,
        };
        let (steps, reason) = match self.plan.ops[i] {
            Op::Y(_) | Op::Z(_) => {
                if t == 1 {
                    (Vec::new(), "step 1 has no previous step".to_string())
                } else {
                    let did = if st.value { "held" } else { "did not hold" };
                    (
                        vec![step(t - 1, &snap.prev_text, format!("{} {did}", tx.a))],
                        format!("`{}` {did} at step {}", tx.a, t - 1),
                    )
                }
            }
            Op::O(_) => {
                if st.value {
                    (
                        vec![step(st.anchor, &st.anchor_text, format!("{} held", tx.a))],
                        format!("`{}` held last at step {}", tx.a, st.anchor),
                    )
                } else {
                    (Vec::new(), format!("`{}` held at no step 1..{t}", tx.a))
                }
            }
            Op::H(_) => {
                if st.value {
                    (Vec::new(), format!("`{}` held at every step 1..{t}", tx.a))
                } else {
                    (
                        vec![step(st.anchor, &st.anchor_text, format!("{} failed", tx.a))],
                        format!("`{}` failed at step {}", tx.a, st.anchor),
                    )
                }
            }
            Op::S(..) => {
                if st.value {
                    let reason = if st.anchor == t {
                        format!("`{}` held at step {t}", tx.b)
                    } else {
                        format!(
                            "`{}` held last at step {}, and `{}` at every step after it",
                            tx.b, st.anchor, tx.a
                        )
                    };
                    (
                        vec![step(st.anchor, &st.anchor_text, format!("{} held", tx.b))],
                        reason,
                    )
                } else if st.anchor == 0 {
                    (Vec::new(), format!("`{}` held at no step 1..{t}", tx.b))
                } else {
                    (
                        vec![
                            step(st.anchor, &st.anchor_text, format!("{} held", tx.b)),
                            step(st.since, &st.since_text, format!("{} failed", tx.a)),
                        ],
                        format!(
                            "`{}` held last at step {}, then `{}` failed at step {}",
                            tx.b, st.anchor, tx.a, st.since
                        ),
                    )
                }
            }
        };
        out.push(PastCitation {
            subformula: tx.node.clone(),
            step: t,
            value: st.value,
            since_step: st.since,
            steps,
            reason,
        });
        if matches!(self.plan.ops[i], Op::Y(_) | Op::Z(_)) && t > 1 {
            for &j in &self.plan.inner[i] {
                self.cite(j, back + 1, out);
            }
        }
    }
}

impl PastWitness for PastCiter {
    fn step(&mut self, input: &StepInput<'_>) {
        self.read(input);
    }

    fn cite(&self, input: &StepInput<'_>) -> Vec<PastCitation> {
        self.citations(input)
    }

    fn reset(&mut self) {
        self.reset_state();
    }

    fn instantiate(&self, var: &str, value: &str) -> Box<dyn PastWitness> {
        Box::new(self.instantiate_citer(var, value))
    }

    fn clone_box(&self) -> Box<dyn PastWitness> {
        Box::new(self.clone())
    }
}

/// The maximal subformulas of `f` without future operators that contain a past node.
fn step_formulas(arena: &Arena, f: Formula, out: &mut Vec<Formula>) {
    let info = arena.info(f);
    if !info.has_past {
        return;
    }
    if !info.has_future {
        if !out.contains(&f) {
            out.push(f);
        }
        return;
    }
    for g in arena.node(f).operands() {
        step_formulas(arena, g, out);
    }
}

/// The units found so far, numbered from `first` (after the past nodes).
struct Units {
    first: usize,
    list: Vec<Unit>,
    /// Whether a unit met is cited (at a root) or only not looked into (under a `Y`).
    keep: bool,
}

/// The units and past nodes of `f` not inside another one (citables: past nodes by `index`,
/// units from `units.first`).
fn maximal_past(
    arena: &Arena,
    f: Formula,
    index: &HashMap<Formula, usize>,
    units: &mut Units,
    out: &mut Vec<usize>,
) {
    let pos = units.list.iter().position(|u| u.f == f);
    let found = pos.or_else(|| {
        let u = Unit::of(arena, f)?;
        if !units.keep {
            // Under a `Y`: not cited, not looked into.
            return Some(usize::MAX);
        }
        units.list.push(u);
        Some(units.list.len() - 1)
    });
    let i = match found {
        Some(u) if units.keep => Some(units.first + u),
        Some(_) => return,
        None => index.get(&f).copied(),
    };
    if let Some(i) = i {
        if !out.contains(&i) {
            out.push(i);
        }
        return;
    }
    for g in arena.node(f).operands() {
        maximal_past(arena, g, index, units, out);
    }
}

/// The value at the current step of `f` (propositional over atoms and past nodes), the past
/// nodes read from `nodes`, the subformula `flip` (a past node or a unit) negated.
fn eval(
    plan: &Plan,
    f: Formula,
    holds: &[bool],
    nodes: &[NodeState],
    flip: Option<Formula>,
) -> bool {
    let a = &plan.arena;
    let ev = |g: Formula| eval(plan, g, holds, nodes, flip);
    let v = match a.node(f) {
        Node::True => true,
        Node::False => false,
        Node::Atom(s) => match plan.atom_of.get(s.index()) {
            Some(&i) if i != NONE => holds[i as usize],
            _ => false,
        },
        Node::Not(x) => !ev(*x),
        Node::And(xs) => xs.iter().all(|&x| ev(x)),
        Node::Or(xs) => xs.iter().any(|&x| ev(x)),
        Node::Xor(x, y) => ev(*x) != ev(*y),
        Node::Implies(x, y) => !ev(*x) || ev(*y),
        Node::Equiv(x, y) => ev(*x) == ev(*y),
        _ => match plan.past_of.get(f.index()) {
            Some(&i) if i != NONE => nodes[i as usize].value,
            _ => false,
        },
    };
    v != (flip == Some(f))
}
