//! Derived atomic propositions: atoms of a formula whose truth at a step is computed from the
//! step's labels (and, for a quantifier, the labels of the steps before), before any monitor
//! reads the valuation. The engines (progression, compiled tables, generated code) see them as
//! ordinary atoms, so none of them changes.
//!
//! Two kinds:
//! - **Patterns**: a parametric atom whose arguments hold glob characters or sets,
//!   `call(update_*)`, `call(update_flight|update_cabin)`, `load(*, a1)`: it holds at a step iff
//!   some label with the same base and number of arguments matches every argument (`*` any run
//!   of characters, `?` one character, `a|b` either alternative). Cost per step: O(labels ×
//!   pattern length).
//! - **Past-time quantifiers** over the values seen so far, as in first-order past-time LTL
//!   (DejaVu: Havelund, Peled & Ulus, "First-order temporal logic monitoring with BDDs", FMCAD
//!   2017; FMSD 2020): `exists p: !unload(p, a1) S load(p, a1)` holds at step t iff the body
//!   holds at t for some value of `p`. The body has no future operator, so its truth at t depends
//!   on steps 1..t only. Evaluated as DejaVu does, without BDDs: one past state
//!   ([`PastState`], one bit per past operator of the body) per value of `p` seen so far in an
//!   argument position of `p` of a label that matches one of the body's atoms, plus a *template*
//!   state for every value not seen yet (all its `p`-atoms false at every step: DejaVu's extra
//!   "any other value"). A value first seen at step t starts as a copy of the template's state
//!   after step t − 1, which is exactly its own state, since none of its atoms held before.
//!   `exists p: ψ` is then ψ(template) ∨ ⋁ ψ(v) over the values seen; `forall p: ψ` is written
//!   `!(exists p: !ψ)`. Cost per step: O((values seen + 1) × |ψ|) time, O(values seen × past
//!   operators of ψ) bits of memory (DejaVu's BDDs would share these between values; a set per
//!   value is simpler and linear in the values). The values none of whose atoms holds at a step
//!   read the template's valuation, so their next state and truth depend on their past bits
//!   alone: they share one evaluation per distinct past state at that step (see
//!   `eval_state`), and a step evaluates ψ only for the template, the values some atom holds
//!   for, and one value per other distinct state.
//!
//! A pattern or quantifier may mention one variable of the property's `forall`: it is then
//! evaluated per value of that variable as well (a two-dimensional slice), and adds the atom
//! named as the property's instance for that value reads it (see [`DerivedAtoms::new`]).
//!
//! Not supported (reported by [`DerivedAtoms::new`]): a quantifier nested in another's body,
//! and a body mentioning two variables of the property's `forall`.

use std::collections::HashMap;
use trac_core::labels::LabelSet;
use trac_core::names::split_atom_name;
use trac_core::parametric::Slicing;
use trac_ltl::formula::{Arena, Formula, Sym};
use trac_ltl::progress::PastState;

/// One argument of a pattern: alternatives separated by `|`, each a glob.
fn arg_matches(pattern: &str, value: &str) -> bool {
    pattern
        .split('|')
        .any(|alt| trac_spec::spec::glob_match(alt, value))
}

/// True if an atom argument is a pattern (has `*`, `?` or `|`).
fn is_pattern_arg(arg: &str) -> bool {
    arg.contains(['*', '?', '|'])
}

/// True if `name` is a pattern atom: a parametric atom with a pattern argument.
pub fn is_pattern_atom(name: &str) -> bool {
    split_atom_name(name)
        .is_some_and(|(_, args)| trac_core::names::split_list(args).any(is_pattern_arg))
}

/// True if some label matches the atom `name` (a pattern or a plain name).
fn ground_holds(name: &str, labels: &LabelSet) -> bool {
    if !is_pattern_atom(name) {
        return labels.contains(name);
    }
    let Some((base, args)) = split_atom_name(name) else {
        return false;
    };
    let pats: Vec<&str> = trac_core::names::split_list(args).collect();
    labels.iter().any(|l| {
        split_atom_name(l).is_some_and(|(b, a)| {
            b == base && {
                let vals: Vec<&str> = trac_core::names::split_list(a).collect();
                vals.len() == pats.len() && pats.iter().zip(&vals).all(|(p, v)| arg_matches(p, v))
            }
        })
    })
}

