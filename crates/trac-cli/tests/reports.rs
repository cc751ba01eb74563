//! End-to-end tests of the reports (issue 13): `--summary`, `--format sarif`, `--format html`,
//! the progress bar, shortened step texts, the end-of-trace explanation, and first-use errors
//! (several specs, near-miss quantifiers, `error:` prefixes, `--complete`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SPEC: &str = "examples/specs/textworld.ron";
const DEMO: &str = "examples/traces/textworld-demo.txt";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn trac_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_trac-cli"));
    c.args(args).current_dir(root());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run trac")
}

fn trac(args: &[&str]) -> Output {
    trac_env(args, &[])
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("trac-reports-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn temp_file(name: &str, content: &str) -> PathBuf {
    let p = temp_dir().join(name);
    std::fs::File::create(&p)
        .unwrap()
        .write_all(content.as_bytes())
        .unwrap();
    p
}

/// The verdict objects (not the end objects) of a `--format jsonl` run.
fn jsonl_verdicts(args: &[&str]) -> Vec<serde_json::Value> {
    let mut a = args.to_vec();
    a.extend(["--format", "jsonl"]);
    let o = trac(&a);
    stdout(&o)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("jsonl"))
        .filter(|v| v.get("end").is_none())
        .collect()
}

/// `(line, text)` of each step of a plain-text log: one step per non-empty line.
fn text_steps(path: &Path) -> Vec<(usize, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect()
}

#[test]
fn summary_has_one_line_per_trace_and_property_agreeing_with_jsonl() {
    let o = trac(&["audit", "--summary", "--spec", SPEC, DEMO, DEMO]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    let verdicts = jsonl_verdicts(&["audit", "--spec", SPEC, DEMO]);
    let ids = ["R1", "R2", "R3", "R4"];
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with(DEMO)).collect();
    assert_eq!(rows.len(), 2 * ids.len(), "{out}");
    for id in ids {
        let mine: Vec<&serde_json::Value> = verdicts
            .iter()
            .filter(|v| v["property"] == id && v["verdict"] == "violated")
            .collect();
        let first = mine[0]["step"].as_u64().unwrap();
        for row in rows
            .iter()
            .filter(|r| r.split_whitespace().nth(1) == Some(id))
        {
            let cols: Vec<&str> = row.split_whitespace().collect();
            assert_eq!(cols[2], "violated", "{row}");
            assert_eq!(cols[3], mine.len().to_string(), "{row}");
            assert_eq!(cols[4..6], ["step", &first.to_string()], "{row}");
        }
    }
    assert!(
        out.lines().next().unwrap().contains("first violation"),
        "{out}"
    );
    // Not a text format's companion to json.
    let o = trac(&[
        "audit",
        "--summary",
        "--format",
        "json",
        "--spec",
        SPEC,
        DEMO,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("error: --summary"), "{}", stderr(&o));
}

/// Checks the parts of the SARIF 2.1.0 schema a consumer relies on, beyond the types that
/// `serde_sarif` checks: required fields, rule references, artifact indexes, 1-based lines.
fn check_sarif(v: &serde_json::Value) {
    let _: serde_sarif::sarif::Sarif =
        serde_json::from_value(v.clone()).expect("the log deserializes as SARIF 2.1.0");
    assert_eq!(v["version"], "2.1.0");
    assert!(v["$schema"].as_str().unwrap().contains("sarif-2.1.0"));
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run["tool"]["driver"]["name"], "trac");
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let artifacts = run["artifacts"].as_array().unwrap();
    for r in rules {
        assert!(r["id"].is_string());
        assert!(!r["shortDescription"]["text"].as_str().unwrap().is_empty());
    }
    for res in run["results"].as_array().unwrap() {
        let i = res["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(res["ruleId"], rules[i]["id"]);
        assert!(["error", "warning", "note", "none"].contains(&res["level"].as_str().unwrap()));
        assert!(!res["message"]["text"].as_str().unwrap().is_empty());
        for loc in res["locations"]
            .as_array()
            .unwrap()
            .iter()
            .chain(res["relatedLocations"].as_array().unwrap())
        {
            let a = &loc["physicalLocation"]["artifactLocation"];
            let idx = a["index"].as_u64().unwrap() as usize;
            assert_eq!(artifacts[idx]["location"]["uri"], a["uri"]);
            if let Some(l) = loc["physicalLocation"].get("region") {
                assert!(l["startLine"].as_u64().unwrap() >= 1);
            }
        }
    }
}

#[test]
fn sarif_has_a_result_per_violation_at_its_steps_line() {
    let o = trac(&["audit", "--format", "sarif", "--spec", SPEC, DEMO]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("SARIF is JSON");
    check_sarif(&v);
    let run = &v["runs"][0];
    let rules: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["R1", "R2", "R3", "R4"]);
    let steps = text_steps(&root().join(DEMO));
    let violations: Vec<serde_json::Value> = jsonl_verdicts(&["audit", "--spec", SPEC, DEMO])
        .into_iter()
        .filter(|v| v["verdict"] == "violated")
        .collect();
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), violations.len());
    for (res, viol) in results.iter().zip(&violations) {
        assert_eq!(res["ruleId"], viol["property"]);
        let step = viol["step"].as_u64().unwrap() as usize;
        assert_eq!(res["properties"]["step"], step);
        let loc = &res["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], DEMO);
        assert_eq!(loc["region"]["startLine"], steps[step - 1].0);
    }
    assert_eq!(run["invocations"][0]["executionSuccessful"], true);
}

