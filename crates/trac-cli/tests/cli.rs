//! End-to-end tests of the `trac` binary: exit codes, output formats, errors on bad input.

use std::io::Write;
use std::process::{Command, Output};

fn trac(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trac-cli"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .expect("run trac")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The JSON objects of a `--format jsonl` run, one per line.
fn jsonl(o: &Output) -> Vec<serde_json::Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("jsonl output is JSON"))
        .collect()
}

fn temp_file(name: &str, content: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("trac-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::File::create(&p)
        .unwrap()
        .write_all(content.as_bytes())
        .unwrap();
    p
}

#[test]
fn formula_over_trace_labels_counts_trac_r_violations() {
    let t = temp_file(
        "looks.jsonl",
        &"{\"output\": \"look around\", \"labels\": [\"look\"]}\n".repeat(5),
    );
    let o = trac(&[
        "audit",
        "--formula",
        "G(look -> X !look)",
        "--format",
        "jsonl",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = jsonl(&o);
    let steps: Vec<u64> = lines
        .iter()
        .filter(|v| v["verdict"] == "violated" && v.get("end").is_none())
        .map(|v| v["step"].as_u64().unwrap())
        .collect();
    assert_eq!(steps, vec![2, 3, 4, 5]);
    let end = lines.last().unwrap();
    assert_eq!(end["end"], true);
    assert_eq!(end["property"], "f1");
    assert_eq!(end["violations"], 4);
    assert_eq!(end["verdict"], "pending");
    assert_eq!(end["ltlf"], "violated");
    for v in &lines[..4] {
        for key in ["trace", "property", "step", "verdict", "residual"] {
            assert!(v.get(key).is_some(), "missing {key} in {v}");
        }
    }

    let o = trac(&[
        "audit",
        "--no-reset",
        "--formula",
        "G(look -> X !look)",
        "--format",
        "jsonl",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let n = stdout(&o)
        .lines()
        .filter(|l| l.contains("\"violated\"") && !l.contains("\"end\""))
        .count();
    assert_eq!(n, 1, "plain TRAC reports one violation");
}

#[test]
fn clean_trace_exits_zero_and_decided_before_first_step_is_step_zero() {
    let t = temp_file("clean.jsonl", "{\"labels\": [\"a\"]}\n{\"labels\": []}\n");
    let o = trac(&["audit", "--formula", "G !b", t.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = trac(&[
        "audit",
        "--formula",
        "false",
        "--format",
        "jsonl",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let first: serde_json::Value = jsonl(&o)[0].clone();
    assert_eq!(first["step"], 0);
    assert_eq!(first["verdict"], "violated");
}

#[test]
fn bad_formula_shows_a_caret_and_exits_2() {
    let o = trac(&["check", "G (a & )"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains('^'), "no caret in: {err}");
    assert!(err.contains("G (a & )"), "formula not shown in: {err}");
    let t = temp_file("one.jsonl", "{\"labels\": []}\n");
    let o = trac(&["audit", "--formula", "F (", t.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("f1"), "{}", stderr(&o));
}

#[test]
fn check_prints_normalized_formula_english_and_propositions() {
    let o = trac(&["check", "G G (take(item) -> X examine(item)) & true"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(
        s.contains("formula:      G(take(item) -> X examine(item))")
            || s.contains("formula:      G (take(item) -> X examine(item))"),
        "{s}"
    );
    assert!(
        s.contains("propositions: examine(item), take(item)")
            || s.contains("propositions: take(item), examine(item)"),
        "{s}"
    );
    assert!(s.contains("english:"), "{s}");
}

#[test]
fn malformed_trace_line_keeps_earlier_verdicts_and_exits_2() {
    let t = temp_file(
        "broken.jsonl",
        "{\"labels\": [\"bad\"]}\n{\"labels\": [\"ok\"]}\n{\"labels\": [\"bad\"\n{\"labels\": [\"bad\"]}\n",
    );
    let o = trac(&[
        "audit",
        "--formula",
        "G !bad",
        "--format",
        "jsonl",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o);
    assert!(out.contains("\"step\":1"), "verdict of step 1 lost: {out}");
    let err = stderr(&o);
    assert!(err.contains("broken.jsonl:3:"), "no file:line in: {err}");
}

#[test]
fn missing_files_and_bad_specs_exit_2() {
    let o = trac(&["audit", "--formula", "G a", "/nonexistent/trace.jsonl"]);
    assert_eq!(o.status.code(), Some(2));
    let spec = temp_file(
        "bad.ron",
        "(name: \"x\", properties: [(id: \"P\", formula: \"G (a U\")])",
    );
    let t = temp_file("t.jsonl", "{}\n");
    let o = trac(&[
        "audit",
        "--spec",
        spec.to_str().unwrap(),
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("bad.ron:1:"), "no file:line:column in: {err}");
    assert!(err.contains('P'), "property not named in: {err}");
    let o = trac(&["audit"]);
    assert_eq!(o.status.code(), Some(2));
    let o = trac(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn violations_before_the_first_step_and_at_the_end_of_ltlf_traces_count() {
    let t = temp_file(
        "three.jsonl",
        "{\"labels\": [\"take(knife)\"]}\n{}\n{\"labels\": [\"take(apple)\"]}\n",
    );
    // Decided before the first step, plain TRAC: one violation, at step 0, exit 1.
    let o = trac(&[
        "audit",
        "--no-reset",
        "--formula",
        "q & !q",
        "--format",
        "jsonl",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("\"violations\":1"), "{}", stdout(&o));
    // An ltlf property whose obligation is still open at the end is violated at the last step.
    let spec = temp_file(
        "lf.ron",
        "(name: \"l\", properties: [(id: \"E\", formula: \"F eat\", semantics: Ltlf)])",
    );
    let o = trac(&[
        "audit",
        "--spec",
        spec.to_str().unwrap(),
        "--format",
        "jsonl",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let first: serde_json::Value = jsonl(&o)[0].clone();
    assert_eq!(first["step"], 3);
    assert_eq!(first["verdict"], "violated");
    // A value first seen after the template was decided inherits the verdict, at its step.
    let o = trac(&[
        "audit",
        "--no-reset",
        "--formula",
        "forall x: take(x)",
        "--format",
        "jsonl",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let apple: Vec<serde_json::Value> = jsonl(&o)
        .into_iter()
        .filter(|v| v["value"] == "apple" && v.get("end").is_none())
        .collect();
    assert_eq!(apple.len(), 1, "{}", stdout(&o));
    assert_eq!(apple[0]["step"], 1);
    assert_eq!(apple[0]["verdict"], "violated");
}

#[test]
fn sessions_in_one_jsonl_file_are_separate_traces() {
    // Two interleaved sessions: each `look` is followed by a non-look step *in its own session*,
    // so neither violates; audited as one trace, steps 1-2 would be a violation.
    let t = temp_file(
        "sessions.jsonl",
        concat!(
            "{\"session\": \"a\", \"labels\": [\"look\"]}\n",
            "{\"session\": \"b\", \"labels\": [\"look\"]}\n",
            "{\"session\": \"a\", \"labels\": []}\n",
            "{\"session\": \"b\", \"labels\": []}\n",
            "{\"session\": \"b\", \"labels\": [\"look\"]}\n",
            "{\"session\": \"b\", \"labels\": [\"look\"]}\n",
        ),
    );
    let o = trac(&[
        "audit",
        "--formula",
        "G(look -> X !look)",
        "--format",
        "jsonl",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let lines: Vec<serde_json::Value> = jsonl(&o);
    let violations: Vec<(String, u64)> = lines
        .iter()
        .filter(|v| v.get("end").is_none())
        .map(|v| {
            (
                v["trace"].as_str().unwrap().to_string(),
                v["step"].as_u64().unwrap(),
            )
        })
        .collect();
    let name = t.to_str().unwrap();
    assert_eq!(violations, vec![(format!("{name}#b"), 4)]);
    let ends: Vec<(&str, u64)> = lines
        .iter()
        .filter(|v| v.get("end").is_some())
        .map(|v| (v["trace"].as_str().unwrap(), v["steps"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        ends,
        vec![
            (format!("{name}#a").as_str(), 2),
            (format!("{name}#b").as_str(), 4)
        ]
    );
}

#[test]
fn session_end_finishes_a_session_where_it_ends() {
    // Session a ends with its second event (`"session_end": true`), b at a bare marker (not a
    // step); their end records are written there. An event of b after its marker starts a new
    // trace of the same name.
    let t = temp_file(
        "ends.jsonl",
        concat!(
            "{\"session\": \"a\", \"labels\": [\"q\"]}\n",
            "{\"session\": \"b\", \"labels\": [\"p\"]}\n",
            "{\"session\": \"a\", \"labels\": [\"p\"], \"session_end\": true}\n",
            "{\"session\": \"b\", \"labels\": [\"q\"]}\n",
            "{\"session\": \"b\", \"session_end\": true}\n",
            "{\"session\": \"c\", \"labels\": [\"q\"]}\n",
            "{\"session\": \"b\", \"labels\": [\"p\"]}\n",
        ),
    );
    let o = trac(&[
        "audit",
        "--formula",
        "G(p -> F q)",
        "--format",
        "jsonl",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let name = t.to_str().unwrap();
    let ends: Vec<(String, u64)> = jsonl(&o)
        .iter()
        .filter(|v| v.get("end").is_some())
        .map(|v| {
            (
                v["trace"].as_str().unwrap().to_string(),
                v["steps"].as_u64().unwrap(),
            )
        })
        .collect();
    // In order of ending: a (2 steps), b (2 steps; the marker is no step), then at the end of
    // the file the open sessions by first appearance: c, and the second b.
    assert_eq!(
        ends,
        vec![
            (format!("{name}#a"), 2),
            (format!("{name}#b"), 2),
            (format!("{name}#c"), 1),
            (format!("{name}#b"), 1),
        ]
    );
}

#[test]
fn a_property_decided_before_the_first_step_is_reported_once() {
    // `F p & G !p` is unsatisfiable: ⊥ at step 0 (complete LTL3 verdicts), and TRAC_R restarts
    // cannot change that, so it is one violation, not one per step.
    let t = temp_file(
        "three-p.jsonl",
        "{\"labels\": [\"p\"]}\n{}\n{\"labels\": [\"p\"]}\n",
    );
    let o = trac(&[
        "audit",
        "--formula",
        "F p & G !p",
        "--format",
        "jsonl",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let lines: Vec<serde_json::Value> = jsonl(&o);
    let steps: Vec<u64> = lines
        .iter()
        .filter(|v| v.get("end").is_none())
        .map(|v| v["step"].as_u64().unwrap())
        .collect();
    assert_eq!(steps, vec![0]);
    assert_eq!(lines.last().unwrap()["violations"], 1);
}

#[test]
fn formula_atoms_unknown_to_the_specs_are_warned_about() {
    let o = trac(&[
        "audit",
        "--spec",
        "examples/specs/textworld.ron",
        "--formula",
        "G(jmp -> X drop)",
        "examples/traces/textworld-demo.txt",
    ]);
    let err = stderr(&o);
    assert!(err.contains("warning: --formula f1: `jmp`"), "{err}");
    assert!(
        !err.contains("`drop`"),
        "drop is declared by the spec: {err}"
    );
}

// ---- Piped traces (issue 8 §1.5): every input is opened once; `-` is standard input. ----

fn trac_cmd(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_trac-cli"));
    c.args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    c
}

/// Runs trac with `input` written to its standard input (then closed).
fn trac_stdin(args: &[&str], input: &[u8]) -> Output {
    use std::process::Stdio;
    let mut child = trac_cmd(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run trac");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // Written from a thread: trac may fill its stdout pipe before reading all its input.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("trac runs");
    writer.join().unwrap();
    out
}

/// `(property, verdict, step)` of a verdict object.
type VerdictAt = (String, String, u64);

/// `(property, verdict, step)` of every verdict object, and `(property, steps)` of every end
/// object.
fn verdicts_and_ends(o: &Output) -> (Vec<VerdictAt>, Vec<(String, u64)>) {
    let lines = jsonl(o);
    let verdicts = lines
        .iter()
        .filter(|v| v.get("end").is_none())
        .map(|v| {
            (
                v["property"].as_str().unwrap().to_string(),
                v["verdict"].as_str().unwrap().to_string(),
                v["step"].as_u64().unwrap(),
            )
        })
        .collect();
    let ends = lines
        .iter()
        .filter(|v| v.get("end").is_some())
        .map(|v| {
            (
                v["property"].as_str().unwrap().to_string(),
                v["steps"].as_u64().unwrap(),
            )
        })
        .collect();
    (verdicts, ends)
}

const SPEC: &str = "examples/specs/textworld.ron";
const LOG: &str = "examples/traces/textworld-demo.txt";

#[test]
fn standard_input_as_dash_and_dev_stdin_reads_every_step() {
    let base = ["audit", "--spec", SPEC, "--format", "jsonl"];
    let from_file = trac(&[&base[..], &[LOG]].concat());
    let (verdicts, ends) = verdicts_and_ends(&from_file);
    assert!(!verdicts.is_empty(), "the demo log has verdicts");
    assert!(ends.iter().all(|(_, n)| *n == 14), "{ends:?}");
    let log = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/traces/textworld-demo.txt"
    ))
    .unwrap();
    for name in ["-", "/dev/stdin"] {
        if name == "/dev/stdin" && !std::path::Path::new(name).exists() {
            continue;
        }
        let o = trac_stdin(&[&base[..], &[name]].concat(), &log);
        assert_eq!(o.status, from_file.status, "{name}: {}", stderr(&o));
        // The same verdicts at the same steps: the first line, read to detect the format, is
        // audited too.
        assert_eq!(
            verdicts_and_ends(&o),
            (verdicts.clone(), ends.clone()),
            "{name}"
        );
        let trace = jsonl(&o)[0]["trace"].as_str().unwrap().to_string();
        let expected = if name == "-" { "<stdin>" } else { name };
        assert_eq!(trace, expected);
    }
}

#[test]
fn process_substitution_reads_every_step() {
    // bash is on every machine this project supports (Linux): its absence is a failure.
    let t = temp_file(
        "subst.jsonl",
        "{\"labels\": [\"bad\"]}\n{}\n{\"labels\": [\"bad\"]}\n",
    );
    let script = format!(
        "exec \"$0\" audit --formula 'G !bad' --format jsonl <(cat '{}')",
        t.display()
    );
    let o = Command::new("bash")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_trac-cli"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let (verdicts, ends) = verdicts_and_ends(&o);
    let steps: Vec<u64> = verdicts.iter().map(|v| v.2).collect();
    assert_eq!(steps, [1, 3]);
    assert_eq!(ends, [("f1".to_string(), 3)]);
}

#[test]
fn a_named_pipe_keeps_its_first_line() {
    let dir = std::env::temp_dir().join(format!("trac-cli-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("trace.pipe");
    let _ = std::fs::remove_file(&fifo);
    // mkfifo is in every Unix's base system (coreutils): its absence is a failure, not a skip.
    let made = Command::new("mkfifo").arg(&fifo).status();
    assert!(
        matches!(made, Ok(s) if s.success()),
        "mkfifo failed: {made:?}"
    );
    let path = fifo.clone();
    // A plain-text log with no extension: its format must be sniffed from the first line,
    // which is also the step that violates.
    let writer = std::thread::spawn(move || {
        let mut w = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        for line in ["1. take knife", "2. look", "3. examine knife"] {
            writeln!(w, "{line}").unwrap();
            w.flush().unwrap();
        }
    });
    let o = trac(&[
        "audit",
        "--spec",
        SPEC,
        "--formula",
        "G !take(knife)",
        "--format",
        "jsonl",
        fifo.to_str().unwrap(),
    ]);
    writer.join().unwrap();
    let _ = std::fs::remove_file(&fifo);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let (verdicts, ends) = verdicts_and_ends(&o);
    assert!(
        verdicts.contains(&("f1".to_string(), "violated".to_string(), 1)),
        "{verdicts:?}"
    );
    assert!(ends.iter().all(|(_, n)| *n == 3), "{ends:?}");
}

/// `writer | trac ARGS`, where the writer is a shell that prints `first`, then waits for the
/// test's go-ahead before printing `rest`: trac must print its first line while the writer still
/// holds the pipe open. Returns that line, the lines after it, and trac's exit code.
fn first_line_before_the_writer_closes(
    first: &str,
    rest: &str,
    args: &[&str],
) -> (String, Vec<String>, Option<i32>) {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut writer = Command::new("sh")
        .arg("-c")
        .arg("printf '%s' \"$1\"; read go; printf '%s' \"$2\"")
        .arg("sh")
        .arg(first)
        .arg(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run sh");
    let mut go = writer.stdin.take().unwrap();
    let mut child = trac_cmd(args)
        .stdin(Stdio::from(writer.stdout.take().unwrap()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run trac");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let first = lines.next().map(Result::unwrap);
        tx.send(first).unwrap();
        lines.map(Result::unwrap).collect::<Vec<String>>()
    });
    // A deadlock guard, not a performance bound: without streaming, the first line would only
    // come after the writer closes, which it does not do until told to.
    let first = rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("no verdict while the writer holds the pipe open")
        .expect("trac printed a line");
    assert!(
        child.try_wait().unwrap().is_none(),
        "trac ended before its input did"
    );
    writeln!(go).unwrap();
    drop(go);
    writer.wait().unwrap();
    let rest = reader.join().unwrap();
    (first, rest, child.wait().unwrap().code())
}

/// One event, then (after the go-ahead) another: the first verdict streams.
fn first_verdict_arrives_before_the_writer_closes(format: &str, expect_first: &str) {
    let (first, rest, code) = first_line_before_the_writer_closes(
        "{\"output\": \"rm -rf /\", \"labels\": [\"bad\"]}\n",
        "{\"output\": \"ls\", \"labels\": []}\n",
        &["audit", "--formula", "G !bad", "--format", format, "-"],
    );
    assert!(first.contains(expect_first), "{first}");
    assert_eq!(code, Some(1), "{rest:?}");
    assert!(
        rest.iter()
            .any(|l| l.contains("(2 steps)") || l.contains("\"steps\":2")),
        "{rest:?}"
    );
}

#[test]
fn a_pipe_streams_jsonl_verdicts_as_events_arrive() {
    first_verdict_arrives_before_the_writer_closes("jsonl", "\"step\":1,\"trace\":\"<stdin>\"");
}

#[test]
fn a_pipe_streams_text_verdicts_as_events_arrive() {
    first_verdict_arrives_before_the_writer_closes("text", "<stdin>: f1 violated at step 1");
}

// ---- Silent passes (issue 8 §1.6). ----

#[test]
fn chat_lines_without_text_or_labels_are_not_audited() {
    let t = temp_file(
        "chat.jsonl",
        "{\"role\": \"user\", \"content\": \"hi\"}\n{\"role\": \"assistant\", \"content\": \"rm -rf /\"}\n",
    );
    let name = t.to_str().unwrap();
    // Read as JSON Lines events, chat lines have no text or labels.
    let o = trac(&[
        "audit",
        "--formula",
        "G !bad",
        "--format",
        "jsonl",
        "--input-format",
        "jsonl",
        name,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "warning: no event of {name} had text or labels: fields seen: role, content"
        )),
        "{err}"
    );
    // The unknown fields are listed once, in that warning.
    assert_eq!(err.matches("role").count(), 1, "{err}");
    let end = jsonl(&o).pop().unwrap();
    assert_eq!(end["steps"], 2);
    assert!(
        end["error"].as_str().unwrap().contains("not audited"),
        "{end}"
    );
}

#[test]
fn an_empty_trace_is_not_audited() {
    let t = temp_file("empty.jsonl", "\n\n");
    let o = trac(&["audit", "--formula", "G !bad", t.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("the trace is empty"), "{}", stderr(&o));
    assert!(stdout(&o).contains("not audited"), "{}", stdout(&o));
    let o = trac_stdin(&["audit", "--formula", "G !bad", "-"], b"");
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("<stdin>: not audited: the trace is empty"));
}

#[test]
fn a_formula_over_a_text_log_without_labeling_rules_is_not_audited() {
    let o = trac(&["audit", "--formula", "G(take -> X examine)", LOG]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "warning: no event of {LOG} had labels, and no --spec has labeling rules"
        )),
        "{err}"
    );
    // With the spec's rules the same log is understood and audited.
    let o = trac(&["audit", "--spec", SPEC, LOG]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    assert!(!stderr(&o).contains("not audited"), "{}", stderr(&o));
}

#[test]
fn a_typo_d_formula_atom_is_warned_about_without_a_spec() {
    let t = temp_file(
        "look.jsonl",
        "{\"labels\": [\"look\", \"take(knife)\"]}\n{\"labels\": [\"look\"]}\n",
    );
    let name = t.to_str().unwrap();
    let o = trac(&[
        "audit",
        "--formula",
        "G(lok -> X look)",
        "--formula",
        "forall x: G(take(x) -> F look)",
        name,
    ]);
    // A warning, not a failure: the verdicts stand.
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "warning: atom `lok` of f1 was never labeled in {name}"
        )),
        "{err}"
    );
    assert!(!err.contains("`look`"), "look is labeled: {err}");
    assert!(
        !err.contains("take(x)"),
        "take(knife) instantiates take(x): {err}"
    );
}

#[test]
fn ignored_event_fields_are_listed_once() {
    let t = temp_file(
        "extra.jsonl",
        "{\"labels\": [], \"role\": \"a\"}\n{\"labels\": [], \"role\": \"b\", \"meta\": 1}\n",
    );
    let o = trac(&["audit", "--formula", "G !bad", t.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("ignored")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("role, meta"), "{err}");
}

#[test]
fn a_spec_without_properties_checks_nothing() {
    let empty = temp_file("noprop.ron", "(name: \"labels only\", properties: [])");
    let t = temp_file("one-label.jsonl", "{\"labels\": [\"a\"]}\n");
    let o = trac(&[
        "audit",
        "--spec",
        empty.to_str().unwrap(),
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("declare(s) no property"),
        "{}",
        stderr(&o)
    );
    let o = trac(&[
        "audit",
        "--spec",
        empty.to_str().unwrap(),
        "--formula",
        "G a",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("declares no property"),
        "{}",
        stderr(&o)
    );
}

/// The engines as `trac audit` flags.
const ENGINES: [&[&str]; 4] = [
    &["--engine", "compiled"],
    &["--engine", "progression"],
    &["--engine", "progression", "--complete"],
    &["--engine", "cross-check"],
];

/// A JSON Lines trace with one event per step, each carrying `labels`.
fn labeled_trace(name: &str, steps: &[&[&str]]) -> std::path::PathBuf {
    let lines: String = steps
        .iter()
        .map(|l| format!("{}\n", serde_json::json!({ "labels": l })))
        .collect();
    temp_file(name, &lines)
}

/// `(verdict records as (step, verdict, value)), end object)` of one `--formula` audit.
fn audit_formula(
    engine: &[&str],
    extra: &[&str],
    formula: &str,
    trace: &std::path::Path,
) -> (Vec<(u64, String, Option<String>)>, serde_json::Value) {
    let mut args = vec!["audit", "--format", "jsonl", "--formula", formula];
    args.extend_from_slice(engine);
    args.extend_from_slice(extra);
    args.push(trace.to_str().unwrap());
    let o = trac(&args);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        stderr(&o)
    );
    let lines = jsonl(&o);
    let records = lines
        .iter()
        .filter(|v| v.get("end").is_none())
        .map(|v| {
            (
                v["step"].as_u64().unwrap(),
                v["verdict"].as_str().unwrap().to_string(),
                v["value"].as_str().map(str::to_string),
            )
        })
        .collect();
    let end = lines.last().expect("an end object").clone();
    assert_eq!(end["end"], true);
    (records, end)
}

#[test]
fn trac_r_counts_each_failing_position_once_in_every_engine() {
    // Issue 8 §1.1: a failure known one step before its own position was counted twice by the
    // complete engines (reported early, then again when the restart re-read that position).
    // (formula, trace, violations, violation steps of the complete engines, of progression)
    type Case<'a> = (&'a str, &'a [&'a [&'a str]], u64, &'a [u64], &'a [u64]);
    let cases: [Case<'_>; 3] = [
        ("Y a", &[&["a"]], 1, &[0], &[1]),
        (
            "G(Y a)",
            &[&["a"], &["a"], &[], &["a"]],
            2,
            &[0, 3],
            &[1, 4],
        ),
        (
            "G(Y true -> Y valid)",
            &[&["valid"], &[], &["valid"], &["valid"]],
            1,
            &[2],
            &[3],
        ),
    ];
    for (k, (formula, steps, count, complete_at, plain_at)) in cases.iter().enumerate() {
        let t = labeled_trace(&format!("past{k}.jsonl"), steps);
        for engine in ENGINES {
            let (records, end) = audit_formula(engine, &[], formula, &t);
            let ctx = format!("{formula} with {engine:?}");
            assert_eq!(end["violations"], *count, "{ctx}: {records:?}");
            let at: Vec<u64> = records
                .iter()
                .filter(|r| r.1 == "violated")
                .map(|r| r.0)
                .collect();
            let want = if engine == ["--engine", "progression"] {
                plain_at
            } else {
                complete_at
            };
            assert_eq!(at, *want, "{ctx}");
        }
    }
}

#[test]
fn a_forall_verdict_covers_the_values_not_seen_yet_in_every_engine() {
    // Issue 8 §1.2: `forall f: !bad(f) U done(f)` after `{done(a)}` is not satisfied: a value
    // not seen yet may still go bad, as `b` does at the next step.
    let one = labeled_trace("forall1.jsonl", &[&["done(a)"]]);
    let two = labeled_trace("forall2.jsonl", &[&["done(a)"], &["bad(b)"]]);
    let until = "forall f: !bad(f) U done(f)";
    for engine in ENGINES {
        let (records, end) = audit_formula(engine, &[], until, &one);
        assert_eq!(end["verdict"], "pending", "{engine:?}: {end}");
        // Finite trace: a value never done violates it.
        assert_eq!(end["ltlf"], "violated", "{engine:?}: {end}");
        assert!(
            !records.iter().any(|r| r.1 == "satisfied" && r.2.is_none()),
            "{engine:?}: {records:?}"
        );
        for extra in [&[][..], &["--no-reset"]] {
            let (records, end) = audit_formula(engine, extra, until, &two);
            assert!(
                records.contains(&(2, "violated".into(), Some("b".into()))),
                "{engine:?} {extra:?}: {records:?}"
            );
            assert_eq!(end["violations"], 1, "{engine:?} {extra:?}: {end}");
            // TRAC_R restarted `b`'s run; plain TRAC keeps it violated.
            let want = if extra.is_empty() {
                "pending"
            } else {
                "violated"
            };
            assert_eq!(end["verdict"], want, "{engine:?} {extra:?}: {end}");
        }
    }
    // `forall f: G(write(f) -> O init)` after `{init}` is satisfied for every value, although
    // none was seen: reported at step 1 (value null) by the complete engines. Plain progression
    // cannot fold the residual and stays pending (sound, not complete).
    let init = labeled_trace("forall3.jsonl", &[&["init"]]);
    for engine in ENGINES {
        let (records, end) = audit_formula(engine, &[], "forall f: G(write(f) -> O init)", &init);
        if engine == ["--engine", "progression"] {
            assert_eq!(end["verdict"], "pending", "{end}");
            assert!(records.is_empty(), "{records:?}");
        } else {
            assert_eq!(end["verdict"], "satisfied", "{engine:?}: {end}");
            assert_eq!(records, vec![(1, "satisfied".into(), None)], "{engine:?}");
        }
        assert_eq!(end["ltlf"], "satisfied", "{engine:?}: {end}");
    }
}

#[test]
fn a_violation_of_every_value_not_seen_yet_is_reported_once_in_every_engine() {
    // `forall x: X take(x)` is violated at step 2 for every value not taken there. Before, the
    // template's violation was only replayed to values appearing later: with none, the audit
    // ended `violated` with 0 violations and exit code 0 (a silent pass).
    let none = labeled_trace("unseen1.jsonl", &[&[], &[]]);
    let late = labeled_trace("unseen2.jsonl", &[&[], &[], &["take(apple)"]]);
    let formula = "forall x: X take(x)";
    let null = |step: u64| (step, "violated".to_string(), None::<String>);
    let apple = |step: u64, verdict: &str| (step, verdict.to_string(), Some("apple".to_string()));
    for engine in ENGINES {
        // Exit code 1: a violation is counted.
        let mut args = vec!["audit", "--no-reset", "--formula", formula];
        args.extend_from_slice(engine);
        args.push(none.to_str().unwrap());
        assert_eq!(trac(&args).status.code(), Some(1), "{engine:?}");
        let (records, end) = audit_formula(engine, &["--no-reset"], formula, &none);
        assert_eq!(records, vec![null(2)], "{engine:?}");
        assert_eq!(end["violations"], 1, "{engine:?}: {end}");
        assert_eq!(end["verdict"], "violated", "{engine:?}: {end}");
        // `apple` appears at step 3 and inherits the step-2 violation: reported again for the
        // value, with its original step, but counted once (the count moves to the value).
        let (records, end) = audit_formula(engine, &["--no-reset"], formula, &late);
        assert_eq!(records, vec![null(2), apple(2, "violated")], "{engine:?}");
        assert_eq!(end["violations"], 1, "{engine:?}: {end}");
        assert_eq!(end["instances"][0]["violations"], 1, "{engine:?}: {end}");
        // TRAC_R: the template restarts at step 2 and fails again at step 3 for the values not
        // seen yet, while apple (a copy of the restarted template) meets `take(apple)` there.
        // Counted: apple's inherited failure at 2, and the template's at 3 (no value had it).
        let (records, end) = audit_formula(engine, &[], formula, &late);
        assert_eq!(
            records,
            vec![
                null(2),
                apple(2, "violated"),
                apple(3, "satisfied"),
                null(3)
            ],
            "{engine:?}"
        );
        assert_eq!(end["violations"], 2, "{engine:?}: {end}");
    }
}

#[test]
fn an_ltlf_obligation_of_every_value_not_seen_yet_counts_at_the_end() {
    // `forall f: F done(f)` as an ltlf property: at the end of a trace where no value was
    // done, every value not seen yet has an open obligation (the end verdict is violated).
    // Before, only the values seen were checked: 0 violations, exit 0.
    let spec = temp_file(
        "lf_forall.ron",
        "(name: \"l\", properties: [(id: \"D\", formula: \"forall f: F done(f)\", semantics: Ltlf)])",
    );
    let t = labeled_trace("lf_forall.jsonl", &[&[], &["done(a)"]]);
    let o = trac(&[
        "audit",
        "--spec",
        spec.to_str().unwrap(),
        "--format",
        "jsonl",
        t.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let lines = jsonl(&o);
    let null: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|v| v.get("end").is_none() && v["value"].is_null())
        .collect();
    assert_eq!(null.len(), 1, "{}", stdout(&o));
    assert_eq!(null[0]["step"], 2);
    assert_eq!(null[0]["verdict"], "violated");
    let end = lines.last().unwrap();
    assert_eq!(end["verdict"], "violated", "{end}");
    assert_eq!(end["violations"], 1, "{end}");
}

const FIXTURES: &str = "crates/trac-runtime/tests/fixtures";
const AIRLINE: &str = "examples/specs/airline.ron";

/// `(trace, property, step, value)` of every violation in a `--format jsonl` report, sorted.
fn violations(o: &Output) -> Vec<(String, String, u64, Option<String>)> {
    let mut v: Vec<_> = jsonl(o)
        .into_iter()
        .filter(|r| r["verdict"] == "violated" && r.get("end").is_none())
        .map(|r| {
            let trace = r["trace"].as_str().unwrap();
            let short = trace.rsplit('/').next().unwrap().to_string();
            (
                short,
                r["property"].as_str().unwrap().to_string(),
                r["step"].as_u64().unwrap(),
                r["value"].as_str().map(str::to_string),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn chat_and_telemetry_logs_with_tool_calls_are_audited() {
    // Violations derived by hand from the fixtures (see their comments in
    // crates/trac-runtime/tests/formats.rs and examples/specs/airline.ron).
    let v = |t: &str, p: &str, s: u64, val: Option<&str>| {
        (t.to_string(), p.to_string(), s, val.map(str::to_string))
    };
    let cases: Vec<(&str, Vec<_>)> = vec![
        (
            "openai_airline.json",
            vec![
                v(
                    "openai_airline.json",
                    "airline:confirm-before-write",
                    7,
                    Some("ZFA04Y"),
                ),
                v("openai_airline.json", "airline:no-text-with-call", 10, None),
            ],
        ),
        (
            "openai_sessions.jsonl",
            vec![v(
                "openai_sessions.jsonl#7",
                "airline:lookup-before-write",
                2,
                None,
            )],
        ),
        (
            "openai_conversations.json",
            vec![v(
                "openai_conversations.json#conv-a",
                "airline:lookup-before-write",
                2,
                None,
            )],
        ),
        (
            "anthropic.json",
            vec![
                v(
                    "anthropic.json#anth-1",
                    "airline:confirm-before-write",
                    5,
                    Some("K7L8M9"),
                ),
                v(
                    "anthropic.json#anth-1",
                    "airline:no-text-with-call",
                    3,
                    None,
                ),
            ],
        ),
        (
            "otlp.json",
            // Trace 0af7...: span 0101 (no roles: one assistant step), then span 0102, whose
            // last input message is the user's "Yes, add the two bags." (step 2, a
            // confirmation) before the call's write (step 3): confirmed, but never looked up.
            // Trace 5b8a...: the user's request (step 1, no confirmation), the write (step 2),
            // the tool's execution (step 3).
            vec![
                v(
                    "otlp.json#0af7651916cd43dd8448eb211c80319c",
                    "airline:lookup-before-write",
                    3,
                    None,
                ),
                v(
                    "otlp.json#5b8aa5a2d2c872e8321cf37308d69df2",
                    "airline:confirm-before-write",
                    2,
                    Some("OTL001"),
                ),
                v(
                    "otlp.json#5b8aa5a2d2c872e8321cf37308d69df2",
                    "airline:lookup-before-write",
                    2,
                    None,
                ),
            ],
        ),
    ];
    for (file, mut expected) in cases {
        let path = format!("{FIXTURES}/{file}");
        let o = trac(&["audit", "--spec", AIRLINE, "--format", "jsonl", &path]);
        assert_eq!(o.status.code(), Some(1), "{file}: {}", stderr(&o));
        assert!(!stderr(&o).contains("not audited"), "{}", stderr(&o));
        expected.sort();
        let mut got = violations(&o);
        // Property ids may or may not be namespaced by the spec's name.
        for g in &mut got {
            if !g.1.contains(':') {
                g.1 = format!("airline:{}", g.1);
            }
        }
        assert_eq!(got, expected, "{file}");
    }
    // The log's own step and timestamp are shown next to trac's step.
    let o = trac(&[
        "audit",
        "--spec",
        AIRLINE,
        "--format",
        "jsonl",
        &format!("{FIXTURES}/otlp.json"),
    ]);
    let rec = jsonl(&o)
        .into_iter()
        .find(|r| r["verdict"] == "violated")
        .unwrap();
    assert_eq!(rec["timestamp"], "1717000001000000000", "{rec}");
    let o = trac(&["audit", "--spec", AIRLINE, &format!("{FIXTURES}/otlp.json")]);
    assert!(
        stdout(&o).contains("(at 1717000001000000000)"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn input_format_and_step_per_turn_flags() {
    let path = format!("{FIXTURES}/openai_airline.json");
    // One step per turn (turns start at messages 1, 2, 6, 9): the unconfirmed update (message
    // 7) is in turn 3; turns 2 and 4 have text and a tool call; turn 4's update is confirmed in
    // the same turn (message 9).
    let o = trac(&[
        "audit",
        "--spec",
        AIRLINE,
        "--format",
        "jsonl",
        "--step-per",
        "turn",
        &path,
    ]);
    let got: Vec<(String, u64)> = violations(&o)
        .into_iter()
        .map(|(_, p, s, _)| (p.rsplit(':').next().unwrap().to_string(), s))
        .collect();
    assert_eq!(
        got,
        [
            ("confirm-before-write".to_string(), 3),
            ("no-text-with-call".to_string(), 2),
            ("no-text-with-call".to_string(), 4)
        ]
    );
    // Read as OTLP, a chat document is an error.
    let o = trac(&["audit", "--spec", AIRLINE, "--input-format", "otlp", &path]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = trac(&["audit", "--spec", AIRLINE, "--input-format", "yaml", &path]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("invalid value 'yaml'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn trace_labels_and_rule_less_propositions_that_never_meet_the_spec_are_warned_about() {
    let spec = temp_file(
        "confirm-spec.ron",
        r#"(name: "booking", propositions: [
            (name: "confirm"),
            (name: "book", rule: Some(Regex("book"))),
        ], properties: [
            (id: "C1", formula: "G(book -> O confirm)"),
        ])"#,
    );
    let spec = spec.to_str().unwrap();
    // The trace spells the proposition `confirmed`: without the warning, `confirm` silently
    // never holds.
    let t = temp_file(
        "confirmed.jsonl",
        "{\"labels\": [\"confirmed\"], \"output\": \"ok\"}\n{\"labels\": [], \"output\": \"book it\"}\n",
    );
    let name = t.to_str().unwrap();
    let o = trac(&["audit", "--spec", spec, name]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "warning: {name}: label(s) `confirmed` match no proposition of the spec(s) and were ignored"
        )),
        "{err}"
    );
    // A text log gives no labels: `confirm` has no rule, so it can never hold.
    let t = temp_file("confirm.txt", "confirm please\nbook it\n");
    let name = t.to_str().unwrap();
    let o = trac(&["audit", "--spec", spec, name]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "warning: {name}: proposition `confirm` has no labeling rule and the trace gives no labels: it never held"
        )),
        "{err}"
    );
    assert!(!err.contains("`book`"), "book has a rule: {err}");
    // Declared labels draw no warning.
    let t = temp_file(
        "confirm-ok.jsonl",
        "{\"labels\": [\"confirm\"]}\n{\"labels\": [\"book\"]}\n",
    );
    let o = trac(&["audit", "--spec", spec, t.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
}

// ---- No lost verdict, no abort (issue 21 §3, §4). ----

/// Three interleaved sessions; line 3, of session `b`, is cut.
const THREE_SESSIONS: &str = concat!(
    "{\"session\": \"a\", \"labels\": [\"look\"]}\n",
    "{\"session\": \"b\", \"labels\": [\"look\"]}\n",
    "{\"session\": \"b\", \"labels\": [\"look\"\n",
    "{\"session\": \"a\", \"labels\": [\"look\"]}\n",
    "{\"session\": \"b\", \"labels\": [\"look\"]}\n",
    "{\"session\": \"c\", \"labels\": [\"look\"]}\n",
    "{\"session\": \"c\", \"labels\": [\"look\"]}\n",
);

#[test]
fn a_bad_line_stops_only_its_own_session() {
    let t = temp_file("three-sessions.jsonl", THREE_SESSIONS);
    let name = t.to_str().unwrap();
    let audit = |extra: &[&str]| {
        let mut args = vec!["audit", "--formula", "G(look -> X !look)"];
        args.extend_from_slice(extra);
        args.push(name);
        trac(&args)
    };
    let o = audit(&["--format", "jsonl"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = format!("{name}:3:34: EOF while parsing a list");
    assert!(
        stderr(&o).contains(&format!("error: {err}")),
        "{}",
        stderr(&o)
    );
    let lines = jsonl(&o);
    // Sessions a and c keep all their verdicts: each violates at its step 2 (after the bad line).
    let violations: Vec<(&str, u64)> = lines
        .iter()
        .filter(|v| v.get("end").is_none() && v["verdict"] == "violated")
        .map(|v| (v["trace"].as_str().unwrap(), v["step"].as_u64().unwrap()))
        .collect();
    let (a, b, c) = (
        format!("{name}#a"),
        format!("{name}#b"),
        format!("{name}#c"),
    );
    assert_eq!(violations, [(a.as_str(), 2), (c.as_str(), 2)]);
    // Session b ends at its error, after its one good step; its later line is not audited.
    let ends: Vec<(&str, u64, &serde_json::Value)> = lines
        .iter()
        .filter(|v| v.get("end").is_some())
        .map(|v| {
            (
                v["trace"].as_str().unwrap(),
                v["steps"].as_u64().unwrap(),
                &v["error"],
            )
        })
        .collect();
    let null = serde_json::Value::Null;
    assert_eq!(
        ends,
        [
            (b.as_str(), 1, &serde_json::Value::from(err.as_str())),
            (a.as_str(), 2, &null),
            (c.as_str(), 2, &null)
        ]
    );
    // The other formats show b's error and a's and c's violations.
    let o = audit(&["--summary"]);
    assert_eq!(o.status.code(), Some(2));
    let s = stdout(&o);
    assert!(
        s.contains(&format!("{b}  f1        pending (until error)")),
        "{s}"
    );
    assert!(s.contains(&format!("{a}  f1        violated")), "{s}");
    assert!(s.contains(&format!("{c}  f1        violated")), "{s}");
    let o = audit(&["--format", "text"]);
    assert!(
        stdout(&o).contains(&format!("stopped early: {err}")),
        "{}",
        stdout(&o)
    );
    let o = audit(&["--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let errors: Vec<&serde_json::Value> =
        v.as_array().unwrap().iter().map(|t| &t["error"]).collect();
    assert_eq!(
        errors,
        [&serde_json::Value::from(err.as_str()), &null, &null]
    );
    let o = audit(&["--format", "sarif"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let run = &v["runs"][0];
    assert_eq!(run["results"].as_array().unwrap().len(), 2);
    let n = &run["invocations"][0]["toolExecutionNotifications"][0];
    assert_eq!(n["message"]["text"], err.as_str());
    assert_eq!(
        n["locations"][0]["physicalLocation"]["region"]["startLine"],
        3
    );
    // `-j 2` gives `-j 1`'s output, over two such files.
    let t2 = temp_file("three-sessions-2.jsonl", THREE_SESSIONS);
    let run_j = |j: &str| {
        trac(&[
            "audit",
            "--formula",
            "G(look -> X !look)",
            "--format",
            "jsonl",
            "-j",
            j,
            name,
            t2.to_str().unwrap(),
        ])
    };
    let (one, two) = (run_j("1"), run_j("2"));
    assert_eq!((one.stdout, one.stderr), (two.stdout, two.stderr));
}

/// The airline chat log cut inside its last message (line 13, message 12).
fn cut_airline() -> (String, std::path::PathBuf) {
    let full = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../trac-runtime/tests/fixtures/openai_airline.json"
    ))
    .unwrap();
    let last = full.lines().nth(12).unwrap();
    assert!(last.starts_with("  {\"role\""), "{last}");
    let cut_at = full.find(last).unwrap() + last.len() / 2;
    (full.clone(), temp_file("airline-cut.json", &full[..cut_at]))
}

#[test]
fn a_cut_chat_array_keeps_the_verdicts_of_its_complete_messages() {
    let (_, t) = cut_airline();
    let name = t.to_str().unwrap();
    let o = trac(&[
        "audit",
        "--spec",
        "examples/specs/airline.ron",
        "--format",
        "jsonl",
        name,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = format!("{name}:13:3: message 12: the input ends inside it");
    assert!(
        stderr(&o).contains(&format!("error: {err}")),
        "{}",
        stderr(&o)
    );
    let (verdicts, ends) = verdicts_and_ends(&o);
    let violated: Vec<(&str, u64)> = verdicts
        .iter()
        .filter(|v| v.1 == "violated")
        .map(|v| (v.0.as_str(), v.2))
        .collect();
    assert_eq!(
        violated,
        [("confirm-before-write", 7), ("no-text-with-call", 10)]
    );
    assert!(ends.iter().all(|e| e.1 == 11), "{ends:?}");
    let o = trac(&[
        "audit",
        "--spec",
        "examples/specs/airline.ron",
        "--format",
        "sarif",
        name,
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let n = &v["runs"][0]["invocations"][0]["toolExecutionNotifications"][0];
    assert_eq!(
        n["locations"][0]["physicalLocation"]["region"]["startLine"],
        13
    );
    assert!(
        n["message"]["text"].as_str().unwrap().starts_with(&err),
        "{n}"
    );
}

#[test]
fn a_piped_chat_array_streams_its_verdicts() {
    let (full, _) = cut_airline();
    // The writer sends the array up to message 7 (lines 1-8), waits, then sends the rest.
    let k = full.match_indices('\n').nth(7).unwrap().0 + 1;
    let (first, rest, code) = first_line_before_the_writer_closes(
        &full[..k],
        &full[k..],
        &[
            "audit",
            "--spec",
            "examples/specs/airline.ron",
            "--format",
            "jsonl",
            "-",
        ],
    );
    // Read whole, the array would give no verdict before the writer closes.
    assert!(first.contains("\"step\":3"), "{first}");
    assert_eq!(code, Some(1), "{rest:?}");
    assert!(rest.iter().any(|l| l.contains("\"steps\":12")), "{rest:?}");
}

/// Runs trac on standard input fed endlessly with `a`s and no newline (as `/dev/zero` would),
/// until trac closes it.
fn trac_endless_line(extra: &[&str]) -> Output {
    use std::process::Stdio;
    let mut args = vec!["audit", "--formula", "G !p"];
    args.extend_from_slice(extra);
    args.push("-");
    let mut child = trac_cmd(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run trac");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let chunk = [b'a'; 1 << 16];
        // Ends when trac closes the pipe (a broken pipe).
        while stdin.write_all(&chunk).is_ok() {}
    });
    let out = child.wait_with_output().expect("trac runs");
    writer.join().unwrap();
    out
}

#[test]
fn an_endless_line_is_an_error_at_its_line_not_an_abort() {
    let o = trac_endless_line(&["--max-line-bytes", "100000"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains(
            "error: <stdin>:1: the line is longer than 100000 bytes (the limit, --max-line-bytes)"
        ),
        "{e}"
    );
    assert!(!e.contains("panicked"), "{e}");
    // The default limit (64 MiB) holds too.
    let o = trac_endless_line(&[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("longer than 67108864 bytes"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn jsonl_action_is_audited_as_the_output_and_unread_text_fields_are_named() {
    let spec = temp_file(
        "take.ron",
        r#"(name: "take", propositions: [(name: "take", rule: Some(Words("take")))],
            properties: [(id: "no-take", formula: "G !take")])"#,
    );
    let t = temp_file(
        "action.jsonl",
        concat!(
            "{\"input\": \"You see a knife.\", \"action\": \"take knife\"}\n",
            "{\"input\": \"You hold a knife.\", \"text\": \"take it\", \"action\": \"look\"}\n",
        ),
    );
    let name = t.to_str().unwrap();
    let o = trac(&["audit", "--spec", spec.to_str().unwrap(), name]);
    // The action was audited (it was only an "ignored field" before: 0 violations).
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("note: {name}: field `action` read as `output`")),
        "{err}"
    );
    assert!(
        err.contains(&format!("warning: {name}: field `text` may hold the step's text, but trac does not read it (it read `input`, `action`)")),
        "{err}"
    );
}

#[test]
fn rules_on_roles_and_tools_over_a_trace_without_them_are_not_audited() {
    let chat = "crates/trac-runtime/tests/fixtures/openai_airline.json";
    let spec = "examples/specs/airline.ron";
    // Read as text, the chat log has no roles or tool calls: every property of the airline spec
    // reads them, so none was audited (it was "0 violations", exit 0).
    let o = trac(&["audit", "--spec", spec, "--input-format", "text", chat]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("warning: {chat}: proposition `confirm` can never hold: `Role(\"user\")` needs message roles")),
        "{err}"
    );
    assert!(
        err.contains(&format!("error: {chat}: not audited: the propositions of every property can never hold on it: confirm-before-write (modify, confirm); lookup-before-write (write, lookup)")),
        "{err}"
    );
    // The same log read as chat is audited (it has violations).
    let o = trac(&["audit", "--spec", spec, chat]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stderr(&o).contains("can never hold"), "{}", stderr(&o));
    // A text log, a property on text next to one on roles: the first is audited, the second
    // is an error (exit 2).
    let mixed = temp_file(
        "mixed.ron",
        r#"(name: "mixed", propositions: [
              (name: "look", rule: Some(Words("look"))),
              (name: "confirm", rule: Some(AllOf([Role("user"), Words("yes")]))),
              (name: "write", rule: Some(Tool("update_*")))],
            properties: [(id: "no-look", formula: "G !look"),
                         (id: "confirm-first", formula: "G(write -> O confirm)")])"#,
    );
    let t = temp_file("looks.txt", "1. look\n2. yes\n");
    let name = t.to_str().unwrap();
    let o = trac(&["audit", "--spec", mixed.to_str().unwrap(), name]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("error: {name}: property confirm-first not audited: its propositions (write, confirm) can never hold on this trace")),
        "{err}"
    );
    assert!(
        err.contains(&format!("warning: {name}: proposition `write` can never hold: `Tool(\"update_*\")` needs tool calls")),
        "{err}"
    );
    assert!(stdout(&o).contains("no-look"), "{}", stdout(&o));
    assert!(stdout(&o).contains("1 violation(s)"), "{}", stdout(&o));
    // Labels given by the trace may make them hold: no claim then.
    let labeled = temp_file("labeled.jsonl", "{\"labels\": [\"write\"]}\n");
    let o = trac(&[
        "audit",
        "--spec",
        mixed.to_str().unwrap(),
        labeled.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stderr(&o).contains("can never hold"), "{}", stderr(&o));
}

#[test]
fn two_specs_declaring_one_proposition_with_different_rules_are_an_error() {
    let a = temp_file(
        "a.ron",
        "(name: \"a\",\n propositions: [\n  (name: \"go\", rule: Some(Words(\"go north\")))],\n properties: [(id: \"A1\", formula: \"G !go\")])",
    );
    let b = temp_file(
        "b.ron",
        "(name: \"b\", propositions: [(name: \"look\", rule: Some(Words(\"look\"))),\n    (name: \"go\", rule: Some(Words(\"go\")))],\n properties: [(id: \"B1\", formula: \"G !look\")])",
    );
    let same = temp_file(
        "same.ron",
        "(name: \"same\", propositions: [(name: \"go\", rule: Some(Words(\"go north\")))], properties: [(id: \"C1\", formula: \"G !go\")])",
    );
    // "go south" is no `go north`: A1 holds by a's rule; b's rule would violate it.
    let t = temp_file("south.txt", "1. go south\n");
    let (a, b, same, t) = (
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        same.to_str().unwrap(),
        t.to_str().unwrap(),
    );
    let o = trac(&["audit", "--spec", a, "--spec", b, t]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert_eq!(
        stderr(&o).trim_end(),
        format!("error: proposition `go` is declared with different rules at {a}:3:10 and at {b}:2:12: the labeling is shared by every spec, so one spec's properties would be decided by the other's rule; rename one of them")
    );
    // The same declaration in two specs is a shared vocabulary.
    let o = trac(&["audit", "--spec", a, "--spec", same, t]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn flags_the_input_makes_meaningless_are_refused_or_warned_about() {
    let spec = "examples/specs/textworld.ron";
    let log = "examples/traces/textworld-demo.txt";
    // --step-per turn on a text log: each line is a step whatever the flag.
    let o = trac(&["audit", "--spec", spec, "--step-per", "turn", log]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "warning: {log}: --step-per turn has no effect: a text trace has no messages"
        )),
        "{}",
        stderr(&o)
    );
    // --model with --labeler rules: the model would never be asked.
    let o = trac(&[
        "audit",
        "--spec",
        spec,
        "--labeler",
        "rules",
        "--model",
        "cmd:false",
        log,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("error: --model with --labeler rules"),
        "{}",
        stderr(&o)
    );
    // --input-format anthropic on an OpenAI file, and the other way round.
    let openai = "crates/trac-runtime/tests/fixtures/openai_airline.json";
    let o = trac(&[
        "audit",
        "--spec",
        "examples/specs/airline.ron",
        "--input-format",
        "anthropic",
        openai,
    ]);
    // An explicitly chosen format the input does not match is bad input, at its line.
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "error: {openai}:4:1: --input-format anthropic, but this is openai chat (`tool_calls`)"
        )),
        "{}",
        stderr(&o)
    );
    let anthropic = "crates/trac-runtime/tests/fixtures/anthropic.json";
    let o = trac(&[
        "audit",
        "--spec",
        "examples/specs/airline.ron",
        "--input-format",
        "openai",
        anthropic,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "error: {anthropic}:1:1: --input-format openai, but this is anthropic chat"
        )),
        "{}",
        stderr(&o)
    );
    let o = trac(&["audit", "--spec", "examples/specs/airline.ron", openai]);
    assert!(!stderr(&o).contains("--input-format"), "{}", stderr(&o));
}

#[test]
fn otlp_messages_that_are_not_json_are_an_error_not_fewer_violations() {
    let intact = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../trac-runtime/tests/fixtures/otlp.json"
    ))
    .unwrap();
    // Span 0001's output messages (its tool call) become "not json": dropping them silently
    // lost the two violations of the first trace.
    let out_msgs = "\"[{\\\"role\\\": \\\"assistant\\\", \\\"parts\\\"";
    assert!(intact.contains(out_msgs));
    let broken = intact.replacen(out_msgs, "\"not json\", \"x\": \"", 1);
    let t = temp_file("otlp-broken.json", &broken);
    let name = t.to_str().unwrap();
    let o = trac(&[
        "audit",
        "--spec",
        "examples/specs/airline.ron",
        "--summary",
        name,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains(&format!(
            "error: {name}:23: span 0001: attribute `gen_ai.output.messages` is not valid JSON"
        )),
        "{}",
        stderr(&o)
    );
}

/// From a new-user trial: `--max-line-bytes 0` would refuse every line, so it is a usage error;
/// and a file of one session says nothing of "other sessions" after that session's error.
#[test]
fn a_zero_line_bound_is_refused_and_one_session_has_no_other_sessions() {
    let o = trac(&[
        "audit",
        "--formula",
        "G !p",
        "--max-line-bytes",
        "0",
        "examples/traces/textworld-demo.txt",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--max-line-bytes"), "{}", stderr(&o));
    let t = temp_file(
        "one-session.json",
        "[{\"role\": \"user\", \"content\": \"a\"},\n{\"role\": }]\n",
    );
    let o = trac(&["audit", "--formula", "G !p", t.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("error:"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("other sessions"), "{}", stderr(&o));
    // With two sessions, the note is there.
    let t = temp_file(
        "two-sessions.jsonl",
        "{\"session\": \"a\", \"labels\": [\"p\"]}\n{\"session\": \"b\", \"labels\": [\"p\"\n",
    );
    let o = trac(&["audit", "--formula", "G !p", t.to_str().unwrap()]);
    assert!(stderr(&o).contains("other sessions"), "{}", stderr(&o));
}

/// From a new-user trial: once an error stops a session, its later errors are not printed (what
/// follows in that session is not audited), so the first error is the one shown.
#[test]
fn a_stopped_session_reports_its_first_error_only() {
    let t = temp_file(
        "cascade.json",
        "[\n{\"role\":\"user\",\"content\":\"a\"},\n{\"role\":\"asistant\",\"content\":\"b\"},\n{\"role\":\"user\",\"content\":\"c\"},\n{\"role\": 5 5},\n{\"role\":\"user\",\"content\":\"d\"}\n]\n",
    );
    let o = trac(&["audit", "--formula", "G !p", t.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].contains(":3:1: message 2: unknown role"),
        "{errors:?}"
    );
    // The text report's footer counts it, as the summary's does.
    assert!(
        stdout(&o).ends_with("0 violation(s) in 1 trace(s), 1 with an error (above)\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn the_agent_rules_example_is_audited() {
    // Violations derived by hand from examples/traces/agent-rules-demo.json (one step per
    // message: 1 system, 2 user, 3 lookup_order, 5/7/9 web_search, 11 the assistant asks,
    // 12 the user confirms, 13 issue_refund, 15 the assistant answers, 16/18/20 send_email,
    // 21 the last tool result).
    let o = trac(&[
        "audit",
        "--spec",
        "examples/specs/agent-rules.ron",
        "--format",
        "jsonl",
        "examples/traces/agent-rules-demo.json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let got: Vec<(String, u64)> = violations(&o)
        .into_iter()
        .map(|(_, p, s, _)| (p, s))
        .collect();
    let want: Vec<(String, u64)> = [
        // The third email at 20; under TRAC_R the rule starts over and the run so far still
        // holds 3 emails at 21.
        ("at-most-2-emails", 20),
        ("at-most-2-emails", 21),
        // Searches at 5, 7, 9: three in the 5 steps 5..9.
        ("no-search-spree", 9),
        // No save_note: the last step, 21, is the end without a note.
        ("note-by-end", 21),
        // One lookup (step 3) before the refund at 13.
        ("two-lookups-before-refund", 13),
    ]
    .iter()
    .map(|(p, s)| (p.to_string(), *s))
    .collect();
    assert_eq!(got, want);
    // The confirmation at 12 is within `O[1:4]` of the refund at 13, and the answer at 15
    // within `F[1:2!]`.
    let text = trac(&[
        "audit",
        "--spec",
        "examples/specs/agent-rules.ron",
        "examples/traces/agent-rules-demo.json",
    ]);
    let out = stdout(&text);
    assert!(out.contains("formula: G(count[5](search) <= 2)"), "{out}");
    assert!(
        out.contains("meaning: always, if the assistant issues a refund, then within 1 to 2 steps (which must exist) the assistant writes to the user"),
        "{out}"
    );
}

/// Issue 24 (comparing captured values): `send-to-given` of examples/specs/agent-tools.ron,
/// `forall to, u: G(send(to) & O gave(u) -> to = u)`, through `trac audit`; expected steps
/// derived by hand.
#[test]
fn agent_tool_rules_compare_captured_values() {
    let call = |id: &str, name: &str, args: &str| {
        format!(
            r#"{{"role": "assistant", "content": null, "tool_calls": [{{"id": "{id}", "type": "function", "function": {{"name": "{name}", "arguments": {args:?}}}}}]}}"#
        )
    };
    let msgs = [
        // Step 1: the user gives `mia.li@x.org` (`gave`, a text capture, lowercased).
        r#"{"role": "user", "content": "Mail the report to mia.li@x.org please."}"#.to_string(),
        // Step 2: to the address given: (mia.li@x.org, mia.li@x.org) has `to = u`.
        call("c1", "send_email", r#"{"to": "mia.li@x.org"}"#),
        r#"{"role": "tool", "tool_call_id": "c1", "content": "sent"}"#.to_string(),
        // Step 4: to another address: (bob@y.org, mia.li@x.org) breaks the rule.
        call("c2", "send_email", r#"{"to": "bob@y.org"}"#),
        // Step 5: to the address given again: no violation.
        call("c3", "send_sms", r#"{"to": "mia.li@x.org"}"#),
    ];
    let log = temp_file("agent-compare.jsonl", &(msgs.join("\n") + "\n"));
    let o = trac(&[
        "audit",
        "--spec",
        "examples/specs/agent-tools.ron",
        "--format",
        "jsonl",
        log.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let got: Vec<(String, u64, Option<String>)> = violations(&o)
        .into_iter()
        .map(|(_, p, s, v)| (p.trim_start_matches("agent-tools:").to_string(), s, v))
        .filter(|(p, _, _)| p == "send-to-given")
        .collect();
    assert_eq!(
        got,
        [(
            "send-to-given".to_string(),
            4,
            Some("bob@y.org, mia.li@x.org".to_string())
        )],
        "{}",
        stdout(&o)
    );
    // The rule prints back and reads in English.
    let text = trac(&[
        "audit",
        "--spec",
        "examples/specs/agent-tools.ron",
        log.to_str().unwrap(),
    ]);
    let out = stdout(&text);
    assert!(
        out.contains("formula: forall to, u: G(send(to) & O gave(u) -> to = u)"),
        "{out}"
    );
    assert!(out.contains("to equals u"), "{out}");
}

/// Issue 24 (steps and values): exact values, tool names as values, `|` globs and `Result`
/// leaves through `trac audit` on a chat log; expected steps derived by hand.
#[test]
fn agent_tool_rules_keep_values_exactly() {
    let call = |id: &str, name: &str, args: &str| {
        format!(
            r#"{{"role": "assistant", "content": null, "tool_calls": [{{"id": "{id}", "type": "function", "function": {{"name": "{name}", "arguments": {args:?}}}}}]}}"#
        )
    };
    let result = |id: &str, content: &str| {
        format!(r#"{{"role": "tool", "tool_call_id": "{id}", "content": {content:?}}}"#)
    };
    let msgs = [
        r#"{"role": "user", "content": "Mail Mia the first column."}"#.to_string(),
        call("c1", "shell", r#"{"cmd": "cut -d, -f1 a.csv"}"#),
        result("c1", "x"),
        // A different command (no comma): not a repetition of step 2's.
        call("c2", "shell", r#"{"cmd": "cut -d -f1 a.csv"}"#),
        result("c2", "y"),
        call("c3", "lookup_contact", r#"{"name": "Mia"}"#),
        result("c3", r#"{"address": "Mia.Li@x.org"}"#),
        // Step 8: known address, case kept. Step 10: an address no lookup gave.
        call("c4", "send_email", r#"{"to": "Mia.Li@x.org"}"#),
        result("c4", "sent"),
        call("c5", "send_sms", r#"{"to": "+1 555"}"#),
    ];
    let log = temp_file("agent-tools.jsonl", &(msgs.join("\n") + "\n"));
    let o = trac(&[
        "audit",
        "--spec",
        "examples/specs/agent-tools.ron",
        "--format",
        "jsonl",
        log.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let got: Vec<(String, u64, Option<String>)> = violations(&o)
        .into_iter()
        .map(|(_, p, s, v)| (p.trim_start_matches("agent-tools:").to_string(), s, v))
        .collect();
    // Steps 2 and 4 run different commands, each tool call's step is followed by a result
    // step, and only the SMS to `+1 555` (step 10) goes to an address no lookup gave.
    assert_eq!(
        got,
        [("send-to-known".to_string(), 10, Some("+1 555".to_string()))],
        "{}",
        stdout(&o)
    );
}

/// A chat log where two calls share one message: refund before lookup in message 2, two
/// `send_email` calls in message 5 and a third in message 8.
const CALLS_LOG: &str = concat!(
    r#"{"role": "user", "content": "Refund order 7 and tell me."}"#,
    "\n",
    r#"{"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "refund", "arguments": "{\"order\": 7}"}}, {"id": "c2", "type": "function", "function": {"name": "lookup", "arguments": "{\"order\": 7}"}}]}"#,
    "\n",
    r#"{"role": "tool", "tool_call_id": "c1", "content": "refunded"}"#,
    "\n",
    r#"{"role": "tool", "tool_call_id": "c2", "content": "paid"}"#,
    "\n",
    r#"{"role": "assistant", "content": "Emailing you twice.", "tool_calls": [{"id": "c3", "type": "function", "function": {"name": "send_email", "arguments": "{}"}}, {"id": "c4", "type": "function", "function": {"name": "send_email", "arguments": "{}"}}]}"#,
    "\n",
    r#"{"role": "tool", "tool_call_id": "c3", "content": "sent"}"#,
    "\n",
    r#"{"role": "tool", "tool_call_id": "c4", "content": "sent"}"#,
    "\n",
    r#"{"role": "assistant", "tool_calls": [{"id": "c5", "type": "function", "function": {"name": "send_email", "arguments": "{}"}}]}"#,
    "\n",
);

#[test]
fn step_per_call_sees_the_order_and_the_count_of_calls_in_one_message() {
    let spec = temp_file(
        "calls.ron",
        r#"(name: "calls", propositions: [
            (name: "refund", rule: Some(Tool("refund"))),
            (name: "lookup", rule: Some(Tool("lookup"))),
            (name: "send_email", rule: Some(Tool("send_email"))),
        ], properties: [
            (id: "lookup-first", formula: "G(refund -> O lookup)"),
            (id: "two-emails", formula: "G(count(send_email) <= 2)"),
        ])"#,
    );
    let spec = spec.to_str().unwrap();
    let log = temp_file("calls.jsonl", CALLS_LOG);
    let log = log.to_str().unwrap();
    // Per message (8 steps): message 2 holds refund and lookup at once, so `O lookup` holds at
    // the refund; send_email holds at steps 5 and 8 only: a count of 2. No violation.
    let o = trac(&["audit", "--spec", spec, "--format", "jsonl", log]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(violations(&o), []);
    // Per call (11 steps): 1 user, 2 refund, 3 lookup, 4-5 results, 6-7 send_email, 8 the
    // text of message 5, 9-10 results, 11 send_email. The refund at 2 has no lookup before it
    // (call 1 of its message); the third send_email is at step 11 (call 1 of message 8).
    let o = trac(&[
        "audit",
        "--spec",
        spec,
        "--format",
        "jsonl",
        "--step-per",
        "call",
        log,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let got: Vec<(String, u64, u64)> = jsonl(&o)
        .into_iter()
        .filter(|r| r["verdict"] == "violated" && r.get("end").is_none())
        .map(|r| {
            let p = r["property"].as_str().unwrap();
            (
                p.rsplit(':').next().unwrap().to_string(),
                r["step"].as_u64().unwrap(),
                r["call_index"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("lookup-first".to_string(), 2, 1),
            ("two-emails".to_string(), 11, 1)
        ]
    );
    let ends: Vec<u64> = jsonl(&o)
        .iter()
        .filter(|r| r.get("end").is_some())
        .map(|r| r["steps"].as_u64().unwrap())
        .collect();
    assert_eq!(ends, [11, 11]);
    // The text report says which call of its message the step is.
    let o = trac(&["audit", "--spec", spec, "--step-per", "call", log]);
    assert!(
        stdout(&o).contains("violated at step 2 (call 1 of its message); witness:"),
        "{}",
        stdout(&o)
    );
    // On a text log the flag has no effect, and says so.
    let text_log = "examples/traces/textworld-demo.txt";
    let o = trac(&[
        "audit",
        "--spec",
        "examples/specs/textworld.ron",
        "--step-per",
        "call",
        text_log,
    ]);
    assert!(
        stderr(&o).contains(&format!(
            "warning: {text_log}: --step-per call has no effect: a text trace has no messages"
        )),
        "{}",
        stderr(&o)
    );
}

/// A new-user trial: a `--formula` comparison was warned about as "atom `=(a, b)` ... never
/// labeled", an internal name no one can label. Its verdict is as derived by hand: `q(x)` at
/// step 1 binds `b` to `x`; `p(x)` at step 2 without `q(x)` breaks the instance `x, x`, whose
/// `a != b` is false.
#[test]
fn a_formula_comparison_is_not_warned_about_as_an_unlabeled_atom() {
    let log = temp_file(
        "compare-warn.jsonl",
        "{\"labels\": [\"q(x)\"]}\n{\"labels\": [\"p(x)\"]}\n",
    );
    let o = trac(&[
        "audit",
        "--formula",
        "forall a, b: G(p(a) -> q(b) | a != b)",
        log.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(!err.contains("=("), "{err}");
    assert_eq!(o.status.code(), Some(1), "{err}");
    let out = stdout(&o);
    assert!(out.contains("violated at step 2"), "{out}");
}

/// A new-user trial: `G(end -> O saved)` passed silently under LTL3 (where `end` never holds),
/// from `--formula` and from a spec property without `semantics: Ltlf`; the LTLf property of
/// the bundled agent-rules spec gets no warning.
#[test]
fn end_under_ltl3_is_warned_about() {
    let log = temp_file("end-ltl3.jsonl", "{\"labels\": [\"a\"]}\n");
    let o = trac(&[
        "audit",
        "--formula",
        "G(end -> O saved)",
        log.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(
        err.contains(
            "warning: property `f1` (command line) uses `end`, which never holds under LTL3"
        ),
        "{err}"
    );
    let o = trac(&[
        "audit",
        "--spec",
        "examples/specs/agent-rules.ron",
        "examples/traces/agent-rules-demo.json",
    ]);
    assert!(!stderr(&o).contains("uses `end`"), "{}", stderr(&o));
}

/// A new-user trial: on OTLP spans, a tool's `execute_tool` span counted as a second call of
/// the tool right after the model's call (`no-repeated-tool` violated at step 3 of one call);
/// the spec's call rules now read assistant steps only. The fixture calls each tool once.
#[test]
fn agent_tools_on_otlp_spans_counts_each_call_once() {
    let o = trac(&[
        "audit",
        "--spec",
        "examples/specs/agent-tools.ron",
        "--format",
        "jsonl",
        "crates/trac-runtime/tests/fixtures/otlp.json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(violations(&o).is_empty(), "{}", stdout(&o));
}