/// Why an `exists p: ψ` quantifier of a property cannot be evaluated.
#[derive(Clone, Debug, thiserror::Error)]
pub enum QuantifierError {
    /// Its body does not parse (the parser's message; the position is the body's own).
    #[error("{}", .0.message)]
    Body(#[source] trac_ltl::ParseError),
    /// Its body has another `exists`.
    #[error(
        "`exists {var}: ...` has another `exists` in its body; nested quantifiers are not supported yet"
    )]
    Nested {
        /// The quantifier's variable.
        var: String,
    },
    /// Its body mentions several variables of the property's `forall`.
    #[error(
        "`exists {var}: ...` mentions {} variables of the property's `forall` ({}): a quantifier's body may mention one of them (not supported yet)",
        vars.len(),
        vars.join(", ")
    )]
    SeveralForall {
        /// The quantifier's variable.
        var: String,
        /// The `forall` variables its body mentions.
        vars: Vec<String>,
    },
}

/// One argument of a body atom.
#[derive(Clone, Debug)]
enum BodyArg {
    /// The quantifier's own variable.
    Var,
    /// A variable of the property's `forall` (see [`Exists::forall`]): matches the value of
    /// the instance being evaluated; nothing for the template (a value not seen yet).
    Forall,
    /// A constant or a pattern the label's argument must match.
    Const(String),
}

/// How an atom of a quantifier's body is read.
#[derive(Clone, Debug)]
enum BodyAtom {
    /// No occurrence of a variable: holds as a top-level atom would (name or pattern).
    Ground(String),
    /// `base(args)` with some argument a variable.
    Param { base: String, args: Vec<BodyArg> },
}

impl BodyAtom {
    /// For a label `base(vals)` and the value of the `forall` variable (`None`: not seen yet):
    /// if the label matches this atom, the value of the quantifier's variable there (`Some("")`
    /// when the atom does not mention it).
    fn value_of<'l>(&self, base: &str, vals: &[&'l str], forall: Option<&str>) -> Option<&'l str> {
        let BodyAtom::Param { base: b, args } = self else {
            return None;
        };
        if b != base || args.len() != vals.len() {
            return None;
        }
        let mut value: Option<&str> = None;
        for (a, v) in args.iter().zip(vals) {
            match a {
                BodyArg::Const(p) if is_pattern_arg(p) => {
                    if !arg_matches(p, v) {
                        return None;
                    }
                }
                BodyArg::Const(c) => {
                    if c != v {
                        return None;
                    }
                }
                BodyArg::Forall => {
                    if forall != Some(*v) {
                        return None;
                    }
                }
                BodyArg::Var => match value {
                    Some(x) if x != *v => return None,
                    _ => value = Some(v),
                },
            }
        }
        Some(value.unwrap_or(""))
    }

    /// For a label `base(vals)`: the value it gives the `forall` variable, if this atom has it
    /// and the label matches the atom's other arguments (the quantifier's variable any value).
    fn forall_value<'l>(&self, base: &str, vals: &[&'l str]) -> Option<&'l str> {
        let BodyAtom::Param { base: b, args } = self else {
            return None;
        };
        if b != base || args.len() != vals.len() {
            return None;
        }
        let (mut value, mut own): (Option<&str>, Option<&str>) = (None, None);
        for (a, v) in args.iter().zip(vals) {
            let slot = match a {
                BodyArg::Const(p) => {
                    if !(arg_matches(p, v) && (is_pattern_arg(p) || p == v)) {
                        return None;
                    }
                    continue;
                }
                BodyArg::Forall => &mut value,
                BodyArg::Var => &mut own,
            };
            match slot {
                Some(x) if x != v => return None,
                _ => *slot = Some(v),
            }
        }
        value
    }
}

/// The past states of `exists var: ψ` for one value of the `forall` variable (or for the
/// values not seen yet): one [`PastState`] per value of `var` seen, plus the template's.
#[derive(Clone, Debug)]
struct ExistsState {
    template: PastState,
    values: Vec<(String, PastState)>,
    index: HashMap<String, usize>,
}

