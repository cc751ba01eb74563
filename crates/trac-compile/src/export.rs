//! Exports of monitor tables: Graphviz DOT and HOA v1.

use crate::dd::{Dd, Ref};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write;
use trac_core::table::{Table, LEAF, SATISFIED, VIOLATED};

fn verdict_name(state: u32) -> &'static str {
    match state {
        VIOLATED => "violated",
        SATISFIED => "satisfied",
        _ => "pending",
    }
}

/// The transitions of `state` grouped by target: per target, the guard as a list of
/// conjunctions (the paths to `true` of the reduced diagram of "the transition goes to this
/// target", so tests that do not matter for this target disappear).
fn grouped<S: AsRef<[u32]>, T: AsRef<str>>(
    table: &Table<S, T>,
    state: u32,
) -> BTreeMap<u32, Vec<Vec<(u32, bool)>>> {
    let targets: BTreeSet<u32> = table.paths(state).into_iter().map(|(_, t)| t).collect();
    let nodes = table.parts().nodes.as_ref();
    let mut out = BTreeMap::new();
    for t in targets {
        let mut dd = Dd::default();
        let mut memo = HashMap::new();
        let r = indicator(&mut dd, nodes, table.root(state), t, &mut memo);
        let mut paths = Vec::new();
        collect_paths(&dd, r, &mut Vec::new(), &mut paths);
        out.insert(t, paths);
    }
    out
}

/// The reduced diagram (leaves 1 / 0) of "reference `r` leads to state `target`".
fn indicator(dd: &mut Dd, nodes: &[u32], r: u32, target: u32, memo: &mut HashMap<u32, Ref>) -> Ref {
    if r & LEAF != 0 {
        return Dd::leaf(u32::from(r & !LEAF == target));
    }
    if let Some(&x) = memo.get(&r) {
        return x;
    }
    let i = 3 * r as usize;
    let lo = indicator(dd, nodes, nodes[i + 1], target, memo);
    let hi = indicator(dd, nodes, nodes[i + 2], target, memo);
    let x = dd.mk(nodes[i], lo, hi);
    memo.insert(r, x);
    x
}

fn collect_paths(dd: &Dd, r: Ref, path: &mut Vec<(u32, bool)>, out: &mut Vec<Vec<(u32, bool)>>) {
    if Dd::is_leaf(r) {
        if Dd::payload(r) == 1 {
            out.push(path.clone());
        }
        return;
    }
    let (v, lo, hi) = dd.node(r);
    path.push((v, false));
    collect_paths(dd, lo, path, out);
    path.pop();
    path.push((v, true));
    collect_paths(dd, hi, path, out);
    path.pop();
}

