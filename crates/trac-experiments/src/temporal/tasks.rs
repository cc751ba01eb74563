//! The constraints of the study: the simple formula `F(A & X F B)`, the tree, and the five
//! Dwyer patterns of the paper's Table 2 (absence, existence, universality, precedence,
//! response; Dwyer, Avrunin & Corbett 1999), each with plans that satisfy or violate it and
//! three renderings (informal English, precise English, precise English with the LTL formula).

use super::gen::{simple_plan, tree_formula, tree_plan, Prop};
use fastrand::Rng;
use regex::Regex;
use std::collections::HashMap;
use std::sync::LazyLock;

/// A kind of constraint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// `G !A`: A never happens.
    Absence,
    /// `F A`: A happens.
    Existence,
    /// `G A`: A holds at every step.
    Universality,
    /// `(!B U A) | G !B`: B does not happen before A has.
    Precedence,
    /// `G(A -> F B)`: every A is followed by a B.
    Response,
    /// `F(A & X F B)`: A, then later B.
    Simple,
    /// The tree of branching 2 and this depth ([`tree_formula`]).
    Tree(usize),
}

/// How a constraint is told to the judge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rendering {
    /// Everyday English, as a person would write the rule.
    Informal,
    /// The formula read out in English (trac's renderer, `trac_ltl::english`).
    Precise,
    /// The precise English and the LTL formula with its propositions.
    PreciseLtl,
}

impl Rendering {
    /// The three, in order.
    pub const ALL: [Rendering; 3] = [
        Rendering::Informal,
        Rendering::Precise,
        Rendering::PreciseLtl,
    ];

    /// `informal`, `precise`, `precise+ltl`.
    pub fn name(self) -> &'static str {
        match self {
            Rendering::Informal => "informal",
            Rendering::Precise => "precise",
            Rendering::PreciseLtl => "precise+ltl",
        }
    }
}

/// Steps of the traces of the Dwyer patterns.
const PATTERN_STEPS: usize = 8;

impl Pattern {
    /// The patterns of the specification-language sweep: the five of Table 2, then the trees
    /// of depth 1 and 2.
    pub const LANGUAGE: [Pattern; 7] = [
        Pattern::Absence,
        Pattern::Existence,
        Pattern::Universality,
        Pattern::Precedence,
        Pattern::Response,
        Pattern::Tree(1),
        Pattern::Tree(2),
    ];

    /// `absence`, ..., `tree2`.
    pub fn name(self) -> String {
        match self {
            Pattern::Absence => "absence".into(),
            Pattern::Existence => "existence".into(),
            Pattern::Universality => "universality".into(),
            Pattern::Precedence => "precedence".into(),
            Pattern::Response => "response".into(),
            Pattern::Simple => "simple".into(),
            Pattern::Tree(d) => format!("tree{d}"),
        }
    }

    /// The number of propositions.
    pub fn props(self) -> usize {
        match self {
            Pattern::Absence | Pattern::Existence | Pattern::Universality => 1,
            Pattern::Precedence | Pattern::Response | Pattern::Simple => 2,
            Pattern::Tree(d) => (0..=d).map(|l| 1usize << l).sum::<usize>() + 1,
        }
    }

    /// The formula over `names` (the propositions' atoms, in order), Spot syntax. The paper's
    /// `X F` is written with the strong next `X[!] F`: the traces are finite and judged under
    /// LTLf, where trac reads a plain `X` as weak at the last step (so an A at the last step
    /// would satisfy `F(A & X F B)` with no B after it).
    pub fn formula(self, names: &[String]) -> String {
        let (a, b) = (&names[0], names.get(1).unwrap_or(&names[0]));
        match self {
            Pattern::Absence => format!("G !{a}"),
            Pattern::Existence => format!("F {a}"),
            Pattern::Universality => format!("G {a}"),
            Pattern::Precedence => format!("(!{b} U {a}) | G !{b}"),
            Pattern::Response => format!("G({a} -> F {b})"),
            Pattern::Simple => format!("F({a} & X[!] F {b})"),
            Pattern::Tree(d) => {
                static NODE: LazyLock<Regex> =
                    LazyLock::new(|| Regex::new(r"\b(n\d+|sink)\b").expect("a valid regex"));
                let (f, tree_names) = tree_formula(2, d);
                NODE.replace_all(&f, |c: &regex::Captures| {
                    let k = tree_names
                        .iter()
                        .position(|n| n == &c[1])
                        .expect("a tree node");
                    names[k].clone()
                })
                .replace("X F", "X[!] F")
            }
        }
    }