/// `exists var: body` with its per-value past states; when the body mentions a variable of
/// the property's `forall`, one [`ExistsState`] per value of that variable too (a
/// two-dimensional slice: DejaVu's assignments to both variables, kept as sets).
#[derive(Clone, Debug)]
struct Exists {
    var: String,
    arena: Arena,
    body: Formula,
    /// The body's atoms, indexed by symbol.
    atoms: Vec<(Sym, BodyAtom)>,
    /// The `forall` variable the body mentions, if any.
    forall: Option<String>,
    /// The state for the values of the `forall` variable not seen yet (all of them when the
    /// body mentions none).
    unseen: ExistsState,
    /// Per value of the `forall` variable seen: the derived atom's name for it and its state.
    per_value: Vec<(String, String, ExistsState)>,
    per_index: HashMap<String, usize>,
    /// Where the property's labels give the `forall` variable values (its atoms and the
    /// body's), so that a value gets its state no later than the property's instance.
    slicing: Option<Slicing>,
    slicing_names: Vec<String>,
    /// Buffers for one step's evaluation, kept across steps.
    scratch: Scratch,
    /// Whether values none of whose atoms hold at a step share evaluations (off only in
    /// tests, as the reference).
    share: bool,
}

/// Buffers of [`eval_state`], kept across steps (and across the [`ExistsState`]s of one step)
/// so that a step allocates only for a value seen for the first time.
#[derive(Clone, Debug, Default)]
struct Scratch {
    /// Per body atom without a variable: whether it holds at the current step (the same for
    /// every value of the `forall` variable).
    ground_base: Vec<bool>,
    /// Per body atom: whether it holds for every value of the quantifier's variable, in the
    /// [`ExistsState`] being stepped.
    ground: Vec<bool>,
    /// Per body atom: the values (indices into [`ExistsState::values`]) it holds for.
    holds: Vec<Vec<usize>>,
    /// Per value: some atom holds for it at the current step.
    touched: Vec<bool>,
    /// The shared evaluations of the [`ExistsState`] being stepped (the first ones, as many
    /// as [`eval_state`] has made for it; the rest are buffers kept).
    memo: Vec<Memo>,
    /// A state's bits before its step.
    old: Vec<bool>,
}

/// One evaluation of a quantifier's body for the values none of whose atoms hold at a step:
/// the past state's bits before and after the step, and the body's truth.
#[derive(Clone, Debug, Default)]
struct Memo {
    old: Vec<bool>,
    new: Vec<bool>,
    truth: bool,
}

impl Exists {
    fn new(var: &str, body_src: &str, forall: &[&str]) -> Result<Exists, QuantifierError> {
        let mut arena = Arena::new();
        let body = trac_ltl::parse(&mut arena, body_src).map_err(QuantifierError::Body)?;
        let mut atoms = Vec::new();
        let mut mentioned: Vec<&str> = Vec::new();
        for s in arena.atoms(body) {
            let name = arena.sym_name(s).to_string();
            if trac_ltl::parser::split_exists(&name).is_some() {
                return Err(QuantifierError::Nested {
                    var: var.to_string(),
                });
            }
            let kind = match split_atom_name(&name) {
                Some((base, args))
                    if trac_core::names::split_list(args)
                        .any(|a| a == var || forall.contains(&a)) =>
                {
                    BodyAtom::Param {
                        base: base.to_string(),
                        args: trac_core::names::split_list(args)
                            .map(|a| {
                                if a == var {
                                    BodyArg::Var
                                } else if let Some(f) = forall.iter().find(|f| **f == a) {
                                    if !mentioned.contains(f) {
                                        mentioned.push(f);
                                    }
                                    BodyArg::Forall
                                } else {
                                    BodyArg::Const(a.to_string())
                                }
                            })
                            .collect(),
                    }
                }
                _ => BodyAtom::Ground(name),
            };
            atoms.push((s, kind));
        }
        if mentioned.len() > 1 {
            return Err(QuantifierError::SeveralForall {
                var: var.to_string(),
                vars: mentioned.iter().map(|v| v.to_string()).collect(),
            });
        }
        let template = PastState::new(&arena, body);
        Ok(Exists {
            var: var.to_string(),
            arena,
            body,
            atoms,
            forall: mentioned.first().map(|f| f.to_string()),
            unseen: ExistsState {
                template,
                values: Vec::new(),
                index: HashMap::new(),
            },
            per_value: Vec::new(),
            per_index: HashMap::new(),
            slicing: None,
            slicing_names: Vec::new(),
            scratch: Scratch::default(),
            share: true,
        })
    }