#[test]
fn sarif_lines_follow_each_session_of_a_jsonl_file() {
    // Two interleaved sessions, with a blank line: step k of a session is not line k.
    let t = temp_file(
        "sessions.jsonl",
        "{\"session\": \"a\", \"labels\": [\"p\"]}\n\
         {\"session\": \"b\", \"labels\": []}\n\
         \n\
         {\"session\": \"b\", \"labels\": [\"p\"]}\n\
         {\"session\": \"a\", \"labels\": [\"p\"]}\n",
    );
    let o = trac(&[
        "audit",
        "--format",
        "sarif",
        "--formula",
        "G !p",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    check_sarif(&v);
    let mut got: Vec<(String, u64, u64)> = v["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["properties"]["trace"]
                    .as_str()
                    .unwrap()
                    .rsplit('#')
                    .next()
                    .unwrap()
                    .to_string(),
                r["properties"]["step"].as_u64().unwrap(),
                r["locations"][0]["physicalLocation"]["region"]["startLine"]
                    .as_u64()
                    .unwrap(),
            )
        })
        .collect();
    got.sort();
    // a: steps 1 and 2 on lines 1 and 5; b: step 2 on line 4.
    assert_eq!(
        got,
        [("a".into(), 1, 1), ("a".into(), 2, 5), ("b".into(), 2, 4)]
    );
}

