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
//!   value is simpler and linear in the values).
//!
//! Not supported (reported by [`DerivedAtoms::new`]): a quantifier nested in another's body,
//! and a body mentioning the variable of the property's `forall` (the instance's value would
//! have to be substituted into the derived atom's name).

use crate::labels::LabelSet;
use std::collections::HashMap;
use trac_core::names::split_atom_name;
use trac_spec::formula::{Arena, Formula, Sym};
use trac_spec::progress::PastState;

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
    split_atom_name(name).is_some_and(|(_, args)| args.split(", ").any(is_pattern_arg))
}

/// True if some label matches the atom `name` (a pattern or a plain name).
fn ground_holds(name: &str, labels: &LabelSet) -> bool {
    if !is_pattern_atom(name) {
        return labels.contains(name);
    }
    let Some((base, args)) = split_atom_name(name) else {
        return false;
    };
    let pats: Vec<&str> = args.split(", ").collect();
    labels.iter().any(|l| {
        split_atom_name(l).is_some_and(|(b, a)| {
            b == base && {
                let vals: Vec<&str> = a.split(", ").collect();
                vals.len() == pats.len() && pats.iter().zip(&vals).all(|(p, v)| arg_matches(p, v))
            }
        })
    })
}

/// How an atom of a quantifier's body is read.
#[derive(Clone, Debug)]
enum BodyAtom {
    /// No occurrence of the variable: holds as a top-level atom would (name or pattern).
    Ground(String),
    /// `base(args)` where `None` marks the variable's positions and `Some` is a constant or
    /// pattern that the label's argument there must match.
    Param {
        base: String,
        args: Vec<Option<String>>,
    },
}

impl BodyAtom {
    /// For a label `base(args)` (`args` as written, `, `-separated): the value of the variable
    /// if the label matches this atom. Allocates nothing.
    fn value_of<'l>(&self, base: &str, args: &'l str) -> Option<&'l str> {
        let BodyAtom::Param {
            base: b,
            args: pats,
        } = self
        else {
            return None;
        };
        if b != base {
            return None;
        }
        let mut vals = args.split(", ");
        let mut value: Option<&str> = None;
        for a in pats {
            let v = vals.next()?;
            match a {
                Some(p) if is_pattern_arg(p) => {
                    if !arg_matches(p, v) {
                        return None;
                    }
                }
                Some(c) => {
                    if c != v {
                        return None;
                    }
                }
                None => match value {
                    Some(x) if x != v => return None,
                    _ => value = Some(v),
                },
            }
        }
        // As many arguments as the atom has.
        if vals.next().is_some() {
            return None;
        }
        value
    }
}

/// `exists var: body` with its per-value past states.
#[derive(Clone, Debug)]
struct Exists {
    var: String,
    arena: Arena,
    body: Formula,
    /// The body's atoms, indexed by symbol.
    atoms: Vec<(Sym, BodyAtom)>,
    template: PastState,
    values: Vec<(String, PastState)>,
    index: HashMap<String, usize>,
    /// Per body atom, the values (indices into `values`) it holds for at the current step.
    holds: Vec<Vec<usize>>,
    /// Per body atom without the variable, whether it holds at the current step.
    ground: Vec<bool>,
    /// Per value: some atom holds for it at the current step.
    touched: Vec<bool>,
    /// The current step's shared evaluations (see [`Exists::step`]); buffers kept.
    memo: Vec<Memo>,
    /// Scratch: a state's bits before its step.
    old: Vec<bool>,
    /// Whether untouched values share evaluations (off only in tests, as the reference).
    share: bool,
}

impl Exists {
    fn new(var: &str, body_src: &str) -> Result<Exists, String> {
        let mut arena = Arena::new();
        let body = trac_spec::parse(&mut arena, body_src).map_err(|e| e.message.clone())?;
        let mut atoms = Vec::new();
        for s in arena.atoms(body) {
            let name = arena.sym_name(s).to_string();
            if trac_spec::parser::split_exists(&name).is_some() {
                return Err(format!(
                    "`exists {var}: ...` has another `exists` in its body; nested quantifiers are not supported yet"
                ));
            }
            let kind = match split_atom_name(&name) {
                Some((base, args)) if args.split(", ").any(|a| a == var) => BodyAtom::Param {
                    base: base.to_string(),
                    args: args
                        .split(", ")
                        .map(|a| (a != var).then(|| a.to_string()))
                        .collect(),
                },
                _ => BodyAtom::Ground(name),
            };
            atoms.push((s, kind));
        }
        let template = PastState::new(&arena, body);
        Ok(Exists {
            var: var.to_string(),
            arena,
            body,
            atoms,
            template,
            values: Vec::new(),
            index: HashMap::new(),
            holds: Vec::new(),
            ground: Vec::new(),
            touched: Vec::new(),
            memo: Vec::new(),
            old: Vec::new(),
            share: true,
        })
    }

