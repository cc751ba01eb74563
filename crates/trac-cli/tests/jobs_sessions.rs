//! `trac audit -j N` on ONE file of many sessions: its sessions are audited on N threads
//! (`trac_runtime::audit::parallel`), and stdout, stderr and the exit code are the `-j 1`
//! run's, byte for byte, in every format (text, jsonl, json, sarif, html, `--summary`). The
//! files are larger than one batch of the parallel audit (4096 events), so the parallel path
//! runs.

mod support;
use std::process::Output;
use support::temp_file;

fn file(name: &str, content: &str) -> String {
    temp_file(name, content).to_str().unwrap().to_string()
}

/// Sessions in the generated files.
const SESSIONS: usize = 700;

/// `SESSIONS` sessions of 10 steps, interleaved (round robin: step k of every session, then
/// step k + 1). In every session, step 4 is `p & r` (one violation of `G !(p & r)`) and step 9
/// is `p` with no `q` after it (`G(p -> F q)` violated at the end of the trace); the other
/// steps are `q`. Sessions `s{k}` with k % 3 == 0 end with a `session_end` marker after their
/// last step; the others stay open to the end of the file. Session `s5`'s 7th line is bad
/// (`"labels": 5`): it ends that session only, after its violation at step 4.
/// `tail`: a last line appended (a malformed line stops the file).
fn sessions_file(name: &str, tail: &str) -> String {
    let mut s = String::new();
    for step in 1..=10 {
        for k in 0..SESSIONS {
            let labels = match step {
                4 => "[\"p\", \"r\"]",
                9 => "[\"p\"]",
                _ => "[\"q\"]",
            };
            if k == 5 && step == 7 {
                s.push_str("{\"session\": \"s5\", \"labels\": 5}\n");
                continue;
            }
            s.push_str(&format!(
                "{{\"session\": \"s{k}\", \"output\": \"step {step}\", \"labels\": {labels}}}\n"
            ));
            if step == 10 && k % 3 == 0 {
                s.push_str(&format!(
                    "{{\"session\": \"s{k}\", \"session_end\": true}}\n"
                ));
            }
        }
    }
    s.push_str(tail);
    file(name, &s)
}

/// `--formula false` is violated at step 0 of every session (decided before the first step).
const FORMULAS: [&str; 6] = [
    "--formula",
    "G !(p & r)",
    "--formula",
    "G(p -> F q)",
    "--formula",
    "false",
];

/// Runs `audit -j J args path` for J = 1, 2, 3: identical stdout, stderr and exit code.
/// Returns the `-j 1` run.
fn same_with_jobs(args: &[&str], path: &str) -> Output {
    support::same_with_jobs(args, &[path], &["2", "3"])
}

const FORMATS: [&[&str]; 6] = [
    &["--format", "text"],
    &["--format", "jsonl"],
    &["--format", "json"],
    &["--format", "sarif"],
    &["--format", "html"],
    &["--summary"],
];

#[test]
fn sessions_of_one_file_on_threads_print_what_one_thread_prints() {
    let path = sessions_file("sessions.jsonl", "");
    for format in FORMATS {
        let mut args: Vec<&str> = FORMULAS.to_vec();
        args.extend_from_slice(format);
        let seq = same_with_jobs(&args, &path);
        // s5's bad line (line 6 × 700 + 6): exit code 2, the other sessions audited on.
        assert_eq!(seq.status.code(), Some(2), "{format:?}");
        let err = String::from_utf8_lossy(&seq.stderr);
        assert!(
            err.contains("sessions.jsonl:4206:"),
            "s5's bad line in {err}"
        );
        assert!(
            err.contains("the other sessions were audited to their end"),
            "{err}"
        );
    }
    // The hand-derived verdicts: `G !(p & r)` violated once per session (step 4), `false` at
    // step 0 of each; `G(p -> F q)` is pending at the end (LTL3), not violated.
    let mut args: Vec<&str> = FORMULAS.to_vec();
    args.extend(["--format", "jsonl"]);
    let seq = same_with_jobs(&args, &path);
    let out = String::from_utf8_lossy(&seq.stdout);
    assert_eq!(violated_at(&out, "f1", 4), SESSIONS);
    assert_eq!(violated_at(&out, "f3", 0), SESSIONS);
    assert_eq!(violated_at(&out, "f2", 10), 0);
    let mut args: Vec<&str> = FORMULAS.to_vec();
    args.push("--summary");
    let seq = same_with_jobs(&args, &path);
    let out = String::from_utf8_lossy(&seq.stdout);
    assert!(
        out.contains("1400 violation(s) in 700 trace(s), 1 with an error"),
        "{out}"
    );
}

/// Violation records of `property` at step `step` in the JSON Lines report `out`.
fn violated_at(out: &str, property: &str, step: usize) -> usize {
    out.lines()
        .filter(|l| l.contains("\"verdict\":\"violated\""))
        .filter(|l| l.contains(&format!("\"property\":\"{property}\"")))
        .filter(|l| l.contains(&format!("\"step\":{step},")))
        .count()
}

#[test]
fn end_of_trace_violations_come_in_the_order_of_one_thread() {
    // Under LTLf, `G(q -> F p)` is violated at the end of every session that reaches its end
    // (the `q` of step 10 has no `p` after it); `G(p -> F q)` holds (step 10's `q` follows
    // step 9's `p`). Two thirds of the sessions have no end marker: they end at the end of the
    // file, in order of first appearance.
    let spec = file(
        "ltlf.ron",
        r#"(name: "ends", properties: [
            (id: "qp", formula: "G(q -> F p)", semantics: Ltlf),
            (id: "pq", formula: "G(p -> F q)", semantics: Ltlf),
        ])"#,
    );
    let path = sessions_file("ltlf.jsonl", "");
    for format in FORMATS {
        let mut args: Vec<&str> = vec!["--spec", &spec];
        args.extend_from_slice(format);
        same_with_jobs(&args, &path);
    }
    let seq = same_with_jobs(&["--spec", &spec, "--format", "jsonl"], &path);
    let out = String::from_utf8_lossy(&seq.stdout);
    // Hand-derived: qp violated at the end (step 10) of each session but s5 (ended by its bad
    // line, no end verdicts); pq holds (a `q` follows every `p`).
    assert_eq!(
        violated_at(&out, "qp", 10),
        SESSIONS - 1,
        "{}",
        &out[..out.len().min(2000)]
    );
    assert_eq!(violated_at(&out, "pq", 10), 0);
}

#[test]
fn a_malformed_line_stops_the_file_as_with_one_thread() {
    // The last line is not JSON: a failure of the file, which ends every open session with it.
    let path = sessions_file("stopped.jsonl", "not json\n");
    for format in FORMATS {
        let mut args: Vec<&str> = FORMULAS.to_vec();
        args.extend_from_slice(format);
        let seq = same_with_jobs(&args, &path);
        assert_eq!(seq.status.code(), Some(2), "{format:?}");
        let err = String::from_utf8_lossy(&seq.stderr);
        assert!(
            err.contains("were audited; their verdicts are reported"),
            "{err}"
        );
    }
}

#[test]
fn a_clean_file_of_many_sessions_exits_as_with_one_thread() {
    // Every step holds q or p: `G(q | p)` holds in every session. s5's bad line still makes
    // it exit 2.
    let path = sessions_file("clean.jsonl", "");
    let seq = same_with_jobs(&["--formula", "G(q | p)", "--summary"], &path);
    assert_eq!(seq.status.code(), Some(2));
    let out = String::from_utf8_lossy(&seq.stdout);
    assert!(out.contains("0 violation(s) in 700 trace(s)"), "{out}");
}