    /// A plan ([`super::gen`]) that satisfies the constraint or not; `gap`: the distance
    /// between the events of the simple formula and the tree.
    pub fn plan(self, rng: &mut Rng, gap: usize, satisfy: bool) -> Vec<Vec<usize>> {
        let n = PATTERN_STEPS;
        let mut plan = vec![Vec::new(); n];
        let at = rng.usize(..n);
        match (self, satisfy) {
            (Pattern::Simple, _) => return simple_plan(rng, gap, satisfy),
            (Pattern::Tree(d), _) => return tree_plan(rng, 2, d, gap, satisfy),
            (Pattern::Absence, true) | (Pattern::Existence, false) => {}
            (Pattern::Absence, false) | (Pattern::Existence, true) => plan[at].push(0),
            (Pattern::Universality, _) => {
                for (i, s) in plan.iter_mut().enumerate() {
                    if satisfy || i != at {
                        s.push(0);
                    }
                }
            }
            (Pattern::Precedence | Pattern::Response, _) => {
                // A at i and B at j: precedence holds iff i < j (or no B), response iff some B
                // comes after the A (or no A).
                let i = rng.usize(..n - 1);
                let j = rng.usize(i + 1..n);
                let (a, b) = if satisfy { (i, j) } else { (j, i) };
                plan[a].push(0);
                plan[b].push(1);
            }
        }
        plan
    }

    /// The constraint in everyday English (`nouns`: `a red oval`, ... in order).
    pub fn informal(self, nouns: &[String]) -> String {
        let (a, b) = (&nouns[0], nouns.get(1).unwrap_or(&nouns[0]));
        match self {
            Pattern::Absence => format!("You should never come across {a}."),
            Pattern::Existence => format!("At some point you should come across {a}."),
            Pattern::Universality => format!("{} should be around the whole time.", cap(a)),
            Pattern::Precedence => format!("Don't run into {b} before you have seen {a}."),
            Pattern::Response => {
                format!("Whenever {a} shows up, {b} has to show up at some later point.")
            }
            Pattern::Simple => format!("Spot {a}, and afterwards spot {b}."),
            Pattern::Tree(d) => format!("Spot {}.", tree_informal(0, 0, d, nouns)),
        }
    }

    /// The constraint as told with `rendering` (`props`: its propositions, in order).
    pub fn render(self, rendering: Rendering, props: &[Prop]) -> String {
        let names: Vec<String> = props.iter().map(Prop::name).collect();
        let nouns: Vec<String> = props.iter().map(Prop::noun).collect();
        if rendering == Rendering::Informal {
            return self.informal(&nouns);
        }
        let formula = self.formula(&names);
        let descriptions: HashMap<String, String> = names
            .iter()
            .zip(&nouns)
            .map(|(n, w)| (n.clone(), format!("{w} is observed")))
            .collect();
        let mut arena = trac_ltl::Arena::new();
        let f = trac_ltl::parser::parse(&mut arena, &formula).expect("the patterns parse");
        let precise = cap(&trac_ltl::english::render(&arena, f, &descriptions));
        if rendering == Rendering::Precise {
            return format!("{precise}.");
        }
        let legend: Vec<String> = names
            .iter()
            .zip(&nouns)
            .map(|(n, w)| format!("{n} means {w} is observed at the step"))
            .collect();
        format!(
            "{precise}.\nIn LTL: {formula}, where {}.",
            legend.join("; ")
        )
    }
}

fn cap(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The informal reading of the tree's node `i` at `level` (children `2i+1`, `2i+2`).
fn tree_informal(i: usize, level: usize, d: usize, nouns: &[String]) -> String {
    let sink = nouns.last().expect("the sink");
    if level == d {
        return format!("{} and later {sink}", nouns[i]);
    }
    format!(
        "{} and later either {} or {}",
        nouns[i],
        tree_informal(2 * i + 1, level + 1, d, nouns),
        tree_informal(2 * i + 2, level + 1, d, nouns)
    )
}
