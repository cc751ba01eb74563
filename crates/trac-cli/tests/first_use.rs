//! First-use checks of the `trac` binary found by a new-user trial: an input the spec does not
//! fit is said so, huge inputs are quoted as snippets, explicit formats are held to.

use std::io::Write;
use std::process::{Command, Output};

fn trac(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trac-cli"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .expect("run trac")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp_file(name: &str, content: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("trac-first-use-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::File::create(&p)
        .unwrap()
        .write_all(content)
        .unwrap();
    p
}

const SPEC: &str = "examples/specs/textworld.ron";

#[test]
fn an_input_on_which_no_proposition_of_the_spec_held_is_warned_about() {
    let csv = temp_file(
        "table.csv",
        b"name,price,stock\nbolt,0.10,500\nnut,0.05,900\n",
    );
    let prose = temp_file(
        "prose.txt",
        b"It was a bright cold day in April.\nThe clocks were striking thirteen.\n",
    );
    for input in [
        csv.to_str().unwrap(),
        prose.to_str().unwrap(),
        "crates/trac-runtime/tests/fixtures/openai_airline.json",
    ] {
        let o = trac(&["audit", "--spec", SPEC, input]);
        let err = stderr(&o);
        // Not bad input: a clean trace may truly hold none of them (documented in exit-codes.md).
        assert_eq!(o.status.code(), Some(0), "{input}: {err}");
        let line = err
            .lines()
            .find(|l| l.contains("no proposition of spec"))
            .unwrap_or_else(|| panic!("{input}: no warning in {err}"));
        assert!(line.starts_with("warning: "), "{line}");
        assert!(line.contains(input), "names the file: {line}");
        assert!(line.contains(SPEC), "names the spec: {line}");
        assert!(
            line.contains("`take`") && line.contains("`go`"),
            "what was expected: {line}"
        );
    }
}

#[test]
fn an_input_the_spec_fits_gets_no_such_warning() {
    let o = trac(&[
        "audit",
        "--spec",
        SPEC,
        "examples/traces/textworld-demo.txt",
    ]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("no proposition of spec"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn trac_runs_own_log_fields_are_not_warned_about_but_others_still_are() {
    // A line as `trac run --log` writes it (trac_agent::run::StepRecord::log_json).
    let run = r#"{"session":"run-1","step":1,"input":"You see a knife.","output":"take knife","labels":["take(knife)"],"candidate":"take knife","observation":"Taken.","reward":0.0,"done":false,"risks":null,"interventions":[],"verdicts":[]}"#;
    let log = temp_file("runs.jsonl", format!("{run}\n").as_bytes());
    let o = trac(&["audit", "--spec", SPEC, log.to_str().unwrap()]);
    assert!(!stderr(&o).contains("ignored"), "{}", stderr(&o));
    // The same fields in a log that is not trac's (no `candidate`) are still named.
    let other = r#"{"input":"You see a knife.","output":"take knife","labels":["take(knife)"],"observation":"Taken.","reward":1}"#;
    let log = temp_file("other.jsonl", format!("{other}\n").as_bytes());
    let o = trac(&["audit", "--spec", SPEC, log.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(err.contains("field `observation` was not read"), "{err}");
    assert!(err.contains("event field(s) ignored: reward"), "{err}");
}

#[test]
fn a_huge_unmatched_label_and_field_name_are_quoted_as_snippets() {
    let label = "x".repeat(1_000_000);
    let field = "f".repeat(1_000_000);
    let line = format!(
        "{{\"output\":\"take knife\",\"labels\":[\"take(knife)\",\"{label}\"],\"{field}\":1}}\n"
    );
    let log = temp_file("huge.jsonl", line.as_bytes());
    let o = trac(&["audit", "--spec", SPEC, log.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(err.len() < 4000, "{} bytes of messages", err.len());
    assert!(err.contains("match no proposition"), "{err}");
    assert!(err.contains("xxxx…`"), "{err}");
    assert!(err.contains("ffff…"), "{err}");
}

/// The line of the first caret of `err` and the character above it.
fn char_above_caret(err: &str) -> Option<char> {
    let lines: Vec<&str> = err.lines().collect();
    let i = lines.iter().position(|l| l.contains('^'))?;
    let at = lines[i].chars().position(|c| c == '^')?;
    lines[i - 1].chars().nth(at)
}

#[test]
fn a_huge_formula_line_is_quoted_as_a_snippet_with_the_caret_in_place() {
    // On the command line (an argument is at most 128 KiB).
    let formula = format!("{} & ) & {}", "a".repeat(100_000), "b".repeat(1000));
    let o = trac(&["check", &formula]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{}", &err[..err.len().min(500)]);
    assert!(err.len() < 2000, "{} bytes", err.len());
    assert_eq!(char_above_caret(&err), Some(')'), "{err}");
    // In a spec file, shown under the file's own line.
    let spec = format!(
        "(name: \"big\", properties: [(id: \"p\", formula: \"{} & ) & b\")])\n",
        "a".repeat(200_000)
    );
    let spec = temp_file("big.ron", spec.as_bytes());
    let o = trac(&[
        "audit",
        "--spec",
        spec.to_str().unwrap(),
        "examples/traces/textworld-demo.txt",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{}", &err[..err.len().min(500)]);
    assert!(err.len() < 2000, "{} bytes", err.len());
    assert_eq!(char_above_caret(&err), Some(')'), "{err}");
}
