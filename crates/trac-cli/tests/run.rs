//! `trac run` end to end: the scripted Trucks agent as a command model and behind the loopback
//! HTTP server (with faults), every intervention, the summary, exit codes, and the run log
//! re-audited by `trac audit` to the same verdicts.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Output};
use trac_agent::scripted::ScriptedTrucks;
use trac_llm::testserver::{completion, Reply, TestServer};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
const SPEC: &str = "examples/specs/trucks-5.ron";

fn trac(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trac-cli"))
        .args(args)
        .current_dir(ROOT)
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("run trac")
}

fn agent(p: f64) -> String {
    format!("cmd:{} {p}", env!("CARGO_BIN_EXE_trac-cli-scripted-agent"))
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("trac-cli-run-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

type VerdictKey = (String, u64, String, Option<String>, String);

/// The verdicts a run log records: (session, step, property, value, verdict).
fn logged_verdicts(log: &str) -> BTreeSet<VerdictKey> {
    let mut out = BTreeSet::new();
    for line in log.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        for r in v["verdicts"].as_array().unwrap() {
            out.insert((
                v["session"].as_str().unwrap().to_string(),
                v["step"].as_u64().unwrap(),
                r["property"].as_str().unwrap().to_string(),
                r["value"].as_str().map(str::to_string),
                r["verdict"].as_str().unwrap().to_string(),
            ));
        }
    }
    out
}

/// The verdicts `trac audit --format jsonl` finds in the log.
fn audited_verdicts(log: &std::path::Path) -> BTreeSet<VerdictKey> {
    let o = trac(&[
        "audit",
        "--spec",
        SPEC,
        "--format",
        "jsonl",
        log.to_str().unwrap(),
    ]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let mut out = BTreeSet::new();
    for line in stdout(&o).lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v.get("end").is_some() {
            continue;
        }
        let trace = v["trace"].as_str().unwrap();
        let session = trace.rsplit_once('#').unwrap().1.to_string();
        out.insert((
            session,
            v["step"].as_u64().unwrap(),
            v["property"].as_str().unwrap().to_string(),
            v["value"].as_str().map(str::to_string),
            v["verdict"].as_str().unwrap().to_string(),
        ));
    }
    out
}

#[test]
fn every_intervention_with_a_command_model_and_the_log_reaudits() {
    let log = temp("all.jsonl");
    let a = agent(0.5);
    let o = trac(&[
        "run",
        "--env",
        "trucks",
        "--spec",
        SPEC,
        "--model",
        &a,
        "--intervene",
        "none,resample,inject,switch,shield",
        "--runs",
        "3",
        "--seed",
        "5",
        "--log",
        log.to_str().unwrap(),
        "--format",
        "json",
    ]);
    // `none` violates: exit code 1.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let sums = doc["summaries"].as_array().unwrap();
    assert_eq!(sums.len(), 5);
    let total = |i: usize| {
        sums[i]["summary"]["total_violations"]["mean"]
            .as_f64()
            .unwrap()
    };
    assert!(total(0) > 0.0);
    for (i, s) in sums.iter().enumerate().skip(1) {
        assert!(
            total(i) < total(0),
            "{}: {} violations per run, none: {}",
            s["intervention"],
            total(i),
            total(0)
        );
        assert!(s["summary"]["interventions"]["mean"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(total(4), 0.0, "the shield lets no violating action through");
    // Per-property means with intervals, reward, calls and tokens are reported.
    let s0 = &sums[0]["summary"];
    assert_eq!(s0["violations"].as_array().unwrap().len(), 15);
    assert!(s0["reward"]["mean"].as_f64().unwrap() > 0.0);
    assert!(s0["model_calls"]["mean"].as_f64().unwrap() > 0.0);
    assert!(s0["tokens"]["mean"].as_f64().unwrap() > 0.0);
    // The log: one session per run and intervention, re-audited to the same verdicts.
    let text = std::fs::read_to_string(&log).unwrap();
    let sessions: BTreeSet<String> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["session"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(sessions.len(), 15);
    let logged = logged_verdicts(&text);
    assert!(logged.iter().any(|k| k.4 == "violated"));
    assert_eq!(audited_verdicts(&log), logged);
}

#[test]
fn text_output_shows_verdicts_risks_and_interventions() {
    let o = trac(&[
        "run",
        "--env",
        "trucks",
        "--spec",
        SPEC,
        "--model",
        &agent(1.0),
        "--intervene",
        "inject",
        "--predict",
        "k=2,n=3",
        "--max-steps",
        "8",
    ]);
    let out = stdout(&o);
    assert!(
        out.contains("[run-1 step  1] DRIVE truck1 from l2 to l1"),
        "{out}"
    );
    assert!(out.contains("risk: only_a1"), "{out}");
    assert!(out.contains("⚑ inject: only_a1"), "{out}");
    assert!(out.contains("residual: it is never the case that"), "{out}");
    assert!(out.contains("== intervention inject: 1 run(s)"), "{out}");
}

#[test]
fn a_property_over_the_state_budget_is_noted_once() {
    // `Y[40]` remembers 40 steps: more than the 4096 states of the budget.
    let spec = temp("big.ron");
    std::fs::write(
        &spec,
        r#"(name: "big", properties: [(id: "B1", formula: "G(x -> Y[40] y)")])"#,
    )
    .unwrap();
    let o = trac(&[
        "run",
        "--env",
        "trucks",
        "--spec",
        spec.to_str().unwrap(),
        "--model",
        &agent(1.0),
        "--max-steps",
        "2",
        "--runs",
        "2",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let note = "note: property B1: the monitor automaton has more than 4096 states";
    assert_eq!(err.matches(note).count(), 1, "{err}");
}

#[test]
fn json_lines_environment_over_a_child_process() {
    let env = format!(
        "{} --serve-env",
        env!("CARGO_BIN_EXE_trac-cli-scripted-agent")
    );
    let o = trac(&[
        "run",
        "--env-cmd",
        &env,
        "--spec",
        SPEC,
        "--model",
        &agent(0.0),
        "--format",
        "json",
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let run = &doc["runs"][0];
    assert_eq!(run["reward"].as_f64(), Some(5.0));
    assert_eq!(run["done"].as_bool(), Some(true));
    // An environment that dies: a clear error naming the request, exit code 2.
    let o = trac(&[
        "run",
        "--env-cmd",
        "true",
        "--spec",
        SPEC,
        "--model",
        &agent(0.0),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("reset"), "{}", stderr(&o));
}

#[test]
fn bad_usage_is_exit_code_2() {
    let a = agent(0.1);
    for (args, msg) in [
        (
            vec!["--env", "trucks", "--intervene", "pray"],
            "unknown intervention",
        ),
        (vec!["--intervene", "none"], "give an environment"),
        (vec!["--env", "trucks", "--predict", "k=0"], "k must be"),
        (vec!["--env", "mars"], "unknown environment"),
        (vec!["--env", "trucks", "--threshold", "2"], "--threshold"),
    ] {
        let mut full = vec!["run", "--spec", SPEC, "--model", &a];
        full.extend(args);
        let o = trac(&full);
        assert_eq!(o.status.code(), Some(2), "{full:?}");
        assert!(stderr(&o).contains(msg), "{full:?}: {}", stderr(&o));
    }
    // A server model without --base-url.
    let o = trac(&["run", "--env", "trucks", "--spec", SPEC, "--model", "gpt-x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--base-url"), "{}", stderr(&o));
}

#[test]
fn over_the_loopback_http_server_with_faults() {
    let scripted = ScriptedTrucks::new(0.5);
    let server = TestServer::start(move |req: &Value, k| {
        match k % 10 {
            3 => {
                return Reply::Status {
                    code: 503,
                    headers: vec![],
                    body: "busy".into(),
                }
            }
            6 => {
                return Reply::Status {
                    code: 429,
                    headers: vec![("Retry-After".into(), "0".into())],
                    body: "slow down".into(),
                }
            }
            8 => return Reply::malformed_json(),
            _ => {}
        }
        let msgs = req["messages"].as_array().cloned().unwrap_or_default();
        let text = |role: &str| {
            msgs.iter()
                .filter(|m| m["role"] == role)
                .filter_map(|m| m["content"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        };
        let n = req.get("n").and_then(Value::as_u64).unwrap_or(1);
        let seed = req.get("seed").and_then(Value::as_u64).unwrap_or(0);
        let answers: Vec<String> = (0..n)
            .map(|i| scripted.answer(&text("system"), &text("user"), seed + i))
            .collect();
        Reply::Json(completion(
            &answers.iter().map(String::as_str).collect::<Vec<_>>(),
        ))
    });
    let url = server.base_url();
    let log = temp("http.jsonl");
    let run = |model: &str, base: Option<&str>, log: &PathBuf| {
        let mut args = vec![
            "run",
            "--env",
            "trucks",
            "--spec",
            SPEC,
            "--model",
            model,
            "--intervene",
            "shield",
            "--runs",
            "2",
            "--seed",
            "9",
            "--format",
            "json",
            "--quiet",
            "--log",
            log.to_str().unwrap(),
        ];
        if let Some(b) = base {
            args.extend(["--base-url", b]);
        }
        trac(&args)
    };
    let o = run("scripted", Some(&url), &log);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let http: Value = serde_json::from_str(&stdout(&o)).unwrap();
    // The same agent as a command model, without faults: the same verdicts and actions.
    let log2 = temp("cmd.jsonl");
    let o2 = run(&agent(0.5), None, &log2);
    let cmd: Value = serde_json::from_str(&stdout(&o2)).unwrap();
    let (t1, t2) = (
        std::fs::read_to_string(&log).unwrap(),
        std::fs::read_to_string(&log2).unwrap(),
    );
    let actions = |t: &str| {
        t.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["output"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(actions(&t1), actions(&t2));
    assert_eq!(logged_verdicts(&t1), logged_verdicts(&t2));
    assert_eq!(audited_verdicts(&log), logged_verdicts(&t1));
    for r in 0..2 {
        assert_eq!(http["runs"][r]["violations"], cmd["runs"][r]["violations"]);
    }
    // The faults cost retried requests.
    let calls = |d: &Value| -> u64 {
        d["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["model_calls"].as_u64().unwrap())
            .sum()
    };
    assert!(
        calls(&http) > calls(&cmd),
        "{} vs {}",
        calls(&http),
        calls(&cmd)
    );
    assert_eq!(server.request_count() as u64, calls(&http));
}