#[test]
fn html_report_has_summary_timelines_witnesses_and_monitors() {
    let out = temp_dir().join("report.html");
    let o = trac(&[
        "audit",
        "--format",
        "html",
        "-o",
        out.to_str().unwrap(),
        "--spec",
        SPEC,
        DEMO,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "the report goes to -o");
    let page = std::fs::read_to_string(&out).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    let violations: Vec<serde_json::Value> = jsonl_verdicts(&["audit", "--spec", SPEC, DEMO]);
    for id in ["R1", "R2", "R3", "R4"] {
        assert!(page.contains(&format!("id=\"property-{id}\"")), "{id}");
    }
    // One timeline per property and trace, one tick per verdict.
    assert_eq!(page.matches("class=\"timeline\"").count(), 4);
    // Each violation's witness: every step's text, and the residual in English.
    for v in &violations {
        for c in v["witness"].as_array().unwrap() {
            let text = c["text"].as_str().unwrap();
            assert!(page.contains(text), "witness text {text}");
        }
    }
    assert!(
        page.contains("the agent examines the yellow potato"),
        "residual in English"
    );
    // The monitor: drawn by Graphviz, or a note saying why not; never both missing.
    let drawn = page.matches("<div class=\"monitor\"><svg").count();
    let not_drawn = page.matches("Monitor not drawn").count();
    assert_eq!(drawn + not_drawn, 4, "drawn {drawn}, not drawn {not_drawn}");
    // Where the build found Graphviz (build/needs.rs; always under CI=true, which installs it
    // with .ci/install-report), every monitor is drawn.
    if cfg!(not(no_dot)) {
        assert_eq!(drawn, 4, "Graphviz is on this machine (or CI=true)");
    }
    // No script, no external resource: a self-contained page.
    assert!(!page.contains("<script"));
    assert!(!page.contains("src=\"http"));
}

#[test]
fn html_report_without_graphviz_says_so_and_the_audit_goes_on() {
    let o = trac_env(
        &["audit", "--format", "html", "--spec", SPEC, DEMO],
        &[("TRAC_DOT", "/nonexistent/dot")],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let page = stdout(&o);
    assert_eq!(page.matches("Monitor not drawn").count(), 4);
    assert!(page.contains("install Graphviz"));
    assert!(page.contains("DOT source"));
}

#[test]
fn long_step_texts_are_shortened_in_text_output_but_whole_in_json() {
    let long = format!("drop {}", "very ".repeat(200));
    let t = temp_file("long.txt", &format!("look\n{long}\nlook\n"));
    let o = trac(&["audit", "--spec", SPEC, t.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    let line = out.lines().find(|l| l.contains("step   2:")).expect(&out);
    assert!(line.contains('…'), "{line}");
    assert!(line.chars().count() < 200, "{line}");
    let v = jsonl_verdicts(&["audit", "--spec", SPEC, t.to_str().unwrap()]);
    let text = v[0]["witness"][0]["text"].as_str().unwrap();
    assert_eq!(text, long.trim_end());
}

#[test]
fn text_output_explains_the_end_of_trace_verdicts_in_words() {
    let o = trac(&["audit", "--spec", SPEC, DEMO]);
    let out = stdout(&o);
    assert!(!out.contains("[at end:"), "{out}");
    let ends: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with("at end:"))
        .collect();
    assert_eq!(ends.len(), 4, "{out}");
    for e in ends {
        assert!(e.contains("started over"), "{e}");
        assert!(e.contains("if the run ends here (LTLf)"), "{e}");
    }
    let o = trac(&["audit", "--no-reset", "--spec", SPEC, DEMO]);
    assert!(stdout(&o).contains("violated for good"), "{}", stdout(&o));
}

/// A large audit: 1.2 MiB of steps, and the arguments that audit it.
fn large_audit(name: &str) -> (PathBuf, Vec<String>) {
    let line = format!(
        "{{\"output\": \"{}\", \"labels\": [\"look\"]}}\n",
        "x".repeat(100)
    );
    let t = temp_file(name, &line.repeat(12_000));
    let args = ["audit", "--summary", "--formula", "G(look -> X look)"]
        .iter()
        .map(|s| s.to_string())
        .chain([t.to_str().unwrap().to_string()])
        .collect();
    (t, args)
}

#[test]
fn no_progress_bar_on_a_pipe() {
    let (_t, args) = large_audit("large-pipe.jsonl");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = trac(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("MiB"),
        "no bar on a pipe: {}",
        stderr(&o)
    );
}

/// On a terminal (`script` runs the command on a pseudo-terminal).
#[test]
#[cfg_attr(
    no_script,
    ignore = "needs `script` (util-linux) for a pseudo-terminal"
)]
fn a_progress_bar_on_a_terminal() {
    let (_t, args) = large_audit("large-tty.jsonl");
    let cmd = format!(
        "'{}' {} 2>&1 >/dev/null",
        env!("CARGO_BIN_EXE_trac-cli"),
        args.iter()
            .map(|a| format!("'{a}'"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let o = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .current_dir(root())
        .output()
        .unwrap();
    let tty = String::from_utf8_lossy(&o.stdout);
    assert!(tty.contains("MiB"), "a bar on a terminal: {tty:?}");
}

#[test]
fn colliding_property_ids_are_namespaced_by_spec_name() {
    let spec = std::fs::read_to_string(root().join(SPEC)).unwrap();
    let other = temp_file(
        "other.ron",
        &spec.replace("name: \"textworld\"", "name: \"kitchen\""),
    );
    let v = jsonl_verdicts(&[
        "audit",
        "--spec",
        SPEC,
        "--spec",
        other.to_str().unwrap(),
        DEMO,
    ]);
    let mut ids: Vec<&str> = v.iter().map(|v| v["property"].as_str().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(
        ids,
        [
            "kitchen/R1",
            "kitchen/R2",
            "kitchen/R3",
            "kitchen/R4",
            "textworld/R1",
            "textworld/R2",
            "textworld/R3",
            "textworld/R4"
        ]
    );
    // Same spec name too: an error naming both files.
    let same = temp_file("same.ron", &spec);
    let o = trac(&[
        "audit",
        "--spec",
        SPEC,
        "--spec",
        same.to_str().unwrap(),
        DEMO,
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.starts_with("error: property id `R1`"), "{e}");
    assert!(
        e.contains(SPEC) && e.contains(same.to_str().unwrap()),
        "{e}"
    );
}

#[test]
fn near_miss_quantifiers_are_named_with_uniform_error_prefixes() {
    let o = trac(&["audit", "--formula", "foral x: G take(x)", DEMO]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with(
            "error: --formula f1: `foral` is not a quantifier: did you mean `forall x:`?"
        ),
        "{}",
        stderr(&o)
    );
    let o = trac(&["check", "forall x, y: G a(x)"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("quantified variable `y` is not used"),
        "{}",
        stderr(&o)
    );
    // In a spec: `error: FILE:LINE:COLUMN: ...`.
    let spec = temp_file(
        "near.ron",
        "(\n  name: \"near\",\n  properties: [\n    (id: \"P\", formula: \"forall x, y: G a(x)\"),\n  ],\n)\n",
    );
    let o = trac(&["audit", "--spec", spec.to_str().unwrap(), DEMO]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    let prefix = format!("error: {}:4:", spec.display());
    assert!(e.starts_with(&prefix), "{e}");
    assert!(e.contains("quantified variable `y` is not used"), "{e}");
    // Every message line of a failed run starts with a known prefix (caret renderings aside).
    for args in [
        vec!["audit", "--spec", "/nonexistent.ron", DEMO],
        vec!["audit", "--formula", "G(", DEMO],
        vec!["compile", "--spec", spec.to_str().unwrap()],
        vec!["audit", "--formula", "G a", "/nonexistent.txt"],
    ] {
        let o = trac(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        for l in stderr(&o)
            .lines()
            .filter(|l| !l.starts_with(' ') && !l.contains(" | "))
        {
            assert!(
                ["error: ", "warning: ", "note: "]
                    .iter()
                    .any(|p| l.starts_with(p)),
                "{args:?}: {l}"
            );
        }
    }
}

#[test]
fn complete_without_the_progression_engine_is_refused() {
    for engine in [None, Some("compiled"), Some("cross-check")] {
        let mut args = vec!["audit", "--complete", "--spec", SPEC, DEMO];
        if let Some(e) = engine {
            args.extend(["--engine", e]);
        }
        let o = trac(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).starts_with("error: --complete applies to --engine progression"));
    }
    let o = trac(&[
        "audit",
        "--complete",
        "--engine",
        "progression",
        "--spec",
        SPEC,
        DEMO,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn malformed_trace_labels_are_errors_with_file_line_and_column() {
    let t = temp_file(
        "bad-labels.jsonl",
        concat!(
            "{\"output\": \"take knife\", \"labels\": [\"take(knife)\"]}\n",
            "{\"output\": \"take knife\", \"labels\": [\"look\", \"take(knife\"]}\n",
        ),
    );
    let o = trac(&[
        "audit",
        "--formula",
        "G !take(knife)",
        "--format",
        "jsonl",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    // Column 50: the `(` of `take(knife` on line 2.
    let want = format!(
        "error: {}:2:50: malformed label \"take(knife\": unclosed `(`",
        t.display()
    );
    assert!(e.starts_with(&want), "{e}");
    // The step before the bad line was audited and its violation reported; the end object
    // carries the error.
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["step"], 1);
    assert_eq!(lines[0]["verdict"], "violated");
    let end = lines.last().unwrap();
    assert_eq!(end["steps"], 1);
    assert!(
        end["error"].as_str().unwrap().contains("malformed label"),
        "{end}"
    );
    for (label, what) in [
        ("(knife)", "no name before `(`"),
        ("take(knife,)", "empty value after `,`"),
        ("take(knife,fork)", "expected one space after `,`"),
        ("take()", "empty value"),
        ("", "empty label"),
    ] {
        let line = serde_json::json!({"output": "x", "labels": [label]}).to_string();
        let t = temp_file("bad-label.jsonl", &format!("{line}\n"));
        let o = trac(&["audit", "--formula", "G !take(knife)", t.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{label}");
        let e = stderr(&o);
        assert!(e.starts_with(&format!("error: {}:1:", t.display())), "{e}");
        assert!(e.contains(what), "{label}: {e}");
    }
}

/// The spec example of the spec-file reference (the first `ron` block of
/// `docs/reference/spec-files.md`, read from the page itself) on realistic lines: `take yellow
/// potato from fridge` is about `yellow potato`, `take the knife` about `knife`, so examining
/// them next satisfies R1.
#[test]
fn the_documented_spec_example_names_the_items_of_realistic_lines() {
    let page = std::fs::read_to_string(root().join("docs/reference/spec-files.md")).unwrap();
    let section = &page[page
        .find("# Spec files")
        .expect("docs/reference/spec-files.md has a Spec files title")..];
    let start = section.find("```ron\n").unwrap() + "```ron\n".len();
    let ron = &section[start..start + section[start..].find("```").unwrap()];
    let spec = temp_file("doc-spec-spec.ron", ron);
    let good = temp_file(
        "doc-spec-good.txt",
        "Step: 1 Action: take yellow potato from fridge\nStep: 2 Action: examine yellow potato\nStep: 3 Action: take the knife\nStep: 4 Action: examine the knife\n",
    );
    let o = trac(&[
        "audit",
        "--spec",
        spec.to_str().unwrap(),
        good.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let bad = temp_file(
        "doc-spec-bad.txt",
        "take the yellow potato from the fridge\nlook\ntake the knife\nexamine the fork\n",
    );
    let v = jsonl_verdicts(&[
        "audit",
        "--spec",
        spec.to_str().unwrap(),
        bad.to_str().unwrap(),
    ]);
    let got: Vec<(u64, &str)> = v
        .iter()
        .map(|r| (r["step"].as_u64().unwrap(), r["value"].as_str().unwrap()))
        .collect();
    assert_eq!(got, [(2, "yellow potato"), (4, "knife")]);
}

#[test]
fn summary_shows_unreadable_traces_as_errors() {
    let binary = temp_dir().join("binary.txt");
    std::fs::write(&binary, b"look\x00\xff\xfe\n").unwrap();
    let dir = temp_dir();
    let o = trac(&[
        "audit",
        "--spec",
        SPEC,
        "--summary",
        "/nonexistent-trace.txt",
        dir.to_str().unwrap(),
        binary.to_str().unwrap(),
        DEMO,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let out = stdout(&o);
    for name in [
        "/nonexistent-trace.txt",
        dir.to_str().unwrap(),
        binary.to_str().unwrap(),
    ] {
        let rows: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with(&format!("{name} ")))
            .collect();
        assert_eq!(rows.len(), 4, "{out}");
        for r in rows {
            let cols: Vec<&str> = r.split_whitespace().collect();
            assert_eq!(cols[2..], ["error", "-", "-"], "{r}");
        }
        assert!(
            out.lines()
                .any(|l| l.starts_with("error: ") && l.contains(name)),
            "{out}"
        );
    }
    assert!(out.contains("No such file or directory"), "{out}");
    assert!(out.contains("invalid UTF-8"), "{out}");
    // The readable trace keeps its verdicts.
    assert!(
        out.lines()
            .any(|l| l.starts_with(DEMO) && l.contains("violated")),
        "{out}"
    );
    assert!(
        out.trim_end()
            .ends_with("in 4 trace(s), 3 with an error (above)"),
        "{out}"
    );
    // A malformed line after some steps: the verdicts of the steps before it.
    let t = temp_file(
        "half.jsonl",
        "{\"output\": \"drop knife\"}\n{\"output\": 3}\n",
    );
    let o = trac(&["audit", "--spec", SPEC, "--summary", t.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o);
    let r3 = out.lines().find(|l| l.contains(" R3 ")).unwrap();
    assert!(r3.contains("violated (until error)"), "{out}");
    assert!(
        out.contains("the 1 step(s) before it were audited"),
        "{out}"
    );
}

/// A standard error that fails every write (`/dev/full`) changes no exit code (it panicked:
/// exit 101).
#[test]
fn a_failing_standard_error_keeps_the_exit_code() {
    let run = |args: &[&str]| {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        Command::new(env!("CARGO_BIN_EXE_trac-cli"))
            .args(args)
            .current_dir(root())
            .stdout(std::process::Stdio::null())
            .stderr(full)
            .status()
            .unwrap()
            .code()
    };
    assert_eq!(run(&["check", "G("]), Some(2));
    assert_eq!(run(&["audit", "--spec", "/nonexistent.ron", DEMO]), Some(2));
    assert_eq!(
        run(&["audit", "--formula", "G a", "/nonexistent.txt"]),
        Some(2)
    );
    // Warnings on stderr, violations on stdout: exit 1.
    assert_eq!(
        run(&["audit", "--formula", "G !drop", "--spec", SPEC, DEMO]),
        Some(1)
    );
    assert_eq!(run(&["audit", "--bad-flag"]), Some(2));
}

#[test]
fn a_formula_error_in_a_spec_shows_the_file_line_under_a_caret() {
    let spec = temp_file(
        "caret.ron",
        "(\n  name: \"c\",\n  propositions: [(name: \"p\"), (name: \"q\")],\n  properties: [\n    (id: \"R1\",\n     formula: \"G(p -> X (q &))\"),\n    (id: \"R2\", formula: \"G(\\\"q\\\" -> \n      X (q |))\"),\n  ],\n)\n",
    );
    let o = trac(&["audit", "--spec", spec.to_str().unwrap(), DEMO]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    let want = format!(
        "error: {}:6:29: property `R1`: expected a formula after `&`\n      |\n    6 |      formula: \"G(p -> X (q &))\"),\n      |                             ^\n",
        spec.display()
    );
    assert!(e.starts_with(&want), "{e}");
    // Escapes and a line break inside the string: the error's own line and column.
    let want = format!(
        "error: {}:8:13: property `R2`: expected a formula after `|`\n      |\n    8 |       X (q |))\"),\n      |             ^\n",
        spec.display()
    );
    assert!(e.contains(&want), "{e}");
}

#[test]
fn standard_input_twice_and_empty_specs_are_usage_errors() {
    let o = trac(&["audit", "--formula", "G !p", "-", "-"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("error: `-` (standard input) is given 2 times"),
        "{}",
        stderr(&o)
    );
    for (name, text) in [
        ("empty.ron", ""),
        ("comments.ron", "  \n// nothing yet\n/* */\n"),
    ] {
        let spec = temp_file(name, text);
        let o = trac(&["audit", "--spec", spec.to_str().unwrap(), DEMO]);
        assert_eq!(o.status.code(), Some(2));
        let e = stderr(&o);
        assert!(
            e.starts_with(&format!(
                "error: {}: empty spec file: a spec is `(name:",
                spec.display()
            )),
            "{e}"
        );
    }
}

/// TRAC_R with LTLf properties: the end of the trace judges only the run since the last
/// restart, so a failure already reported is not counted again there (each failing position
/// counts once), while an obligation left open after a restart still is. Counts derived by
/// hand from the traces.
#[test]
fn ltlf_end_of_trace_counts_only_the_run_since_the_last_restart() {
    let spec = temp_file(
        "ltlf-end.ron",
        r#"(name: "t", properties: [
            (id: "g", formula: "G !bad", semantics: Ltlf),
            (id: "x", formula: "G(x -> X[!] p)", semantics: Ltlf),
            (id: "f", formula: "G !bad & F done", semantics: Ltlf),
        ])"#,
    );
    let count = |trace: &str, engine: &str| -> Vec<u64> {
        let t = temp_file(&format!("ltlf-end-{engine}-{}.jsonl", trace.len()), trace);
        let o = trac(&[
            "audit",
            "--engine",
            engine,
            "--format",
            "jsonl",
            "--spec",
            spec.to_str().unwrap(),
            t.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        stdout(&o)
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|r| r["end"] == true)
            .map(|r| r["violations"].as_u64().unwrap())
            .collect()
    };
    let l = |labels: &[&str]| {
        labels
            .iter()
            .map(|x| format!("{{\"labels\": [\"{x}\"]}}\n"))
            .collect::<String>()
    };
    for engine in ["compiled", "progression"] {
        // Violated at the last step: the restarted run read nothing.
        assert_eq!(count(&l(&["ok", "bad"]), engine), [1, 0, 1], "{engine}");
        // Violated at step 1, then clean: G !bad holds on the rest (1), but F done is still
        // open after the restart (f: 1 + 1).
        assert_eq!(
            count(&l(&["bad", "ok", "ok"]), engine),
            [1, 0, 2],
            "{engine}"
        );
        // x at step 2 needs p after the end (strong next); F done is still open after the
        // restart at step 1.
        assert_eq!(count(&l(&["bad", "x"]), engine), [1, 1, 2], "{engine}");
    }
}

/// Input a new user's tools produce: a UTF-8 byte-order mark before a spec or a JSON Lines
/// trace is not part of the text; NUL bytes are binary data, an error (exit 2), never a clean
/// trace; `-o` naming an input file is refused before anything is truncated.
#[test]
fn byte_order_marks_nul_bytes_and_output_over_an_input() {
    let spec = temp_file(
        "bom.ron",
        "\u{feff}(name: \"t\", properties: [(id: \"g\", formula: \"G !bad\")])\n",
    );
    let spec = spec.to_str().unwrap();
    let trace = temp_file("bom.jsonl", "\u{feff}{\"labels\": [\"bad\"]}\n");
    let o = trac(&[
        "audit",
        "--spec",
        spec,
        trace.to_str().unwrap(),
        "--summary",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("step 1"), "{}", stdout(&o));

    let zeros = temp_file("zeros.dat", &"\0".repeat(1000));
    let o = trac(&["audit", "--spec", spec, zeros.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("zeros.dat:1:1: a NUL byte"),
        "{}",
        stderr(&o)
    );

    let before = std::fs::read(&trace).unwrap();
    for target in [trace.to_str().unwrap(), spec] {
        let o = trac(&[
            "audit",
            "--spec",
            spec,
            trace.to_str().unwrap(),
            "-o",
            target,
        ]);
        assert_eq!(o.status.code(), Some(2), "{target}");
        assert!(
            stderr(&o).contains("would overwrite an input file"),
            "{}",
            stderr(&o)
        );
    }
    assert_eq!(std::fs::read(&trace).unwrap(), before);
    assert!(std::fs::read_to_string(spec).unwrap().contains("G !bad"));
}

/// A `--formula` atom of a proposition a `--spec` declares, with the wrong number of arguments,
/// would never hold and the property would pass silently: an error (exit 2) naming both.
#[test]
fn formula_atoms_with_the_wrong_arity_for_a_spec_proposition_are_errors() {
    let spec = root().join("examples/specs/textworld.ron");
    let trace = root().join("examples/traces/textworld-demo.txt");
    for (f, msg) in [
        (
            "G !take",
            "`take` has 0 argument(s), but proposition `take` has 1",
        ),
        (
            "G !go(north)",
            "`go(north)` has 1 argument(s), but proposition `go` has 0",
        ),
        (
            "G !take(a, b)",
            "has 2 argument(s), but proposition `take` has 1",
        ),
    ] {
        let o = trac(&[
            "audit",
            "--spec",
            spec.to_str().unwrap(),
            "--formula",
            f,
            trace.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{f}");
        assert!(stderr(&o).contains(msg), "{f}: {}", stderr(&o));
    }
    let o = trac(&[
        "audit",
        "--spec",
        spec.to_str().unwrap(),
        "--formula",
        "forall x: G !take(x)",
        "--summary",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

/// Issue 12: witnesses of past-time properties cite the steps that made the past subformula
/// false, in every output format; the step numbers are derived by hand from the trace (the
/// last `confirm` at step 2, `deny` at step 4 breaks `!deny S confirm`, `write` at step 5).
#[test]
fn past_time_witnesses_cite_their_steps_in_every_format() {
    let t = temp_file(
        "past-cite.jsonl",
        "{\"output\": \"hello\"}\n\
         {\"output\": \"yes, confirm\", \"labels\": [\"confirm\"]}\n\
         {\"output\": \"writing\", \"labels\": [\"write\"]}\n\
         {\"output\": \"no, deny it\", \"labels\": [\"deny\"]}\n\
         {\"output\": \"writing again\", \"labels\": [\"write\"]}\n",
    );
    let t = t.to_str().unwrap();
    let f = "G(write -> (!deny S confirm))";
    let run = |format: &str| {
        let o = trac(&["audit", "--formula", f, "--format", format, t]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        stdout(&o)
    };
    let text = run("text");
    assert!(
        text.contains(
            "because: !deny S confirm was false at step 5: `confirm` held last at step 2, \
             then `!deny` failed at step 4"
        ),
        "{text}"
    );
    assert!(
        text.contains("step   2: yes, confirm  (confirm held)"),
        "{text}"
    );
    assert!(
        text.contains("step   4: no, deny it  (!deny failed)"),
        "{text}"
    );
    let recs = jsonl_verdicts(&["audit", "--formula", f, t]);
    assert_eq!(recs.len(), 1);
    let past = &recs[0]["past"][0];
    assert_eq!(past["subformula"], "!deny S confirm");
    assert_eq!(
        (past["step"].as_u64(), past["value"].as_bool()),
        (Some(5), Some(false))
    );
    assert_eq!(past["since_step"], 4);
    let cited: Vec<u64> = past["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"].as_u64().unwrap())
        .collect();
    assert_eq!(cited, [2, 4]);
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    assert_eq!(json[0]["verdicts"][0]["past"], recs[0]["past"]);
    let sarif: serde_json::Value = serde_json::from_str(&run("sarif")).unwrap();
    check_sarif(&sarif);
    assert_eq!(
        sarif["runs"][0]["results"][0]["properties"]["past"],
        recs[0]["past"]
    );
    let html = run("html");
    assert!(
        html.contains("Because <code>!deny S confirm</code> was false at step 5"),
        "{html}"
    );
    // A property without past-time operators has no `past` field.
    let recs = jsonl_verdicts(&["audit", "--formula", "G !deny", t]);
    assert_eq!(recs.len(), 1);
    assert!(recs[0].get("past").is_none(), "{}", recs[0]);
}

/// A JSON Lines trace of `steps` steps where `p` holds on steps `from ..= to` and `q` on the
/// others: under `G !p` (TRAC_R), one violation per step of the window.
fn clustered_trace(name: &str, steps: usize, from: usize, to: usize) -> PathBuf {
    let mut s = String::with_capacity(steps * 18);
    for i in 1..=steps {
        s.push_str(if (from..=to).contains(&i) {
            "{\"labels\":[\"p\"]}\n"
        } else {
            "{\"labels\":[\"q\"]}\n"
        });
    }
    temp_file(name, &s)
}

/// The HTML report of `G !p` on `trace`.
fn g_not_p_page(trace: &Path, name: &str) -> String {
    let out = temp_dir().join(name);
    let o = trac(&[
        "audit",
        "--formula",
        "G !p",
        "--format",
        "html",
        "-o",
        out.to_str().unwrap(),
        trace.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    std::fs::read_to_string(&out).unwrap()
}

/// `(first step, last step, count)` of each violation bar of a page's timelines, read from
/// the bar's tooltip (`steps A–B: N violation(s)` or `step A: N violation(s)`).
fn violation_bars(page: &str) -> Vec<(usize, usize, usize)> {
    page.split("<rect class=\"violations\"")
        .skip(1)
        .map(|bar| {
            let t = &bar[bar.find("<title>").expect("a tooltip") + 7..];
            let t = &t[..t.find("</title>").unwrap()];
            let (range, count) = t.split_once(": ").unwrap();
            let count = count
                .strip_suffix(" violation(s)")
                .unwrap()
                .parse()
                .unwrap();
            let range = range
                .trim_start_matches("steps ")
                .trim_start_matches("step ");
            let (a, b) = range.split_once('–').unwrap_or((range, range));
            (a.parse().unwrap(), b.parse().unwrap(), count)
        })
        .collect()
}

#[test]
fn html_timeline_of_a_long_trace_counts_violations_per_bucket_and_the_page_stays_small() {
    // 10^5 steps with 10^4 violations clustered on steps 30001..=40000 (the issue's 10^6 steps
    // with 10^5 violations, scaled down for a debug build: BENCHMARKS.md has that figure).
    let big = clustered_trace("cluster-1e5.jsonl", 100_000, 30_001, 40_000);
    let page = g_not_p_page(&big, "cluster-1e5.html");
    let bars = violation_bars(&page);
    // Aggregated: a bounded number of bars (not one per violation) that count every violation
    // and lie where the violations are.
    assert!(!bars.is_empty() && bars.len() <= 512, "{} bars", bars.len());
    assert_eq!(bars.iter().map(|b| b.2).sum::<usize>(), 10_000);
    for &(a, b, n) in &bars {
        assert!(a <= b && b >= 30_001 && a <= 40_000, "bar {a}–{b} ({n})");
        assert!(n <= b - a + 1, "bar {a}–{b} counts {n}");
    }
    assert!(!page.contains("<line x1=\"") || page.matches("<line").count() <= 2);
    // The first 20 violations with their witness, then a count and how to get the rest.
    assert_eq!(page.matches("violated</span> at step").count(), 20);
    assert!(page.contains("9980 more"), "the rest is counted");
    assert!(page.contains("--format jsonl"));
    // The page does not grow with the trace: 10^6 steps with 10^5 violations must stay under
    // 5 MB, so 10^5 with 10^4 under 0.5 MB (it is far below both: the size is that of the
    // bounded parts), and ten times fewer steps and violations give about the same size.
    let small = clustered_trace("cluster-1e4.jsonl", 10_000, 3_001, 4_000);
    let small_page = g_not_p_page(&small, "cluster-1e4.html");
    assert!(page.len() < 500_000, "{} bytes", page.len());
    assert!(
        page.len() < small_page.len() * 3 / 2,
        "{} bytes for 10^5 steps, {} for 10^4",
        page.len(),
        small_page.len()
    );
}

#[test]
fn html_timeline_of_a_short_trace_has_a_bar_per_verdict_step() {
    // Buckets of one step while the trace is short: each violation at its own step.
    let t = temp_file(
        "short-timeline.jsonl",
        "{\"labels\":[\"q\"]}\n{\"labels\":[\"p\"]}\n{\"labels\":[\"q\"]}\n{\"labels\":[\"p\"]}\n",
    );
    let page = g_not_p_page(&t, "short-timeline.html");
    assert_eq!(violation_bars(&page), vec![(2, 2, 1), (4, 4, 1)]);
}

#[test]
fn html_header_counts_the_traces_that_errored() {
    let empty = temp_file("empty-trace.jsonl", "");
    let missing = temp_dir().join("no-such-trace.jsonl");
    let out = temp_dir().join("errored.html");
    let o = trac(&[
        "audit",
        "--format",
        "html",
        "-o",
        out.to_str().unwrap(),
        "--spec",
        SPEC,
        DEMO,
        empty.to_str().unwrap(),
        missing.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let page = std::fs::read_to_string(&out).unwrap();
    let header = &page[page.find("<h1>").unwrap()..page.find("<h2").unwrap()];
    assert!(
        header.contains("2 of 3 trace(s) had errors</strong> (1 not audited at all)"),
        "{header}"
    );
    assert!(header.contains("in 3 trace(s) (2 with errors)"), "{header}");
    // Without errors the header says nothing about them.
    let clean = trac(&["audit", "--format", "html", "--spec", SPEC, DEMO]);
    let page = stdout(&clean);
    let header = &page[page.find("<h1>").unwrap()..page.find("<h2").unwrap()];
    assert!(!header.contains("error"), "{header}");
}

#[test]
#[cfg_attr(no_dot, ignore = "needs Graphviz's dot (apt-get install graphviz)")]
fn html_monitor_drawings_scale_down_to_the_page_width() {
    // A monitor wider than the page (a chain of 11 states, drawn left to right).
    let t = temp_file("wide.jsonl", "{\"labels\":[\"a\"]}\n");
    let o = trac(&[
        "audit",
        "--formula",
        "a -> X X X X X X X X b",
        "--format",
        "html",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let page = stdout(&o);
    assert!(
        !page.contains("too many to draw"),
        "the control: a monitor small enough to draw"
    );
    let i = page
        .find("<div class=\"monitor\"><svg")
        .expect("Graphviz (found by the build) draws the monitor");
    let root = &page[i + "<div class=\"monitor\">".len()..];
    let root = &root[..root.find('>').unwrap()];
    let width: f64 = root
        .split("width=\"")
        .nth(1)
        .and_then(|w| w.split("pt\"").next())
        .and_then(|w| w.parse().ok())
        .expect("Graphviz's width in points");
    assert!(
        width > 1100.0,
        "the control: a drawing wider than the page ({width} pt)"
    );
    assert!(
        root.contains("style=\"max-width:100%;height:auto\""),
        "{root}"
    );
    assert!(root.contains("viewBox=\""), "{root}");
}

#[test]
fn html_lists_a_bounded_number_of_traces_preferring_those_with_violations() {
    // 1,200 sessions of two steps; `p` (a violation of `G !p`) in every 4th: 300 violated.
    let mut s = String::new();
    for i in 0..1200 {
        let l = if i % 4 == 0 { "p" } else { "q" };
        s.push_str(&format!("{{\"session\":\"s{i}\",\"labels\":[\"q\"]}}\n"));
        s.push_str(&format!("{{\"session\":\"s{i}\",\"labels\":[\"{l}\"]}}\n"));
    }
    let t = temp_file("many-sessions.jsonl", &s);
    let page = g_not_p_page(&t, "many-sessions.html");
    let traces = &page[page.find("id=\"traces\"").unwrap()..page.find("<section").unwrap()];
    // The trace table: the 300 violated sessions (at most 1,000), the others counted.
    assert_eq!(traces.matches("<tr><td><code>").count(), 300);
    assert!(traces.contains("#s0</code>") && traces.contains("#s1196</code>"));
    assert!(
        !traces.contains("#s1</code>"),
        "a clean session is not listed"
    );
    assert!(traces.contains("900 more trace(s) not listed"), "{traces}");
    // The property's section: the first 50 violated sessions.
    let section = &page[page.find("<section").unwrap()..];
    assert_eq!(section.matches("<h3><code>").count(), 50);
    assert!(section.contains("#s196</code>") && !section.contains("#s200</code>"));
    assert!(section.contains("1150 more trace(s) not shown here"));
    // Every violation is still counted in the summary.
    assert!(page.contains("300 violation(s) in 1200 trace(s)"));
}

/// From a new-user trial: a Graphviz that never finishes (here a script that sleeps) hung the
/// HTML report. Each drawing is stopped at `TRAC_DOT_TIMEOUT` seconds; the page says so and the
/// audit goes on.
#[test]
fn a_hung_graphviz_is_stopped_and_the_report_says_so() {
    let dot = temp_file("slow-dot.sh", "#!/bin/sh\nexec sleep 600\n");
    let mut perm = std::fs::metadata(&dot).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&dot, perm).unwrap();
    let o = trac_env(
        &["audit", "--format", "html", "--spec", SPEC, DEMO],
        &[
            ("TRAC_DOT", dot.to_str().unwrap()),
            ("TRAC_DOT_TIMEOUT", "0.5"),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let page = stdout(&o);
    assert!(page.contains("Monitor not drawn"), "{page}");
    assert!(page.contains("took longer than"), "{page}");
}
