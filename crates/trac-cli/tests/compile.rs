//! `trac compile --emit dot` of a spec with several properties (issue 21): one valid Graphviz
//! document (one `digraph`, a `subgraph cluster_*` per property), or with `-o DIR` one file per
//! property. Checked structurally (no Graphviz needed) and, where `dot` is installed, by
//! `dot -Tsvg` giving one SVG document.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A spec with four properties.
const SPEC: &str = "examples/specs/textworld.ron";
const PROPERTIES: [&str; 4] = ["R1", "R2", "R3", "R4"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn trac(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trac-cli"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run trac")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("compile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A DOT document's statements as far as these tests need them.
#[derive(Debug, Default)]
struct Dot {
    /// Top-level graphs (`digraph NAME { ... }`), by name.
    graphs: Vec<String>,
    /// Subgraph names (`subgraph NAME {`).
    clusters: Vec<String>,
    /// Node ids declared (`ID [ ... ];`), with the subgraph they are declared in.
    nodes: Vec<(String, Option<String>)>,
    /// Edges `(from, to, subgraph)`.
    edges: Vec<(String, String, Option<String>)>,
}

/// Reads `src` as a DOT document, checking what `dot` itself would refuse or misread: text
/// outside the one graph, unbalanced braces or quotes. Statements are one per line, as
/// `trac_compile::export` writes them; quoted strings may hold braces and `->`.
fn parse_dot(src: &str) -> Dot {
    let mut d = Dot::default();
    let mut stack: Vec<Option<String>> = Vec::new();
    for (n, line) in src.lines().enumerate() {
        // The line without its quoted strings (escapes `\"` and `\\` honoured).
        let mut bare = String::new();
        let (mut quoted, mut escaped) = (false, false);
        for c in line.chars() {
            match (quoted, escaped, c) {
                (true, true, _) => escaped = false,
                (true, false, '\\') => escaped = true,
                (true, false, '"') => quoted = false,
                (true, false, _) => {}
                (false, _, '"') => {
                    quoted = true;
                    bare.push_str("\"\"");
                }
                (false, _, c) => bare.push(c),
            }
        }
        assert!(!quoted, "line {}: unterminated string: {line}", n + 1);
        let t = bare.trim();
        if t.is_empty() || t.starts_with("//") {
            continue;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        let cluster = stack.last().cloned().flatten();
        if t.ends_with('{') {
            match words.as_slice() {
                ["digraph", name, "{"] => {
                    assert!(stack.is_empty(), "line {}: a graph inside a graph", n + 1);
                    d.graphs.push(name.to_string());
                    stack.push(None);
                }
                ["subgraph", name, "{"] => {
                    assert!(
                        !stack.is_empty(),
                        "line {}: a subgraph outside a graph",
                        n + 1
                    );
                    d.clusters.push(name.to_string());
                    stack.push(Some(name.to_string()));
                }
                _ => panic!("line {}: unexpected block {line}", n + 1),
            }
            continue;
        }
        if t == "}" {
            assert!(stack.pop().is_some(), "line {}: unbalanced }}", n + 1);
            continue;
        }
        assert!(
            !stack.is_empty(),
            "line {}: a statement outside the graph: {line}",
            n + 1
        );
        assert!(t.ends_with(';'), "line {}: {line}", n + 1);
        if let ["node" | "edge" | "graph", ..] = words.as_slice() {
            continue;
        }
        if words.len() > 2 && words[1] == "->" {
            let to = words[2].trim_end_matches(';');
            d.edges
                .push((words[0].to_string(), to.to_string(), cluster));
        } else if !words[0].contains('=') {
            d.nodes
                .push((words[0].trim_end_matches(';').to_string(), cluster));
        }
    }
    assert!(stack.is_empty(), "unclosed braces");
    d
}

/// Checks that `d` is one graph whose every edge joins nodes declared in its own subgraph and
/// whose node ids are unique.
fn check_one_graph(d: &Dot, clusters: usize) {
    assert_eq!(d.graphs.len(), 1, "one graph per document: {:?}", d.graphs);
    assert_eq!(d.clusters.len(), clusters, "{:?}", d.clusters);
    assert!(d.clusters.iter().all(|c| c.starts_with("cluster_")));
    let ids: HashSet<&str> = d.nodes.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(ids.len(), d.nodes.len(), "a node id declared twice");
    for (from, to, cluster) in &d.edges {
        for end in [from, to] {
            let declared = d.nodes.iter().find(|(n, _)| n == end);
            assert!(
                declared.is_some(),
                "edge {from} -> {to}: {end} is not declared"
            );
            assert_eq!(
                &declared.unwrap().1,
                cluster,
                "edge {from} -> {to} leaves its cluster"
            );
        }
    }
}

/// `dot -Tsvg` of `src` (the tests calling it are ignored where the build found no Graphviz:
/// `cfg(no_dot)`, build/needs.rs; CI installs it with .ci/install-report).
fn dot_svg(src: &str) -> String {
    let mut child = Command::new(std::env::var("TRAC_DOT").unwrap_or_else(|_| "dot".into()))
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("Graphviz's dot runs (apt-get install graphviz)");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), src.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "dot -Tsvg failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn emit_dot_of_a_spec_is_one_graph_with_a_cluster_per_property() {
    let o = trac(&["compile", "--spec", SPEC, "--emit", "dot"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let src = String::from_utf8(o.stdout).unwrap();
    let d = parse_dot(&src);
    check_one_graph(&d, PROPERTIES.len());
    for id in PROPERTIES {
        assert!(
            src.contains(&format!("label=\"{id}: ")),
            "{id} names its cluster"
        );
    }
    // Every state of every monitor is drawn: as many nodes as the tables have states (one
    // residual each), plus each table's initial point.
    let o = trac(&["compile", "--spec", SPEC, "--emit", "json"]);
    let tables: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let states: usize = PROPERTIES
        .iter()
        .map(|id| tables[id]["residuals"].as_array().expect("residuals").len())
        .sum();
    assert_eq!(d.nodes.len(), states + PROPERTIES.len());
}

#[test]
#[cfg_attr(no_dot, ignore = "needs Graphviz's dot (apt-get install graphviz)")]
fn emit_dot_of_a_spec_and_of_each_property_renders_as_one_svg_with_graphviz() {
    let o = trac(&["compile", "--spec", SPEC, "--emit", "dot"]);
    assert_eq!(o.status.code(), Some(0));
    let svg = dot_svg(&String::from_utf8(o.stdout).unwrap());
    // One SVG document (several digraphs give several, one after another), with a cluster per
    // property.
    assert_eq!(svg.matches("<svg").count(), 1, "{svg}");
    assert_eq!(svg.matches("class=\"cluster\"").count(), PROPERTIES.len());
    let dir = temp_dir("dot-svg");
    let o = trac(&[
        "compile",
        "--spec",
        SPEC,
        "--emit",
        "dot",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    for id in PROPERTIES {
        let src = std::fs::read_to_string(dir.join(format!("{id}.dot"))).unwrap();
        assert_eq!(dot_svg(&src).matches("<svg").count(), 1, "{id}");
    }
}

#[test]
fn emit_dot_into_a_directory_writes_one_document_per_property() {
    let dir = temp_dir("dot-dir");
    let o = trac(&[
        "compile",
        "--spec",
        SPEC,
        "--emit",
        "dot",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.stdout.is_empty());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let expected: Vec<String> = PROPERTIES.iter().map(|p| format!("{p}.dot")).collect();
    assert_eq!(names, expected);
    for name in &names {
        let src = std::fs::read_to_string(dir.join(name)).unwrap();
        let d = parse_dot(&src);
        check_one_graph(&d, 0);
    }
    // The same table as the one-property export of each formula would give.
    let json = trac(&[
        "compile",
        "--spec",
        SPEC,
        "--emit",
        "json",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(json.status.code(), Some(0));
    let all: serde_json::Value =
        serde_json::from_slice(&trac(&["compile", "--spec", SPEC, "--emit", "json"]).stdout)
            .unwrap();
    for id in PROPERTIES {
        let one: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{id}.json"))).unwrap())
                .unwrap();
        assert_eq!(one, all[id], "{id}");
    }
}

#[test]
fn the_structural_check_rejects_concatenated_graphs() {
    // The control: what `--emit dot` printed for a spec before (one digraph per property, one
    // after another) is caught.
    let one = trac(&["compile", "G(p -> X q)", "--emit", "dot"]);
    let src = String::from_utf8(one.stdout).unwrap();
    check_one_graph(&parse_dot(&src), 0);
    let twice = format!("// property A\n{src}\n// property B\n{src}");
    let caught = std::panic::catch_unwind(|| check_one_graph(&parse_dot(&twice), 0));
    assert!(caught.is_err());
}

#[test]
fn emit_into_a_path_ending_in_a_slash_creates_the_directory() {
    let dir = temp_dir("new-dir").join("monitors");
    let arg = format!("{}/", dir.display());
    let o = trac(&["compile", "--spec", SPEC, "--emit", "hoa", "-o", &arg]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for id in PROPERTIES {
        let hoa = std::fs::read_to_string(dir.join(format!("{id}.hoa"))).unwrap();
        assert!(hoa.starts_with("HOA: v1"), "{id}");
        assert_eq!(hoa.matches("--END--").count(), 1, "{id}: one automaton");
    }
    // A file in the way is an error, not a silent overwrite of something else.
    let file = temp_dir("file-in-the-way").join("taken");
    std::fs::write(&file, "x").unwrap();
    let o = trac(&[
        "compile",
        "--spec",
        SPEC,
        "--emit",
        "dot",
        "-o",
        &format!("{}/", file.display()),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.starts_with("error: ") && e.contains("taken"), "{e}");
}

#[test]
fn a_table_over_max_states_is_refused_by_compile_and_run_by_progression_in_audit() {
    let o = trac(&["compile", "G(count[4](a) <= 2)", "--max-states", "3"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("error: the monitor automaton has more than 3 states"),
        "{err}"
    );
    assert!(err.contains("raise --max-states"), "{err}");
    // 0: no limit.
    let o = trac(&["compile", "G(count[4](a) <= 2)", "--max-states", "0"]);
    assert_eq!(o.status.code(), Some(0));

    // The audit: the same summary with a table and with the fallback, a note naming it.
    let dir = temp_dir("max-states");
    let trace = dir.join("t.jsonl");
    let steps = [
        r#"[]"#, r#"["a"]"#, r#"[]"#, r#"["a"]"#, r#"["a"]"#, r#"[]"#,
    ];
    let lines: Vec<String> = steps
        .iter()
        .map(|l| format!("{{\"labels\": {l}}}"))
        .collect();
    std::fs::write(&trace, lines.join("\n") + "\n").unwrap();
    let t = trace.to_str().unwrap();
    let f = "G(count[4](a) <= 2)";
    let full = trac(&["audit", "--formula", f, t, "--summary"]);
    let small = trac(&["audit", "--formula", f, t, "--summary", "--max-states", "3"]);
    assert_eq!(full.status.code(), Some(1));
    assert_eq!(small.status.code(), Some(1));
    assert_eq!(full.stdout, small.stdout);
    assert!(String::from_utf8_lossy(&full.stdout).contains("step 5"));
    let note = String::from_utf8_lossy(&small.stderr);
    assert!(
        note.contains("note: property f1: the monitor automaton has more than 3 states")
            && note.contains("bounded satisfiability checks"),
        "{note}"
    );
    assert!(!String::from_utf8_lossy(&full.stderr).contains("note: property"));
    // Cross-check needs the table: it refuses, and says what to do instead.
    let cross = trac(&[
        "audit",
        "--formula",
        f,
        t,
        "--engine",
        "cross-check",
        "--max-states",
        "3",
    ]);
    assert_eq!(cross.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&cross.stderr),
        "error: property f1: the monitor automaton has more than 3 states (4 explored when compilation stopped)\n  \
         = help: --engine progression monitors it without a table (or the default --engine compiled, by complete progression); or raise --max-states (0: no limit)\n"
    );
}

#[test]
fn max_states_takes_a_number_of_states_and_one_state_is_singular() {
    let msg = "error: invalid value '-1' for '--max-states <N>': expected a number of states ≥ 0 (0: no limit)";
    for args in [
        &["compile", "G a", "--max-states", "-1"][..],
        &["audit", "--formula", "G a", "--max-states", "-1", "t.jsonl"][..],
    ] {
        let o = trac(args);
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().next(), Some(msg), "{err}");
        assert!(!err.contains("tip:"), "{err}");
    }
    // A number past usize: too large, not "expected a number".
    let o = trac(&["compile", "G a", "--max-states", "99999999999999999999"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("'--max-states <N>': too large: at most "),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = trac(&["compile", "G(count[4](a) <= 2)", "--max-states", "1"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("error: the monitor automaton has more than 1 state ("),
        "{err}"
    );
}

/// `G(look -> Y[40] send)` is over the default state budget: the compiled engine runs it by
/// complete progression with bounded checks, every session a clone of the plan's monitor
/// (which share the checks: before, each session redid them, about 0.1 s per session in a debug
/// build). The records are plain progression's, session by session.
#[test]
fn many_sessions_over_the_state_budget_get_progression_verdicts() {
    // Session k: steps by k % 3, interleaved (step 1 of every session, then step 2, ...).
    // `Y[40] send` is false in the first 40 steps, so `look` violates at once:
    //   0: look | send | -          violated at step 1, once
    //   1: send | -    | send       pending
    //   2: -    | send | look,send  violated at step 3, once
    const SESSIONS: usize = 60;
    let steps = [
        [r#"["look"]"#, r#"["send"]"#, r#"[]"#],
        [r#"["send"]"#, r#"[]"#, r#"["send"]"#],
        [r#"[]"#, r#"["send"]"#, r#"["look", "send"]"#],
    ];
    let mut lines = String::new();
    for step in 0..3 {
        for k in 0..SESSIONS {
            let labels = steps.get(k % 3).map(|s| s[step]).unwrap();
            lines.push_str(&format!(
                "{{\"session\": \"s{k}\", \"labels\": {labels}}}\n"
            ));
        }
    }
    let dir = temp_dir("budget-sessions");
    let trace = dir.join("m.jsonl");
    std::fs::write(&trace, lines).unwrap();
    let t = trace.to_str().unwrap();
    let f = "G(look -> Y[40] send)";
    let compiled = trac(&["audit", "--formula", f, "--summary", t]);
    let progression = trac(&[
        "audit",
        "--formula",
        f,
        "--summary",
        "--engine",
        "progression",
        t,
    ]);
    assert_eq!(compiled.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&compiled.stderr)
            .contains("note: property f1: the monitor automaton has more than 4096 states"),
        "{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let out = String::from_utf8_lossy(&compiled.stdout);
    assert_eq!(out, String::from_utf8_lossy(&progression.stdout));
    let mut seen = 0;
    for line in out.lines().skip(1).filter(|l| l.contains("#s")) {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let k: usize = cols[0].rsplit_once("#s").unwrap().1.parse().unwrap();
        let expected: &[&str] = match k % 3 {
            0 => &["f1", "violated", "1", "step", "1"],
            1 => &["f1", "pending", "0", "-"],
            _ => &["f1", "violated", "1", "step", "3"],
        };
        assert_eq!(&cols[1..], expected, "{line}");
        seen += 1;
    }
    assert_eq!(seen, SESSIONS, "{out}");
    assert_eq!(out.lines().last(), Some("40 violation(s) in 60 trace(s)"));
    // The records too (JSON lines), event by event.
    let jsonl = |engine: &str| {
        trac(&[
            "audit",
            "--formula",
            f,
            "--format",
            "jsonl",
            "--engine",
            engine,
            t,
        ])
        .stdout
    };
    assert_eq!(
        String::from_utf8_lossy(&jsonl("compiled")),
        String::from_utf8_lossy(&jsonl("progression"))
    );
}

/// `trac check` of a formula over the state budget: the initial verdict (as the audit's
/// fallback gives it before any step) and the class when the syntax tells it, exit 0.
#[test]
fn check_over_the_state_budget_prints_the_initial_verdict_and_the_syntactic_class() {
    let lines = |f: &str| {
        let o = trac(&["check", f]);
        assert_eq!(o.status.code(), Some(0), "{o:?}");
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        let get = |key: &str| {
            out.lines()
                .find_map(|l| l.strip_prefix(key))
                .unwrap_or_else(|| panic!("no {key} in {out}"))
                .trim()
                .to_string()
        };
        (get("initial:"), get("monitor:"), get("class:"))
    };
    // `a` at step 1 violates it (Y[40] b is false then); nothing satisfies it finitely.
    let (initial, monitor, class) = lines("G(a -> Y[40] b)");
    assert!(initial.starts_with("pending"), "{initial}");
    assert!(
        monitor.starts_with("cannot compile: the monitor automaton has more than 4096 states"),
        "{monitor}"
    );
    assert!(
        class.starts_with("safety (syntactic safety fragment; whether also co-safety: unknown"),
        "{class}"
    );
    // At step 1, 40 steps back is before the trace: `Y[40] a` is false, whatever comes.
    let (initial, _, class) = lines("X Y[40] a");
    assert_eq!(initial, "violated");
    assert_eq!(class, "safety and co-safety (syntactic fragments)");
    let (_, _, class) = lines("F(a & Y[40] b)");
    assert!(
        class.starts_with("co-safety (syntactic co-safety fragment"),
        "{class}"
    );
    // `G` and `F` together: neither fragment.
    let (initial, _, class) = lines("G(a -> Y[40] b) & F c");
    assert!(initial.starts_with("pending"), "{initial}");
    assert_eq!(class, "unknown (the monitor is over the state budget)");
}
