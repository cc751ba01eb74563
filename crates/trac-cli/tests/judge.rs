//! `trac judge` with a scripted judge (a `cmd:` model whose answers are known): the parsing,
//! the retry of an unreadable answer, the failures and the F1 table are checked by hand.

use serde_json::Value;

mod support;
use support::{temp_file, text, trac};

const SPEC: &str = r#"(
  name: "kitchen",
  propositions: [
    (name: "drop", description: "the agent drops something", rule: Some(Words("drop"))),
    (name: "go", description: "the agent leaves", rule: Some(Words("go"))),
  ],
  properties: [
    (id: "R1", description: "Rule 1: Do not drop things.", formula: "G !drop",
     examples: [(actions: ["take apple", "drop apple"], violation: Some(2))]),
    (id: "R2", description: "Do not go anywhere.", formula: "G !go"),
  ],
)"#;

/// TRAC_R with the rules: R1 violated at steps 2 and 4, R2 at step 3.
const TRACE: &str = "take apple\ndrop apple\ngo north\ndrop pear\n";

/// A judge that answers by method and sample: zero-shot with seed 0 misses R2 at 3 and puts it
/// at 4 (TP 2, FP 1, FN 1: F1 2/3), with seed 2 (run 2) is right (F1 1); few-shot's first
/// request gets prose (retried: the second is right), every later one is right; few-shot with
/// labels always gets prose (a failure per run). Labeling requests (`--with-labeler`) get "no
/// proposition holds".
const JUDGE: &str = r#"fewshot=0
right='Action 1: take apple - COMPLIANT\nAction 2: VIOLATION: Rule 1\n3. **go north** - VIOLATION: Rule 2\nAction 4: VIOLATION: Rule 1'
wrong='Action 1: COMPLIANT\nAction 2: VIOLATION: Rule 1\nAction 3: COMPLIANT\nAction 4: VIOLATION: Rule 1 - VIOLATION: Rule 2'
prose='All actions look fine to me.'
say() { printf '{"choices":[{"message":{"content":"%s"}}]}\n' "$1"; }
while IFS= read -r line; do
  case "$line" in
    *'temporal rule auditor'*)
      case "$line" in
        *'[true:'*) say "$prose" ;;
        *'## Examples'*)
          fewshot=$((fewshot + 1))
          if [ "$fewshot" = 1 ]; then say "$prose"; else say "$right"; fi ;;
        *'"seed":0'*) say "$wrong" ;;
        *) say "$right" ;;
      esac ;;
    *) say '{\"drop\": false, \"go\": false}' ;;
  esac
done
"#;

fn judge_args<'a>(
    spec: &'a str,
    model: &'a str,
    trace: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut v = vec![
        "judge",
        "--spec",
        spec,
        "--model",
        model,
        "--concurrency",
        "1",
    ];
    v.extend_from_slice(extra);
    v.push(trace);
    v
}

#[test]
fn judge_scores_each_method_against_trac_r() {
    let spec = temp_file("kitchen.ron", SPEC);
    let trace = temp_file("kitchen.txt", TRACE);
    let script = temp_file("judge.sh", JUDGE);
    let model = format!("cmd:sh {}", script.display());
    let (spec, trace) = (spec.to_str().unwrap(), trace.to_str().unwrap());
    let o = trac(&judge_args(
        spec,
        &model,
        trace,
        &["--runs", "2", "--format", "json"],
    ));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let doc: Value = serde_json::from_str(&text(&o.stdout)).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["method"].as_str().unwrap()).collect();
    assert_eq!(names, ["zero-shot", "few-shot", "few-shot-labels"]);
    // Zero-shot: runs 2/3 and 1; mean 5/6; s = (1/3)/√2, t(1) = 12.706: the interval is
    // clipped to [0, 1].
    let z = &rows[0]["violation_f1"];
    assert!(
        (z["value"].as_f64().unwrap() - 5.0 / 6.0).abs() < 1e-9,
        "{z}"
    );
    assert_eq!(
        (z["low"].as_f64(), z["high"].as_f64()),
        (Some(0.0), Some(1.0))
    );
    let run1 = &rows[0]["runs"][0]["scores"]["properties"];
    assert_eq!(run1[0]["violations"]["tp"], 2, "{run1}");
    assert_eq!(run1[1]["violations"]["fp"], 1, "{run1}");
    assert_eq!(run1[1]["violations"]["fn"], 1, "{run1}");
    // Few-shot: the unreadable first answer was asked again; both runs are right.
    assert_eq!(rows[1]["violation_f1"]["value"], 1.0);
    assert_eq!(rows[1]["failures"], 0);
    // Few-shot with labels: never readable, a failure per run, no F1 (not "no violation").
    assert_eq!(rows[2]["failures"], 2);
    assert!(rows[2]["violation_f1"].is_null(), "{}", rows[2]);
    let err = text(&o.stderr);
    assert!(
        err.contains("judge failure: few-shot-labels run 1:")
            && err.contains("unreadable answer (no verdict for action 1)"),
        "{err}"
    );
}