    /// Adds the places where a property's labels give the `forall` variable values.
    fn add_slicing(&mut self, names: &[String]) {
        let Some(fv) = &self.forall else {
            return;
        };
        for n in names {
            if !self.slicing_names.contains(n) {
                self.slicing_names.push(n.clone());
            }
        }
        self.slicing = Some(Slicing::new(
            self.slicing_names.iter().map(String::as_str),
            fv,
        ));
    }

    /// Reads one step's labels (`split`: its parametric labels, see [`Split`]); calls `out`
    /// with the name of every instance (the template: `name`, a value `v` of the `forall`
    /// variable: `name` instantiated for `v`) that holds.
    fn step(&mut self, name: &str, labels: &LabelSet, split: &Split, out: &mut Vec<String>) {
        // New values of the `forall` variable: their state is the unseen one (none of their
        // atoms held before).
        if let Some(fv) = &self.forall {
            let mut fresh: Vec<String> = Vec::new();
            let mut note = |v: &str| {
                if !self.per_index.contains_key(v) && !fresh.iter().any(|f| f == v) {
                    fresh.push(v.to_string());
                }
            };
            if let Some(s) = &self.slicing {
                for l in labels.iter() {
                    s.bindings(l, |b| {
                        if let Some(v) = b[0] {
                            note(v);
                        }
                    });
                }
            }
            for (base, vals) in split.iter() {
                for (_, a) in &self.atoms {
                    if let Some(v) = a.forall_value(base, vals) {
                        note(v);
                    }
                }
            }
            fresh.sort();
            for v in fresh {
                let n = trac_ltl::parser::instantiate_exists(name, fv, &v)
                    .unwrap_or_else(|| name.to_string());
                self.per_index.insert(v.clone(), self.per_value.len());
                self.per_value.push((v, n, self.unseen.clone()));
            }
        }
        let (arena, body, atoms, sc, share) = (
            &self.arena,
            self.body,
            &self.atoms,
            &mut self.scratch,
            self.share,
        );
        // The atoms without a variable hold or not whatever the `forall` variable's value.
        sc.ground_base.clear();
        sc.ground_base.extend(atoms.iter().map(|(_, a)| match a {
            BodyAtom::Ground(name) => ground_holds(name, labels),
            BodyAtom::Param { .. } => false,
        }));
        let mut eval = |st: &mut ExistsState, forall: Option<&str>| {
            eval_state(arena, body, atoms, st, forall, split, sc, share)
        };
        if eval(&mut self.unseen, None) {
            out.push(name.to_string());
        }
        for (v, n, state) in &mut self.per_value {
            if eval(state, Some(v)) {
                out.push(n.clone());
            }
        }
    }
}

/// The parametric labels of one step, each split once for every quantifier: its base and its
/// arguments.
#[derive(Default)]
struct Split<'l> {
    /// Per parametric label, in the label set's order: its base and its arguments' range in
    /// `args`.
    labels: Vec<(&'l str, std::ops::Range<usize>)>,
    args: Vec<&'l str>,
}

impl<'l> Split<'l> {
    fn new(labels: &'l LabelSet) -> Split<'l> {
        let mut s = Split::default();
        for l in labels.iter() {
            if let Some((base, args)) = split_atom_name(l) {
                let start = s.args.len();
                s.args.extend(trac_core::names::split_list(args));
                s.labels.push((base, start..s.args.len()));
            }
        }
        s
    }

    /// Each parametric label's base and arguments.
    fn iter(&self) -> impl Iterator<Item = (&'l str, &[&'l str])> + '_ {
        self.labels.iter().map(|(b, r)| (*b, &self.args[r.clone()]))
    }
}

