//! Exports of monitor tables: Graphviz DOT and HOA v1.

use std::collections::BTreeMap;
use std::fmt::Write;
use trac_runtime::table::{Table, SATISFIED, VIOLATED};

fn verdict_name(state: u32) -> &'static str {
    match state {
        VIOLATED => "violated",
        SATISFIED => "satisfied",
        _ => "pending",
    }
}

/// The transitions of `state` grouped by target: per target the list of path conjunctions.
fn grouped<S: AsRef<[u32]>, T: AsRef<str>>(
    table: &Table<S, T>,
    state: u32,
) -> BTreeMap<u32, Vec<Vec<(u32, bool)>>> {
    let mut by_target: BTreeMap<u32, Vec<Vec<(u32, bool)>>> = BTreeMap::new();
    for (path, t) in table.paths(state) {
        by_target.entry(t).or_default().push(path);
    }
    by_target
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
    let _ = writeln!(
        out,
        "  label=\"{}\";",
        dot_escape(&format!("{} ({:?})", table.formula(), table.semantics()))
    );
    let _ = writeln!(out, "  node [shape=box, style=rounded];");
    let _ = writeln!(out, "  init [shape=point];");
    let _ = writeln!(out, "  init -> s{};", table.initial());
    let name = |i: u32| table.prop_name(i as usize).to_string();
    for s in 0..table.state_count() as u32 {
        let (mark, color) = match s {
            VIOLATED => ("⊥", "red"),
            SATISFIED => ("⊤", "darkgreen"),
            _ => ("?", "black"),
        };
        let label = format!("{s}: {}\n{mark} {}", table.residual(s), verdict_name(s));
        let _ = writeln!(
            out,
            "  s{s} [label=\"{}\", color={color}];",
            dot_escape(&label)
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
            let _ = writeln!(out, "  s{s} -> s{t} [label=\"{}\"];", dot_escape(&g));
        }
    }
    let _ = writeln!(out, "}}");
    out
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