#[test]
fn judge_text_table_and_the_labeler_row() {
    let spec = temp_file("kitchen2.ron", SPEC);
    let trace = temp_file("kitchen2.txt", TRACE);
    let script = temp_file("judge2.sh", JUDGE);
    let model = format!("cmd:sh {}", script.display());
    let (spec, trace) = (spec.to_str().unwrap(), trace.to_str().unwrap());
    let o = trac(&judge_args(
        spec,
        &model,
        trace,
        &["--method", "zero-shot", "--with-labeler"],
    ));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    // Zero-shot, run 1 only: F1 2/3. TRAC with a labeler that sees nothing: no violation, 3
    // missed: F1 0; no satisfaction either side: undefined.
    assert!(
        out.contains("kitchen        zero-shot         0.667   [0.667, 0.667]      -                -        0"),
        "{out}"
    );
    assert!(
        out.contains("kitchen        trac+labeler      0.000   [0.000, 0.000]      -                -        0"),
        "{out}"
    );
}

#[test]
fn judge_bad_input_is_exit_2_with_a_message() {
    let trace = temp_file("kitchen3.txt", TRACE);
    let trace = trace.to_str().unwrap();
    let o = trac(&judge_args("no/such/spec.ron", "cmd:true", trace, &[]));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("no/such/spec.ron"),
        "{}",
        text(&o.stderr)
    );
    let empty = temp_file(
        "empty.ron",
        r#"(name: "e", propositions: [], properties: [])"#,
    );
    let o = trac(&judge_args(empty.to_str().unwrap(), "cmd:true", trace, &[]));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).starts_with("error: nothing to check:"),
        "{}",
        text(&o.stderr)
    );
    let spec = temp_file("kitchen3.ron", SPEC);
    let o = trac(&judge_args(
        spec.to_str().unwrap(),
        "cmd:true",
        trace,
        &["--runs", "0"],
    ));
    assert_eq!(o.status.code(), Some(2));
    let o = trac(&judge_args(
        spec.to_str().unwrap(),
        "cmd:true",
        "no/such/trace.txt",
        &[],
    ));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("no/such/trace.txt"),
        "{}",
        text(&o.stderr)
    );
}

/// A judge that always answers VALID.
const ALWAYS_VALID: &str = r#"while IFS= read -r line; do
  printf '{"choices":[{"message":{"content":"VALID"}}]}\n'
done
"#;

#[test]
fn experiment_temporal_writes_json_svg_and_the_table() {
    let script = temp_file("valid.sh", ALWAYS_VALID);
    let model = format!("cmd:sh {}", script.display());
    let out = std::env::temp_dir().join(format!("trac-cli-experiment-{}", std::process::id()));
    let o = trac(&[
        "experiment",
        "temporal",
        "--sweep",
        "gap",
        "--values",
        "1,10",
        "--samples",
        "4",
        "--seeds",
        "2",
        "--model",
        &model,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // Half of the traces satisfy the constraint: right on 2 of 4; Wilson(2, 4) = [0.150, 0.850].
    let table = text(&o.stdout);
    assert!(
        table.contains("\n1           4    0.500   [0.150, 0.850]        0    1.000\n"),
        "{table}"
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("gap.json")).unwrap()).unwrap();
    assert_eq!(doc["points"][1]["label"], "10");
    assert_eq!(doc["points"][1]["judge_correct"], 2);
    assert_eq!(doc["points"][1]["trac_accuracy"], 1.0);
    let svg = std::fs::read_to_string(out.join("gap.svg")).unwrap();
    assert_eq!(svg.matches("<polyline").count(), 2);
}

#[test]
fn experiment_bad_settings_are_exit_2() {
    let out = std::env::temp_dir().join(format!("trac-cli-experiment-bad-{}", std::process::id()));
    let out = out.to_str().unwrap();
    for (extra, message) in [
        (
            &["--sweep", "gap", "--samples", "0"][..],
            "--samples and --seeds must be at least 1",
        ),
        (
            &["--sweep", "gap", "--values", "0"][..],
            "--values: 0 is out of range for the gap sweep",
        ),
        (
            &["--sweep", "constraints", "--formula", "tree"][..],
            "the constraints sweep uses the simple formula",
        ),
        (
            &["--sweep", "language", "--values", "3"][..],
            "the language sweep's points are fixed",
        ),
    ] {
        let mut args = vec![
            "experiment",
            "temporal",
            "--model",
            "cmd:true",
            "--out",
            out,
        ];
        args.extend_from_slice(extra);
        let o = trac(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}");
        assert!(
            text(&o.stderr).contains(message),
            "{extra:?}: {}",
            text(&o.stderr)
        );
    }
    let o = trac(&[
        "experiment",
        "temporal",
        "--sweep",
        "sideways",
        "--out",
        out,
    ]);
    assert_eq!(o.status.code(), Some(2));
}