/// Steps one [`ExistsState`] (the `forall` variable's value `forall`, `None` for the values
/// not seen yet) by one step's labels (`split`, and `sc.ground_base` computed from them);
/// returns whether `exists var: body` holds there.
///
/// With `share`, the values none of whose atoms holds at this step (not `touched`) share
/// evaluations: such a value reads the template's valuation, so its next state and its truth
/// are functions of its past bits alone, and the values with the same bits (most of them:
/// never loaded, or unloaded since) need one evaluation, remembered in `sc.memo` (old bits,
/// new bits, truth) for this state and step. The template's own evaluation is the first.
#[allow(clippy::too_many_arguments)]
fn eval_state(
    arena: &Arena,
    body: Formula,
    atoms: &[(Sym, BodyAtom)],
    st: &mut ExistsState,
    forall: Option<&str>,
    split: &Split,
    sc: &mut Scratch,
    share: bool,
) -> bool {
    let Scratch {
        ground_base,
        ground,
        holds,
        touched,
        memo,
        old,
    } = sc;
    // Which values make each variable atom hold at this step, and which are new.
    ground.clear();
    ground.extend_from_slice(ground_base);
    holds.resize_with(atoms.len(), Vec::new);
    holds.iter_mut().for_each(Vec::clear);
    for (base, vals) in split.iter() {
        for (k, (_, a)) in atoms.iter().enumerate() {
            if let Some(v) = a.value_of(base, vals, forall) {
                if v.is_empty() {
                    // An atom with the `forall` variable but not the quantifier's: holds
                    // for every value of it.
                    ground[k] = true;
                    continue;
                }
                let id = match st.index.get(v) {
                    Some(&id) => id,
                    None => {
                        // A new value: its past equals the template's (none of its atoms
                        // held).
                        let id = st.values.len();
                        st.index.insert(v.to_string(), id);
                        st.values.push((v.to_string(), st.template.clone()));
                        id
                    }
                };
                holds[k].push(id);
            }
        }
    }
    let (ground, holds) = (&*ground, &*holds);
    let eval = |value: Option<usize>, state: &mut PastState| {
        let v = |s: Sym| {
            let Some(k) = atoms.iter().position(|(x, _)| *x == s) else {
                return false;
            };
            match value {
                _ if ground[k] => true,
                Some(x) => holds[k].contains(&x),
                None => false,
            }
        };
        state.step(arena, &v);
        state.eval(arena, body, &v)
    };
    touched.clear();
    touched.resize(st.values.len(), false);
    for &id in holds.iter().flatten() {
        touched[id] = true;
    }
    let mut used = 0;
    fn remember(memo: &mut Vec<Memo>, used: &mut usize, old: &[bool], new: &[bool], truth: bool) {
        if *used == memo.len() {
            memo.push(Memo::default());
        }
        let m = &mut memo[*used];
        m.old.clear();
        m.old.extend_from_slice(old);
        m.new.clear();
        m.new.extend_from_slice(new);
        m.truth = truth;
        *used += 1;
    }
    old.clear();
    old.extend_from_slice(st.template.bits());
    let mut any = eval(None, &mut st.template);
    remember(memo, &mut used, old, st.template.bits(), any);
    for (id, (_, state)) in st.values.iter_mut().enumerate() {
        // Every state steps, whatever the result.
        if share && !touched[id] {
            if let Some(m) = memo[..used].iter().find(|m| m.old == state.bits()) {
                state.set_bits(&m.new);
                any |= m.truth;
                continue;
            }
            old.clear();
            old.extend_from_slice(state.bits());
            let truth = eval(Some(id), state);
            remember(memo, &mut used, old, state.bits(), truth);
            any |= truth;
        } else {
            any |= eval(Some(id), state);
        }
    }
    any
}

#[derive(Clone, Debug)]
enum Kind {
    /// A pattern, with the `forall` variables among its arguments.
    Pattern(Vec<String>),
    Exists(Box<Exists>),
}

