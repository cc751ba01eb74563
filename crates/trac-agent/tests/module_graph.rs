//! No import circle between the modules of the agent and LLM crates (trac-agent, trac-llm,
//! trac-embed): the graph whose edges are a module's paths into another module of its crate
//! (`crate::a::b`, `super::x`, `child::Item` in a `use` or the code, and so a parent's
//! `pub use child::...`) is a DAG.
//! Unit-test modules (`#[cfg(test)] mod tests` at the end of a file) are left out. The check
//! reads the sources as text, so it can move to xtask as is to cover every crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path (`""` for the crate root, `a::b`) → its source (unit tests cut off).
fn modules(src: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            if parts.first().is_some_and(|p| p == "bin") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let text = match text.find("#[cfg(test)]\nmod tests") {
                Some(i) => text[..i].to_string(),
                None => text,
            };
            let code: String = text
                .lines()
                .map(|l| l.split("//").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n");
            out.insert(parts.join("::"), code);
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths of a `use` tree or path starting at `s` (after `crate::`): `a::b`, `a::{b, c::d}`.
fn paths(s: &str) -> Vec<Vec<String>> {
    let s = s.trim_start();
    if let Some(rest) = s.strip_prefix('{') {
        let mut depth = 1;
        let mut end = 0;
        for (i, c) in rest.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                end = i;
                break;
            }
        }
        let inner = &rest[..end];
        let mut items = Vec::new();
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(&inner[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        items.push(&inner[start..]);
        return items
            .into_iter()
            .filter(|i| !i.trim().is_empty())
            .flat_map(paths)
            .collect();
    }
    let mut head = Vec::new();
    let mut rest = s;
    loop {
        let n = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        if n == 0 {
            break;
        }
        head.push(rest[..n].to_string());
        rest = &rest[n..];
        match rest.strip_prefix("::") {
            Some(r) if r.starts_with('{') => {
                return paths(r)
                    .into_iter()
                    .map(|tail| head.iter().cloned().chain(tail).collect())
                    .collect();
            }
            Some(r) => rest = r,
            None => break,
        }
    }
    vec![head]
}

/// The module of `names` that `path` (from the crate root) lands in: its longest module prefix.
fn target(names: &BTreeSet<String>, path: &[String]) -> String {
    (1..=path.len())
        .rev()
        .map(|k| path[..k].join("::"))
        .find(|t| names.contains(t))
        .unwrap_or_default()
}

fn edges(mods: &BTreeMap<String, String>) -> BTreeSet<(String, String)> {
    let names: BTreeSet<String> = mods.keys().cloned().collect();
    let mut out = BTreeSet::new();
    for (m, code) in mods {
        let segs: Vec<String> = if m.is_empty() {
            Vec::new()
        } else {
            m.split("::").map(str::to_string).collect()
        };
        let child = |name: &str| segs.iter().cloned().chain([name.to_string()]).collect();
        let mut add = |t: String| {
            let inside = !t.is_empty() && (m == &t || m.starts_with(&format!("{t}::")));
            if t != *m && !inside && !(t.is_empty() && m.is_empty()) {
                out.insert((m.clone(), t));
            }
        };
        for (i, _) in code.match_indices("crate::") {
            if i > 0 && code[..i].ends_with(|c: char| is_ident(c) || c == '$') {
                continue;
            }
            for p in paths(&code[i + "crate::".len()..]) {
                if p != ["self"] {
                    add(target(&names, &p));
                }
            }
        }
        for (i, _) in code.match_indices("super::") {
            let p = paths(&code[i + "super::".len()..]);
            let base: Vec<String> = segs[..segs.len().saturating_sub(1)].to_vec();
            for p in p {
                add(target(
                    &names,
                    &base.iter().cloned().chain(p).collect::<Vec<_>>(),
                ));
            }
        }
        // A path through a child module (`child::Item`, in a `use`, a `pub use` or the code).
        for (i, _) in code.match_indices("::") {
            let before = &code[..i];
            let start = before.rfind(|c: char| !is_ident(c)).map_or(0, |j| j + 1);
            let name = &before[start..];
            if name.is_empty() || before[..start].ends_with("::") {
                continue;
            }
            let c: Vec<String> = child(name);
            if names.contains(&c.join("::")) {
                add(c.join("::"));
            }
        }
    }
    out
}

/// A cycle of the graph, if there is one (depth-first search).
fn cycle(edges: &BTreeSet<(String, String)>) -> Option<Vec<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges {
        next.entry(a).or_default().push(b);
    }
    fn visit<'a>(
        v: &'a str,
        next: &BTreeMap<&'a str, Vec<&'a str>>,
        state: &mut BTreeMap<&'a str, u8>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        state.insert(v, 1);
        path.push(v);
        for &w in next.get(v).into_iter().flatten() {
            match state.get(w) {
                Some(1) => {
                    let from = path.iter().position(|&p| p == w).unwrap();
                    return Some(path[from..].iter().map(|s| s.to_string()).collect());
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(w, next, state, path) {
                        return Some(c);
                    }
                }
            }
        }
        path.pop();
        state.insert(v, 2);
        None
    }
    let mut state = BTreeMap::new();
    for &v in next.keys() {
        if !state.contains_key(v) {
            if let Some(c) = visit(v, &next, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(name)
        .join("src")
}

#[test]
fn the_module_graph_of_each_crate_is_a_dag() {
    for name in ["trac-agent", "trac-llm", "trac-embed"] {
        let mods = modules(&crate_src(name));
        assert!(mods.len() > 2, "{name}: no modules read");
        let e = edges(&mods);
        if let Some(c) = cycle(&e) {
            let shown: Vec<&str> = c
                .iter()
                .map(|m| if m.is_empty() { "<crate root>" } else { m })
                .collect();
            panic!("{name}: import circle {} -> (back)", shown.join(" -> "));
        }
    }
}

#[test]
fn a_circle_is_found() {
    let mods: BTreeMap<String, String> = [
        ("", "pub mod a;\npub mod b;\n"),
        ("a", "use crate::b::Thing;\n"),
        ("b", "use crate::{a::Other, c};\n"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let c = cycle(&edges(&mods)).expect("a and b import each other");
    assert_eq!(c, ["a", "b"]);
    // A parent's re-export is an edge to the child; a child using the root's re-export closes
    // a circle.
    let mods: BTreeMap<String, String> = [
        ("", "pub mod a;\npub mod b;\npub use a::Thing;\n"),
        ("a", "pub struct Thing;\n"),
        ("b", "use crate::Thing;\n"),
        ("c", "use super::b;\n"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(cycle(&edges(&mods)), None);
    let mut with_back = mods.clone();
    with_back.insert("a".into(), "use crate::b::X;\n".into());
    with_back.insert("b".into(), "use crate::Thing;\n".into());
    assert!(cycle(&edges(&with_back)).is_some());
}
