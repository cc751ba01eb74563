//! Trace slicing helpers shared by every engine (Chen & Roşu, "Parametric trace slicing and
//! monitoring", TACAS 2009): the [`Instantiate`] trait of monitors that can be copied for one
//! value of a quantified variable, and the [`conjunction`] of the verdicts of the values.

use crate::labels::LabelSet;
use crate::monitor::{Monitor, Verdict};
use crate::names::{split_atom_name, AtomName};

/// The base names `p` of the parametric propositions `p(var)` among `prop_names` (atom names
/// such as `take(x)`), sorted and without duplicates: the labels `p(v)` make `v` a value of
/// `var` (trace slicing). O(n log n) in the number of names.
pub fn parametric_bases<'a>(
    prop_names: impl IntoIterator<Item = &'a str>,
    var: &str,
) -> Vec<String> {
    let mut bases: Vec<String> = prop_names
        .into_iter()
        .map(AtomName::parse)
        .filter(|p| p.arg.as_deref() == Some(var))
        .map(|p| p.base)
        .collect();
    bases.sort();
    bases.dedup();
    bases
}

/// Pushes onto `fresh` every value `v` of a label `p(v)` of `labels` whose base `p` is in
/// `bases` ([`parametric_bases`]), not `seen` yet and not in `fresh` already: the values that
/// first appear at this step. Allocates only for such values. O(labels × (bases + fresh)).
pub fn new_values(
    labels: &LabelSet,
    bases: &[String],
    seen: impl Fn(&str) -> bool,
    fresh: &mut Vec<String>,
) {
    for label in labels.iter() {
        // `base(value)` without allocating: this runs for every label at every step.
        let Some((base, arg)) = split_atom_name(label) else {
            continue;
        };
        if bases.iter().any(|b| b == base) && !seen(arg) && !fresh.iter().any(|f| f == arg) {
            fresh.push(arg.to_string());
        }
    }
}

/// A monitor that can be copied, state included, for one value of a parametric variable.
pub trait Instantiate: Monitor + Clone {
    /// A copy of this monitor (state included) whose propositions `base(var)` become
    /// `base(value)`.
    fn instantiate(&self, var: &str, value: &str) -> Self;

    /// For a template: the LTL3 verdict of every value not seen yet (`seen(v)` tells whether
    /// `v` was seen). By default the template's own verdict; a compiled template with shadows
    /// (values written in the formula, see [`crate::table::TableMonitor::with_shadows`]) adds
    /// the verdicts of the shadows of values not seen yet.
    fn unseen_verdict(&self, seen: &dyn Fn(&str) -> bool) -> Verdict {
        let _ = seen;
        self.verdict()
    }

    /// For a template: the LTLf verdict of every value not seen yet (see
    /// [`Instantiate::unseen_verdict`]).
    fn unseen_ltlf(&self, seen: &dyn Fn(&str) -> bool) -> Verdict {
        let _ = seen;
        self.ltlf()
    }
}

/// The conjunction of LTL3 verdicts: ⊥ if one is ⊥, else ⊤ if all are ⊤ (also when there is
/// none), else ?.
pub fn conjunction(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
    let mut out = Verdict::Satisfied;
    for v in verdicts {
        match v {
            Verdict::Violated => return Verdict::Violated,
            Verdict::Pending => out = Verdict::Pending,
            Verdict::Satisfied => {}
        }
    }
    out
}

/// One argument of an atom, as trace slicing reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum SliceArg {
    /// The `k`-th quantified variable.
    Var(usize),
    /// A constant the label's argument must equal.
    Const(String),
    /// A pattern (`*`, `?`, alternatives `a|b`) the label's argument must match.
    Pattern(String),
}

/// An atom `base(args)` of a parametric formula that mentions a quantified variable.
#[derive(Clone, Debug, PartialEq, Eq)]
struct SliceAtom {
    base: String,
    args: Vec<SliceArg>,
}

impl SliceAtom {
    fn has_var(&self) -> bool {
        self.args.iter().any(|a| matches!(a, SliceArg::Var(_)))
    }
}