/// For a pattern atom `base(args)` whose arguments `vars` are `forall` variables: the
/// instantiated names (the variables replaced by the label's values there) of the labels
/// matching its other arguments.
fn pattern_instances(name: &str, vars: &[String], labels: &LabelSet, out: &mut Vec<String>) {
    let Some((base, args)) = split_atom_name(name) else {
        return;
    };
    let pats: Vec<&str> = trac_core::names::split_list(args).collect();
    for l in labels.iter() {
        let Some((b, a)) = split_atom_name(l) else {
            continue;
        };
        let vals: Vec<&str> = trac_core::names::split_list(a).collect();
        if b != base || vals.len() != pats.len() {
            continue;
        }
        let mut bound: Vec<(&str, &str)> = Vec::new();
        let ok = pats.iter().zip(&vals).all(|(p, v)| {
            if vars.iter().any(|x| x == p) {
                match bound.iter().find(|(x, _)| x == p) {
                    Some((_, w)) => w == v,
                    None => {
                        bound.push((p, v));
                        true
                    }
                }
            } else {
                arg_matches(p, v)
            }
        });
        if ok {
            let (xs, vs): (Vec<&str>, Vec<&str>) = bound.into_iter().unzip();
            let n = trac_core::names::instantiate_name(name, &xs.join(", "), &vs.join(", "));
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
}

/// The derived atoms of a set of formulas and their state over one trace. Clone a fresh one
/// per trace (session).
#[derive(Clone, Debug, Default)]
pub struct DerivedAtoms {
    atoms: Vec<(String, Kind)>,
}

impl DerivedAtoms {
    /// The derived atoms among the atoms of `formulas` (each with its arena and the variable of
    /// its property's `forall`, if any: one, or several as a list `x, y`), deduplicated by
    /// name.
    ///
    /// A pattern or quantifier that mentions a `forall` variable is evaluated per value of it:
    /// `load(*, a)` holds as `load(*, a1)` when some `load(_, a1)` does; `exists p: ψ(p, a)`
    /// keeps the past states of ψ per value of `a` (seen where the property's labels give `a`
    /// values, so no later than the property's instance for that value is made) and adds the
    /// instantiated atom `exists p: ψ(p, a1)` where it holds; the name with `a` itself stands
    /// for the values not seen yet, as the property's template does.
    ///
    /// # Errors
    /// A quantifier whose body does not parse, nests another quantifier, or mentions several
    /// variables of the property's `forall` (not supported yet).
    pub fn new<'a>(
        formulas: impl IntoIterator<Item = (&'a Arena, Formula, Option<&'a str>)>,
    ) -> Result<DerivedAtoms, QuantifierError> {
        let mut atoms: Vec<(String, Kind)> = Vec::new();
        for (arena, f, forall) in formulas {
            let vars: Vec<&str> =
                forall.map_or(Vec::new(), |v| trac_core::names::split_list(v).collect());
            let names = crate::engine::parametric::slicing_names(arena, f);
            for s in arena.atoms(f) {
                let name = arena.sym_name(s);
                if let Some(k) = atoms.iter().position(|(n, _)| n == name) {
                    if let Kind::Exists(e) = &mut atoms[k].1 {
                        e.add_slicing(&names);
                    }
                    continue;
                }
                if let Some((var, body)) = trac_ltl::parser::split_exists(name) {
                    let mut e = Exists::new(var, body, &vars)?;
                    e.add_slicing(&names);
                    atoms.push((name.to_string(), Kind::Exists(Box::new(e))));
                } else if is_pattern_atom(name) {
                    let vars: Vec<String> = split_atom_name(name)
                        .map(|(_, args)| {
                            trac_core::names::split_list(args)
                                .filter(|a| vars.contains(a))
                                .map(String::from)
                                .collect()
                        })
                        .unwrap_or_default();
                    atoms.push((name.to_string(), Kind::Pattern(vars)));
                }
            }
        }
        Ok(DerivedAtoms { atoms })
    }

    /// True when no formula has a derived atom (then [`DerivedAtoms::extend`] does nothing).
    pub fn is_empty(&self) -> bool {
        self.atoms.is_empty()
    }

    /// The names of the derived atoms.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.atoms.iter().map(|(n, _)| n.as_str())
    }

    /// Reads one step: adds to `labels` every derived atom that holds at this step. Call it
    /// exactly once per step, in trace order (quantifiers keep state).
    pub fn extend(&mut self, labels: &mut LabelSet) {
        let mut add = Vec::new();
        // The parametric labels, split once for every quantifier.
        let split = if self.atoms.iter().any(|(_, k)| matches!(k, Kind::Exists(_))) {
            Split::new(labels)
        } else {
            Split::default()
        };
        for (name, kind) in &mut self.atoms {
            match kind {
                Kind::Pattern(vars) if vars.is_empty() => {
                    if ground_holds(name, labels) {
                        add.push(name.clone());
                    }
                }
                Kind::Pattern(vars) => pattern_instances(name, vars, labels, &mut add),
                Kind::Exists(e) => e.step(name, labels, &split, &mut add),
            }
        }
        for n in add {
            labels.insert(n);
        }
    }

    /// Every value evaluated on its own (no shared evaluations): the reference of the tests.
    #[cfg(test)]
    fn unshared(mut self) -> DerivedAtoms {
        for (_, k) in &mut self.atoms {
            if let Kind::Exists(e) = k {
                e.share = false;
            }
        }
        self
    }

    /// The variable of each quantifier, by atom name (for reports).
    pub fn quantifier_var(&self, name: &str) -> Option<&str> {
        self.atoms.iter().find_map(|(n, k)| match k {
            Kind::Exists(e) if n == name => Some(e.var.as_str()),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The derived atoms of `formula`, run over `steps` (each a list of labels): per step, the
    /// derived atoms that held.
    fn run(formula: &str, steps: &[&[&str]]) -> Vec<Vec<String>> {
        let mut arena = Arena::new();
        let f = trac_ltl::parse(&mut arena, formula).unwrap();
        let mut d = DerivedAtoms::new([(&arena, f, None)]).unwrap();
        steps
            .iter()
            .map(|s| {
                let mut l = LabelSet::new();
                for x in *s {
                    l.insert(x.to_string());
                }
                d.extend(&mut l);
                let mut held: Vec<String> = d
                    .names()
                    .filter(|n| l.contains(n))
                    .map(String::from)
                    .collect();
                held.sort();
                held
            })
            .collect()
    }

    #[test]
    fn patterns_match_globs_sets_and_arity() {
        let got = run(
            "G(call(update_*) | call(a|b) | load(*, a1))",
            &[
                &["call(update_flight)"],
                &["call(b)"],
                &["call(updat)", "load(p1, a2)"],
                &["load(p1, a1)"],
                &["load(a1)"],
            ],
        );
        assert_eq!(
            got,
            vec![
                vec!["call(update_*)".to_string()],
                vec!["call(a|b)".to_string()],
                vec![],
                vec!["load(*, a1)".to_string()],
                vec![],
            ]
        );
    }

    #[test]
    fn exists_keeps_one_past_state_per_value() {
        // a1 holds p1 (1), p1 and p6 (2), p6 only (3), nothing (4), p2 (5).
        let got = run(
            "G(exists p: !unloads(p, a1) S loads(p, a1))",
            &[
                &["loads(p1, a1)"],
                &["loads(p6, a1)"],
                &["unloads(p1, a1)"],
                &["unloads(p6, a1)", "unloads(p2, a2)"],
                &["loads(p2, a1)"],
                &["unloads(p2, a2)"],
            ],
        );
        let occ = "exists p: !unloads(p, a1) S loads(p, a1)".to_string();
        assert_eq!(
            got,
            vec![
                vec![occ.clone()],
                vec![occ.clone()],
                vec![occ.clone()],
                vec![],
                vec![occ.clone()],
                // unloading p2 from a2 does not take it out of a1.
                vec![occ],
            ]
        );
    }

    #[test]
    fn exists_counts_values_not_seen_yet() {
        // `H !bad(x)` holds for every value never seen: the template makes it true.
        let got = run("G(exists x: H !bad(x))", &[&["bad(a)"], &[]]);
        assert_eq!(got, vec![vec!["exists x: H!bad(x)".to_string()]; 2]);
        // `O ok(x)` needs a value seen: false before, true after.
        let got = run("G(exists x: O ok(x))", &[&[], &["ok(a)"], &[]]);
        let a = "exists x: O ok(x)".to_string();
        assert_eq!(got, vec![vec![], vec![a.clone()], vec![a]]);
    }

    /// Sharing the evaluation of values none of whose atoms hold changes no truth value: on
    /// random label sequences, the labels with the derived atoms (instantiated ones for each
    /// value of a `forall` variable included) equal those of evaluating every value alone.
    #[test]
    fn shared_evaluations_change_nothing() {
        const PLAIN: &str = "G((exists p: !unloads(p, a1) S loads(p, a1)) \
            | (exists x: H !bad(x, a1)) | (exists x: O ok(x)) \
            | (exists p: Y loads(p, a2) & !unloads(p, a1)) \
            | (exists p: (loads(p, a1) S unloads(p, a2)) | Y Y loads(p, a2)) \
            | (exists p: Z(ok(p) | drive) S bad(p, a2)))";
        // Under `forall a`: one set of past states per value of `a`, atoms with `a` but not
        // the quantifier's variable (`c(a)`), and atoms with neither (`drive`).
        const SLICED: &str = "G(c(a) -> ((exists p: !unloads(p, a) S loads(p, a)) \
            | (exists x: H !bad(x, a)) \
            | (exists p: Y loads(p, a) & !unloads(p, a1)) \
            | (exists p: (c(a) S unloads(p, a)) | Y Y loads(p, a)) \
            | (exists p: Z(ok(p) | drive) S bad(p, a))))";
        fn prop(steps: Vec<Vec<u8>>) -> bool {
            const LABELS: [&str; 18] = [
                "loads(p1, a1)",
                "loads(p2, a1)",
                "loads(p3, a2)",
                "loads(p2, a3)",
                "unloads(p1, a1)",
                "unloads(p2, a2)",
                "unloads(p3, a1)",
                "unloads(p2, a3)",
                "bad(p1, a1)",
                "bad(p2, a2)",
                "bad(p3, a3)",
                "ok(p3)",
                "ok(p1)",
                "drive",
                "loads(p4, a1)",
                "c(a1)",
                "c(a2)",
                "c(a3)",
            ];
            let mut arena = Arena::new();
            let f = trac_ltl::parse(&mut arena, PLAIN).unwrap();
            let g = trac_ltl::parse(&mut arena, SLICED).unwrap();
            let mut fast = DerivedAtoms::new([(&arena, f, None), (&arena, g, Some("a"))]).unwrap();
            let mut slow = fast.clone().unshared();
            steps.iter().all(|step| {
                let mut a = LabelSet::new();
                for &k in step {
                    a.insert(LABELS[usize::from(k) % LABELS.len()].to_string());
                }
                let mut b = a.clone();
                fast.extend(&mut a);
                slow.extend(&mut b);
                let mut a: Vec<&str> = a.iter().collect();
                let mut b: Vec<&str> = b.iter().collect();
                a.sort_unstable();
                b.sort_unstable();
                a == b
            })
        }
        quickcheck::QuickCheck::new()
            .tests(500)
            .quickcheck(prop as fn(Vec<Vec<u8>>) -> bool);
    }

    #[test]
    fn exists_over_the_forall_variable_keeps_one_slice_per_value() {
        let mut arena = Arena::new();
        let f = trac_ltl::parse(&mut arena, "G(c(a) -> (exists p: O load(p, a)))").unwrap();
        let mut d = DerivedAtoms::new([(&arena, f, Some("a"))]).unwrap();
        let mut held = Vec::new();
        for step in [&["load(p1, a1)"][..], &["c(a2)"], &["load(p2, a2)"]] {
            let mut l: LabelSet = step.iter().copied().collect();
            d.extend(&mut l);
            let mut h: Vec<String> = l
                .iter()
                .filter(|x| x.starts_with("exists"))
                .map(String::from)
                .collect();
            h.sort();
            held.push(h);
        }
        let a1 = "exists p: O load(p, a1)".to_string();
        let a2 = "exists p: O load(p, a2)".to_string();
        // The name with `a` (values not seen yet) never holds: nothing was loaded there.
        assert_eq!(held, vec![vec![a1.clone()], vec![a1.clone()], vec![a1, a2]]);
        // Two forall variables in one body: refused.
        let f = trac_ltl::parse(&mut arena, "G(exists p: O load(p, a, b))").unwrap();
        let e = DerivedAtoms::new([(&arena, f, Some("a, b"))]).unwrap_err();
        assert!(e.to_string().contains("mentions 2 variables"), "{e}");
        // Nesting stays refused.
        let f = trac_ltl::parse(&mut arena, "G(exists p: O(load(p) & (exists q: O u(q))))");
        if let Ok(f) = f {
            assert!(DerivedAtoms::new([(&arena, f, None)]).is_err());
        }
    }
}