fn guard(
    paths: &[Vec<(u32, bool)>],
    lit: &dyn Fn(u32, bool) -> String,
    and: &str,
    or: &str,
    t: &str,
) -> String {
    if paths.iter().any(|p| p.is_empty()) {
        return t.to_string();
    }
    let terms: Vec<String> = paths
        .iter()
        .map(|p| {
            p.iter()
                .map(|&(v, b)| lit(v, b))
                .collect::<Vec<_>>()
                .join(and)
        })
        .collect();
    if terms.len() == 1 {
        terms[0].clone()
    } else {
        terms
            .iter()
            .map(|t| {
                if t.contains(and) {
                    format!("({t})")
                } else {
                    t.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(or)
    }
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The main automaton as a Graphviz digraph: one box per state labelled with its id, its
/// representative residual and its verdict (⊥ red, ⊤ green), one edge per target labelled with
/// the guard (a disjunction of the decision-diagram paths, in Spot syntax). O(size of the table).
pub fn dot<S: AsRef<[u32]>, T: AsRef<str>>(table: &Table<S, T>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph monitor {{");
    let _ = writeln!(out, "  rankdir=LR;");
    let _ = writeln!(out, "  label=\"{}\";", dot_escape(&dot_title(table)));
    let _ = writeln!(out, "  node [shape=box, style=rounded];");
    dot_graph(&mut out, table, "", "  ");
    let _ = writeln!(out, "}}");
    out
}

/// Several automata as one Graphviz document (`dot` accepts one graph per document; several
/// `digraph`s one after another are not one drawing): one `digraph monitors` with a
/// `subgraph cluster_I` per `(name, table)`, `I` its 0-based index, labelled `name: formula
/// (semantics)`, its node ids prefixed `mI_` so the automata stay apart. Each cluster holds
/// what [`dot`] draws for its table. O(total size of the tables).
pub fn dot_clusters<'a, S, T>(
    tables: impl IntoIterator<Item = (&'a str, &'a Table<S, T>)>,
) -> String
where
    S: AsRef<[u32]> + 'a,
    T: AsRef<str> + 'a,
{
    let mut out = String::new();
    let _ = writeln!(out, "digraph monitors {{");
    let _ = writeln!(out, "  rankdir=LR;");
    let _ = writeln!(out, "  node [shape=box, style=rounded];");
    for (i, (name, table)) in tables.into_iter().enumerate() {
        let _ = writeln!(out, "  subgraph cluster_{i} {{");
        let title = format!("{name}: {}", dot_title(table));
        let _ = writeln!(out, "    label=\"{}\";", dot_escape(&title));
        dot_graph(&mut out, table, &format!("m{i}_"), "    ");
        let _ = writeln!(out, "  }}");
    }
    let _ = writeln!(out, "}}");
    out
}

/// A table's graph title: its formula and semantics.
fn dot_title<S: AsRef<[u32]>, T: AsRef<str>>(table: &Table<S, T>) -> String {
    format!("{} ({:?})", table.formula(), table.semantics())
}

/// The statements of `table`'s automaton (initial arrow, states, edges), one per line indented
/// by `indent`, node ids prefixed by `prefix`.
fn dot_graph<S: AsRef<[u32]>, T: AsRef<str>>(
    out: &mut String,
    table: &Table<S, T>,
    prefix: &str,
    indent: &str,
) {
    let _ = writeln!(out, "{indent}{prefix}init [shape=point];");
    let _ = writeln!(out, "{indent}{prefix}init -> {prefix}s{};", table.initial());
    let name = |i: u32| table.prop_name(i as usize).to_string();
    for s in 0..table.state_count() as u32 {
        let (mark, color) = match s {
            VIOLATED => ("⊥", "red"),
            SATISFIED => ("⊤", "darkgreen"),
            _ => ("?", "black"),
        };
        let label = format!(
            "{s}: {}\\n{mark} {}",
            dot_escape(table.residual(s)),
            verdict_name(s)
        );
        let _ = writeln!(
            out,
            "{indent}{prefix}s{s} [label=\"{label}\", color={color}];"
        );
    }
    for s in 0..table.state_count() as u32 {
        for (t, paths) in grouped(table, s) {
            let lit = |v: u32, b: bool| {
                let n = quote_atom(&name(v));
                if b {
                    n
                } else {
                    format!("!{n}")
                }
            };
            let g = guard(&paths, &lit, " & ", " | ", "1");
            let _ = writeln!(
                out,
                "{indent}{prefix}s{s} -> {prefix}s{t} [label=\"{}\"];",
                dot_escape(&g)
            );
        }
    }
}

/// An atom name as Spot prints it: bare if it is a plain identifier, else double-quoted.
fn quote_atom(n: &str) -> String {
    let plain = n
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        n.to_string()
    } else {
        format!("\"{}\"", n.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

fn hoa_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The main automaton in the Hanoi Omega-Automata format v1 (Babiak et al., CAV 2015;
/// adl.github.io/hoaf): deterministic, complete, transition labels over the table's
/// propositions, acceptance `t` (every run), and the verdict in each state's name
/// (`"violated: false"`, `"pending: G(p -> X q)"`). O(size of the table).
pub fn hoa<S: AsRef<[u32]>, T: AsRef<str>>(table: &Table<S, T>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "HOA: v1");
    let _ = writeln!(
        out,
        "name: {}",
        hoa_string(&format!("monitor for {}", table.formula()))
    );
    let _ = writeln!(out, "States: {}", table.state_count());
    let _ = writeln!(out, "Start: {}", table.initial());
    let mut ap = format!("AP: {}", table.prop_count());
    for n in table.prop_names() {
        ap.push(' ');
        ap.push_str(&hoa_string(n));
    }
    let _ = writeln!(out, "{ap}");
    let _ = writeln!(out, "acc-name: all");
    let _ = writeln!(out, "Acceptance: 0 t");
    let _ = writeln!(
        out,
        "properties: trans-labels explicit-labels deterministic complete"
    );
    let _ = writeln!(out, "--BODY--");
    for s in 0..table.state_count() as u32 {
        let _ = writeln!(
            out,
            "State: {s} {}",
            hoa_string(&format!("{}: {}", verdict_name(s), table.residual(s)))
        );
        for (t, paths) in grouped(table, s) {
            let lit = |v: u32, b: bool| if b { v.to_string() } else { format!("!{v}") };
            let g = guard(&paths, &lit, " & ", " | ", "t");
            let _ = writeln!(out, "[{g}] {t}");
        }
    }
    let _ = writeln!(out, "--END--");
    out
}