    /// Reads one step's labels; returns the quantified formula's truth at that step.
    /// Allocates only for a value seen for the first time.
    /// `split`: the parametric labels of `labels`, as `(base, arguments)`.
    fn step(&mut self, labels: &LabelSet, split: &[(&str, &str)]) -> bool {
        let n = self.atoms.len();
        // Which values (indices into `values`) make each variable atom hold at this step, and
        // which are new; buffers kept across steps.
        self.holds.resize_with(n, Vec::new);
        self.holds.iter_mut().for_each(Vec::clear);
        self.ground.clear();
        self.ground.extend(self.atoms.iter().map(|(_, a)| match a {
            BodyAtom::Ground(name) => ground_holds(name, labels),
            BodyAtom::Param { .. } => false,
        }));
        for &(base, args) in split {
            for (k, (_, a)) in self.atoms.iter().enumerate() {
                if let Some(v) = a.value_of(base, args) {
                    let id = match self.index.get(v) {
                        Some(&id) => id,
                        None => {
                            // A new value: its past equals the template's (none of its atoms
                            // held).
                            let id = self.values.len();
                            self.index.insert(v.to_string(), id);
                            self.values.push((v.to_string(), self.template.clone()));
                            id
                        }
                    };
                    self.holds[k].push(id);
                }
            }
        }
        let (atoms, holds, ground) = (&self.atoms, &self.holds, &self.ground);
        let eval = |value: Option<usize>, state: &mut PastState, arena: &Arena, body| {
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
        // A value none of whose atoms holds at this step reads the template's valuation, so
        // its next state and truth depend on its past bits alone: the values sharing bits
        // (most of them: never loaded, or unloaded since) share one evaluation, remembered in
        // `memo` (old bits, new bits, truth) for this step.
        self.touched.clear();
        self.touched.resize(self.values.len(), false);
        for &id in self.holds.iter().flatten() {
            self.touched[id] = true;
        }
        let mut used = 0;
        fn remember(
            memo: &mut Vec<Memo>,
            used: &mut usize,
            old: &[bool],
            new: &[bool],
            truth: bool,
        ) {
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
        self.old.clear();
        self.old.extend_from_slice(self.template.bits());
        let mut any = eval(None, &mut self.template, &self.arena, self.body);
        remember(
            &mut self.memo,
            &mut used,
            &self.old,
            self.template.bits(),
            any,
        );
        for (id, (_, state)) in self.values.iter_mut().enumerate() {
            // Every state steps, whatever the result.
            if self.share && !self.touched[id] {
                if let Some(m) = self.memo[..used].iter().find(|m| m.old == state.bits()) {
                    state.set_bits(&m.new);
                    any |= m.truth;
                    continue;
                }
                self.old.clear();
                self.old.extend_from_slice(state.bits());
                let truth = eval(Some(id), state, &self.arena, self.body);
                remember(&mut self.memo, &mut used, &self.old, state.bits(), truth);
                any |= truth;
            } else {
                any |= eval(Some(id), state, &self.arena, self.body);
            }
        }
        any
    }
}

/// One evaluation of a quantifier's body for values none of whose atoms hold at a step.
#[derive(Clone, Debug, Default)]
struct Memo {
    old: Vec<bool>,
    new: Vec<bool>,
    truth: bool,
}

#[derive(Clone, Debug)]
enum Kind {
    Pattern,
    Exists(Box<Exists>),
}

/// The derived atoms of a set of formulas and their state over one trace. Clone a fresh one
/// per trace (session).
#[derive(Clone, Debug, Default)]
pub struct DerivedAtoms {
    atoms: Vec<(String, Kind)>,
}

impl DerivedAtoms {
    /// The derived atoms among the atoms of `formulas` (each with its arena and the variable of
    /// its property's `forall`, if any), deduplicated by name.
    ///
    /// # Errors
    /// A quantifier whose body does not parse, nests another quantifier, or mentions the
    /// property's `forall` variable (not supported yet).
    pub fn new<'a>(
        formulas: impl IntoIterator<Item = (&'a Arena, Formula, Option<&'a str>)>,
    ) -> Result<DerivedAtoms, String> {
        let mut atoms: Vec<(String, Kind)> = Vec::new();
        for (arena, f, forall) in formulas {
            for s in arena.atoms(f) {
                let name = arena.sym_name(s);
                if atoms.iter().any(|(n, _)| n == name) {
                    continue;
                }
                if let Some((var, body)) = trac_spec::parser::split_exists(name) {
                    let e = Exists::new(var, body)?;
                    if let Some(fv) = forall.filter(|fv| *fv != var) {
                        let mentions = e.atoms.iter().any(|(s, _)| {
                            split_atom_name(e.arena.sym_name(*s))
                                .is_some_and(|(_, args)| args.split(", ").any(|a| a == fv))
                        });
                        if mentions {
                            return Err(format!(
                                "`{name}` mentions `{fv}`, the variable of the property's `forall`: a quantifier's body may use its own variable and constants only (not supported yet)"
                            ));
                        }
                    }
                    atoms.push((name.to_string(), Kind::Exists(Box::new(e))));
                } else if is_pattern_atom(name) {
                    atoms.push((name.to_string(), Kind::Pattern));
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
        let split: Vec<(&str, &str)> =
            if self.atoms.iter().any(|(_, k)| matches!(k, Kind::Exists(_))) {
                labels.iter().filter_map(split_atom_name).collect()
            } else {
                Vec::new()
            };
        for (name, kind) in &mut self.atoms {
            let holds = match kind {
                Kind::Pattern => ground_holds(name, labels),
                Kind::Exists(e) => e.step(labels, &split),
            };
            if holds {
                add.push(name.clone());
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
        let f = trac_spec::parse(&mut arena, formula).unwrap();
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
    /// random label sequences, the derived atoms equal those of evaluating every value alone.
    #[test]
    fn shared_evaluations_change_nothing() {
        const FORMULA: &str = "G((exists p: !unloads(p, a1) S loads(p, a1)) \
            | (exists x: H !bad(x)) | (exists x: O ok(x)) \
            | (exists p: Y loads(p, a2) & !unloads(p, a1)) \
            | (exists p: (loads(p, a1) S unloads(p, a2)) | Y Y loads(p, a2)) \
            | (exists p: Z(ok(p) | drive) S bad(p)))";
        fn prop(steps: Vec<Vec<u8>>) -> bool {
            const LABELS: [&str; 12] = [
                "loads(p1, a1)",
                "loads(p2, a1)",
                "loads(p3, a2)",
                "unloads(p1, a1)",
                "unloads(p2, a2)",
                "unloads(p3, a1)",
                "bad(p1)",
                "bad(p2)",
                "ok(p3)",
                "ok(p1)",
                "drive",
                "loads(p4, a1)",
            ];
            let mut arena = Arena::new();
            let f = trac_spec::parse(&mut arena, FORMULA).unwrap();
            let mut fast = DerivedAtoms::new([(&arena, f, None)]).unwrap();
            let mut slow = fast.clone().unshared();
            let names: Vec<String> = fast.names().map(String::from).collect();
            steps.iter().all(|step| {
                let mut a = LabelSet::new();
                for &k in step {
                    a.insert(LABELS[usize::from(k) % LABELS.len()].to_string());
                }
                let mut b = a.clone();
                fast.extend(&mut a);
                slow.extend(&mut b);
                names.iter().all(|n| a.contains(n) == b.contains(n))
            })
        }
        quickcheck::QuickCheck::new()
            .tests(500)
            .quickcheck(prop as fn(Vec<Vec<u8>>) -> bool);
    }

    #[test]
    fn exists_rejects_nesting_and_forall_variable() {
        let mut arena = Arena::new();
        let f = trac_spec::parse(&mut arena, "G(exists p: load(p, a))").unwrap();
        let e = DerivedAtoms::new([(&arena, f, Some("a"))]).unwrap_err();
        assert!(e.contains("variable of the property's `forall`"), "{e}");
        assert!(DerivedAtoms::new([(&arena, f, None)]).is_ok());
    }
}