/// How the labels of a step give values to the variables of `forall x1, ..., xn: φ` (trace
/// slicing; Chen & Roşu, TACAS 2009): a label `base(v1, ..., vm)` gives `vi` to `xk` when `φ`
/// has an atom `base(a1, ..., am)` (same base, same number of arguments) whose `i`-th argument
/// is `xk` and whose other arguments match the label's (a constant equal, a pattern matching,
/// a variable given twice the same value).
///
/// The variables are those of the property as a list joined by `, ` (see
/// [`crate::names::split_list`]); the atoms are the formula's atom names (and, for an `exists`
/// atom whose body mentions a variable, the body's atoms with the quantifier's own variable
/// written `*`). Building is O(atoms × arguments); [`Slicing::bindings`] is O(atoms ×
/// arguments) per label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slicing {
    vars: Vec<String>,
    atoms: Vec<SliceAtom>,
    /// Some comparison `x = y` has two different variables (see [`Slicing::is_joint`]).
    compares_vars: bool,
}

fn pattern_arg(a: &str) -> bool {
    a.contains(['*', '?', '|'])
}

fn arg_matches(pattern: &str, value: &str) -> bool {
    pattern
        .split('|')
        .any(|alt| crate::names::glob_match(alt, value))
}

impl Slicing {
    /// The slicing of `forall var: φ` where `prop_names` are the atom names of `φ`.
    pub fn new<'a>(prop_names: impl IntoIterator<Item = &'a str>, var: &str) -> Slicing {
        let vars: Vec<String> = crate::names::split_list(var).map(String::from).collect();
        let mut atoms = Vec::new();
        let mut compares_vars = false;
        for name in prop_names {
            let Some((base, args)) = split_atom_name(name) else {
                continue;
            };
            if let Some((l, r)) = crate::names::comparison_sides(name) {
                // A comparison binds nothing: no label has its base.
                let is_var = |x: &str| vars.iter().any(|v| v == x);
                compares_vars |= l != r && is_var(l) && is_var(r);
                continue;
            }
            let args: Vec<SliceArg> = crate::names::split_list(args)
                .map(|a| match vars.iter().position(|v| v == a) {
                    Some(k) => SliceArg::Var(k),
                    None if pattern_arg(a) => SliceArg::Pattern(a.to_string()),
                    None => SliceArg::Const(a.to_string()),
                })
                .collect();
            // Atoms without a variable are kept for [`Slicing::may_merge`].
            let atom = SliceAtom {
                base: base.to_string(),
                args,
            };
            if !atoms.contains(&atom) {
                atoms.push(atom);
            }
        }
        Slicing {
            vars,
            atoms,
            compares_vars,
        }
    }

    /// The quantified variables, in order.
    pub fn vars(&self) -> &[String] {
        &self.vars
    }

    /// True when every atom that mentions a variable mentions all of them (`load(p, a)`,
    /// `unload(p, a)` in `forall p, a: ...`). Then a tuple whose values never occurred together
    /// in one label has all its atoms false at every step so far, exactly like the template
    /// (every value not seen yet): only the tuples of the labels need instances. Not when a
    /// comparison has two variables (`p != a`): a tuple of values seen apart (`v, v`) decides
    /// it otherwise than the template does, so it needs an instance.
    pub fn is_joint(&self) -> bool {
        let all_vars =
            |a: &SliceAtom| (0..self.vars.len()).all(|k| a.args.contains(&SliceArg::Var(k)));
        !self.compares_vars && self.atoms.iter().filter(|a| a.has_var()).all(all_vars)
    }

    /// True when some value tuple makes two atoms one when instantiated, as far as a
    /// position-wise check tells: a variable and a constant, or two different variables, at
    /// the same argument of the same base and arity (`go(room)` and `go(hall)`: `room :=
    /// hall`; `p(x)` and `p(y)`: `x = y`). A compiled table renamed for such a tuple stays
    /// sound but may not be complete.
    pub fn may_merge(&self) -> bool {
        for (i, a) in self.atoms.iter().enumerate() {
            for b in &self.atoms[i..] {
                if a.base != b.base || a.args.len() != b.args.len() {
                    continue;
                }
                for (x, y) in a.args.iter().zip(&b.args) {
                    match (x, y) {
                        (SliceArg::Var(k), SliceArg::Var(l)) if k != l => return true,
                        (SliceArg::Var(_), SliceArg::Const(_))
                        | (SliceArg::Const(_), SliceArg::Var(_)) => return true,
                        _ => {}
                    }
                }
            }
        }
        false
    }

    /// For one variable (index `k`): the constants written at the places where it occurs
    /// (same base, arity and argument), sorted, without duplicates: the values whose
    /// instances merge two atoms (`hallway` for `go(room)` beside `go(hallway)`).
    pub fn constants_beside(&self, k: usize) -> Vec<String> {
        let mut out = Vec::new();
        for a in &self.atoms {
            for (i, x) in a.args.iter().enumerate() {
                if *x != SliceArg::Var(k) {
                    continue;
                }
                for b in &self.atoms {
                    if b.base == a.base && b.args.len() == a.args.len() {
                        if let SliceArg::Const(c) = &b.args[i] {
                            out.push(c.clone());
                        }
                    }
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// Calls `f` with the binding (per variable, its value or `None`) of every atom that the
    /// label `label` matches. O(atoms × arguments); allocates nothing for up to 4 variables.
    pub fn bindings<'l>(&self, label: &'l str, mut f: impl FnMut(&[Option<&'l str>])) {
        let Some((base, args)) = split_atom_name(label) else {
            return;
        };
        let n = self.vars.len();
        let mut small: [Option<&'l str>; 4] = [None; 4];
        let mut big: Vec<Option<&'l str>> = Vec::new();
        for a in &self.atoms {
            if a.base != base || !a.has_var() {
                continue;
            }
            let binding: &mut [Option<&'l str>] = if n <= small.len() {
                &mut small[..n]
            } else {
                big.clear();
                big.resize(n, None);
                &mut big
            };
            binding.fill(None);
            let mut vals = crate::names::split_list(args);
            let mut ok = true;
            for x in &a.args {
                let Some(v) = vals.next() else {
                    ok = false;
                    break;
                };
                ok = match x {
                    SliceArg::Const(c) => c == v,
                    SliceArg::Pattern(p) => arg_matches(p, v),
                    SliceArg::Var(k) => match binding[*k] {
                        Some(w) => w == v,
                        None => {
                            binding[*k] = Some(v);
                            true
                        }
                    },
                };
                if !ok {
                    break;
                }
            }
            if ok && vals.next().is_none() {
                f(binding);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(s: &Slicing, label: &str) -> Vec<Vec<Option<String>>> {
        let mut out = Vec::new();
        s.bindings(label, |b| {
            out.push(b.iter().map(|v| v.map(String::from)).collect());
        });
        out
    }

    #[test]
    fn labels_bind_variables_by_position() {
        let s = Slicing::new(["load(p, a1)", "unload(p, a1)", "call(tool)", "look"], "p");
        assert_eq!(
            all(&s, "load(package1, a1)"),
            vec![vec![Some("package1".into())]]
        );
        assert!(
            all(&s, "load(package1, a2)").is_empty(),
            "the constant differs"
        );
        assert!(all(&s, "load(package1)").is_empty(), "arity");
        assert!(all(&s, "look").is_empty());
        assert!(s.is_joint() && !s.may_merge());
        let s = Slicing::new(
            ["call(tool)", "modify(rid)", "edit(tool, rid)"],
            "tool, rid",
        );
        assert_eq!(all(&s, "call(f)"), vec![vec![Some("f".into()), None]]);
        assert_eq!(
            all(&s, "edit(f, R1)"),
            vec![vec![Some("f".into()), Some("R1".into())]]
        );
        assert!(!s.is_joint());
        // A variable twice must take one value; a pattern must match.
        let s = Slicing::new(["same(x, x)", "in(*, x)", "up(upd_*, x)"], "x");
        assert!(all(&s, "same(a, b)").is_empty());
        assert_eq!(all(&s, "same(a, a)").len(), 1);
        assert_eq!(all(&s, "in(q, a)").len(), 1);
        assert!(all(&s, "up(del, a)").is_empty());
        assert_eq!(all(&s, "up(upd_x, a)").len(), 1);
    }

    #[test]
    fn merges_are_found_per_position() {
        assert!(Slicing::new(["p(x)", "p(y)"], "x, y").may_merge());
        assert!(Slicing::new(["go(room)", "go(hall)"], "room").may_merge());
        assert_eq!(
            Slicing::new(["go(room)", "go(hall)", "go(*)"], "room").constants_beside(0),
            ["hall"]
        );
        // A constant at another position merges nothing.
        let s = Slicing::new(["load(p, a1)", "unload(p, a1)"], "p");
        assert!(!s.may_merge() && s.constants_beside(0).is_empty());
        assert!(!Slicing::new(["load(p, a)", "unload(p, a)"], "p, a").may_merge());
    }
}
