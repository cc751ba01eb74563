//! `trac audit -j N`: several files audited at once give the sequential run's output, byte for
//! byte (stdout, stderr, exit code), in every format; and the exit codes of parallel runs.

mod support;
use std::path::Path;
use std::process::Output;
use support::{temp_file, trac};

fn file(name: &str, content: &str) -> String {
    temp_file(name, content).to_str().unwrap().to_string()
}

/// Twelve files of every kind: clean, violating, interleaved sessions with and without
/// `session_end`, a malformed line after good ones, an empty file, a file without labels, and
/// a missing file.
fn mixed_files() -> Vec<String> {
    let mut files = Vec::new();
    for k in 0..6 {
        // Violations of `G !(p & r)` at different steps, so that every file's report differs.
        let mut s = String::new();
        for i in 0..(20 + k * 7) {
            let labels = match (i + k) % 5 {
                0 => "[\"p\"]",
                1 => "[\"q\"]",
                2 => "[\"r\"]",
                3 => "[\"p\", \"r\"]",
                _ => "[]",
            };
            s.push_str(&format!(
                "{{\"session\": \"s{}\", \"output\": \"act {i}\", \"labels\": {labels}}}\n",
                i % (k + 1)
            ));
            if k % 2 == 0 && i % 9 == 8 {
                s.push_str(&format!(
                    "{{\"session\": \"s{}\", \"session_end\": true}}\n",
                    i % (k + 1)
                ));
            }
        }
        files.push(file(&format!("f{k}.jsonl"), &s));
    }
    files.push(file(
        "clean.jsonl",
        "{\"labels\": [\"q\"]}\n{\"labels\": []}\n",
    ));
    files.push(file(
        "malformed.jsonl",
        "{\"labels\": [\"p\", \"r\"]}\n{\"labels\": [\"q\"]}\nnot json\n",
    ));
    files.push(file("empty.jsonl", ""));
    files.push(file("nolabels.jsonl", "{\"output\": \"hello\"}\n"));
    files.push(
        temp_file("present.jsonl", "")
            .with_file_name("missing.jsonl")
            .to_str()
            .unwrap()
            .to_string(),
    );
    files.push(file(
        "last.jsonl",
        "{\"labels\": [\"p\"]}\n{\"labels\": [\"p\", \"r\"]}\n",
    ));
    files
}

const FORMULAS: [&str; 6] = [
    "--formula",
    "G(p -> F q)",
    "--formula",
    "G !(p & r)",
    "--formula",
    "G(q -> X !q)",
];

/// Runs `args` + `files` with `-j 1` and with `-j N` for N in 2, 3, 8: identical stdout, stderr
/// and exit code. Returns the `-j 1` run.
fn same_with_jobs(args: &[&str], files: &[String]) -> Output {
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    support::same_with_jobs(args, &files, &["2", "3", "8"])
}

#[test]
fn parallel_audits_print_what_the_sequential_one_prints_in_every_format() {
    let files = mixed_files();
    for format in [
        &["--format", "text"][..],
        &["--summary"][..],
        &["--format", "jsonl"][..],
        &["--format", "json"][..],
        &["--format", "sarif"][..],
    ] {
        let mut args: Vec<&str> = FORMULAS.to_vec();
        args.extend_from_slice(format);
        let seq = same_with_jobs(&args, &files);
        // A malformed line, an empty file and a missing one: exit code 2, errors on stderr in
        // argument order.
        assert_eq!(seq.status.code(), Some(2), "{format:?}");
        let err = String::from_utf8_lossy(&seq.stderr);
        let at = |name: &str| {
            err.find(name)
                .unwrap_or_else(|| panic!("{name} in stderr: {err}"))
        };
        assert!(at("malformed.jsonl") < at("empty.jsonl"), "{err}");
        assert!(at("empty.jsonl") < at("missing.jsonl"), "{err}");
    }
    // The report is in argument order, and it is not empty.
    let mut args: Vec<&str> = FORMULAS.to_vec();
    args.extend(["--format", "jsonl"]);
    let seq = same_with_jobs(&args, &files);
    let out = String::from_utf8_lossy(&seq.stdout);
    let mut last = 0;
    for f in files.iter().filter(|f| !f.ends_with("missing.jsonl")) {
        let at = out
            .find(&format!("\"trace\":\"{}", f))
            .unwrap_or_else(|| panic!("{f} in the report"));
        assert!(at >= last, "{f} out of order");
        last = at;
    }
    assert!(out.contains("\"verdict\":\"violated\""));
}

#[test]
#[cfg_attr(no_shared_logs, ignore = "needs ../shared/data/paper-traces")]
fn parallel_audits_of_shared_logs_match_the_sequential_one() {
    let root = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/paper-traces"
    ));
    let mut files: Vec<String> = Vec::new();
    for d in ["trucks", "textworld", "scienceworld"] {
        let mut v: Vec<String> = std::fs::read_dir(root.join(d))
            .unwrap()
            .map(|e| e.unwrap().path().to_str().unwrap().to_string())
            .collect();
        v.sort();
        files.extend(v);
    }
    assert!(files.len() >= 20);
    for spec in ["examples/specs/trucks.ron", "examples/specs/textworld.ron"] {
        for format in ["text", "jsonl"] {
            let seq = same_with_jobs(&["--spec", spec, "--format", format], &files);
            assert!(!seq.stdout.is_empty());
        }
    }
}

#[test]
fn exit_codes_of_parallel_audits() {
    let clean = file("c1.jsonl", "{\"labels\": [\"q\"]}\n");
    let clean2 = file("c2.jsonl", "{\"labels\": []}\n");
    let bad = file("v1.jsonl", "{\"labels\": [\"p\", \"r\"]}\n");
    let broken = file("b1.jsonl", "{\"labels\": [\"q\"]}\n{oops\n");
    let code = |files: &[&String]| {
        let mut a: Vec<&str> = vec!["audit", "-j", "2", "--formula", "G !(p & r)"];
        a.extend(files.iter().map(|f| f.as_str()));
        trac(&a).status.code()
    };
    assert_eq!(code(&[&clean, &clean2]), Some(0));
    assert_eq!(code(&[&clean, &bad, &clean2]), Some(1));
    assert_eq!(code(&[&bad, &broken, &clean]), Some(2));
    assert_eq!(code(&[&broken, &clean]), Some(2));
    // `-j 0` and more threads than can be started are usage errors (`-j 99999999999` started
    // thousands of threads before the bound), with the accepted range.
    for j in ["0", "257", "99999999999", "-3", "x"] {
        let o = trac(&["audit", "-j", j, "--formula", "G p", &clean, &clean2]);
        assert_eq!(o.status.code(), Some(2), "-j {j}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("expected 1 to 256 threads"), "-j {j}: {err}");
    }
    let o = trac(&[
        "audit",
        "-j",
        "256",
        "--formula",
        "G !(p & r)",
        &clean,
        &clean2,
    ]);
    assert_eq!(o.status.code(), Some(0));
}
