//! The run loop on the Trucks environment with the scripted agent (known violation probability):
//! sampled risk within its interval, exact look-ahead saving calls, every intervention lowering
//! the violation count against `none`, the run log re-audited to the same verdicts, and the
//! whole loop over the loopback HTTP server with faults.

use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use trac_agent::agent::{AgentPrompt, HistoryStep};
use trac_agent::env::Environment;
use trac_agent::predict::SamplingPredictor;
use trac_agent::run::{
    run_episode, Intervention, Models, PredictorKind, RunConfig, RunResult, StepRecord,
};
use trac_agent::scripted::ScriptedTrucks;
use trac_agent::trucks::Trucks;
use trac_agent::{Supervisor, SupervisorOptions};
use trac_llm::testserver::{completion, Reply, TestServer};
use trac_llm::{ChatModel, ModelOptions};
use trac_runtime::audit::{audit_events, AuditOptions};
use trac_runtime::trace;
use trac_spec::spec::{CheckedSpec, Spec};

fn spec() -> CheckedSpec {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/specs/trucks-5.ron");
    Spec::from_path(&path).unwrap().check().unwrap()
}

fn index(sup: &Supervisor, id: &str) -> usize {
    sup.properties().iter().position(|p| p.id == id).unwrap()
}

fn prompt(env: &Trucks, sup: &Supervisor) -> AgentPrompt {
    AgentPrompt {
        instructions: env.instructions(),
        rules: trac_agent::run::rules_of(sup),
        task: env.task(),
        first_observation: String::new(),
    }
}

#[test]
fn sampled_risk_is_within_its_interval() {
    let specs = [spec()];
    for (p, k, prefix) in [
        // At l1 with package3 there: the next action is the load (k = 1).
        (0.3, 1, vec!["DRIVE truck1 from l2 to l1"]),
        // From the start: drive, load, drive within k = 3.
        (0.6, 3, vec![]),
    ] {
        let sup = Supervisor::new(&specs, &SupervisorOptions::default()).unwrap();
        let mut env = Trucks::new();
        env.reset(0).unwrap();
        let mut history = Vec::new();
        for a in &prefix {
            let o = env.step(a).unwrap();
            history.push(HistoryStep {
                action: a.to_string(),
                observation: o.observation,
            });
        }
        let model = ScriptedTrucks::new(p);
        let pred = SamplingPredictor {
            k,
            n: 400,
            temperature: 0.8,
            max_tokens: None,
        }
        .predict(&sup, &model, &prompt(&env, &sup), &history, Some(&env), 42)
        .unwrap();
        let r = &pred.risks[index(&sup, "only_a1")];
        assert!(!r.exact);
        assert_eq!(r.samples, 400);
        assert!(
            r.low <= p && p <= r.high,
            "p = {p}: estimate {} with interval [{}, {}]",
            r.p,
            r.low,
            r.high
        );
        // The scripted agent never loads into a3: sampled, 0 of 400.
        let r3 = &pred.risks[index(&sup, "only_a1_a2")];
        assert_eq!((r3.violations, r3.samples), (0, 400));
        // 1 request for the first step, then one per sample and later step.
        assert_eq!(pred.calls, 1 + 400 * (u64::from(k) - 1));
    }
}

#[test]
fn exact_lookahead_decides_without_samples() {
    let specs = [spec()];
    let sup = Supervisor::new(&specs, &SupervisorOptions::default()).unwrap();
    let env = Trucks::new();
    let state = env.state_labels();
    let known = trac_agent::predict::known_from(&state);
    // Every area is free: with k = 1 the area rules cannot be violated at the next step.
    let exact = sup.exact(1, &known);
    let get = |id: &str| exact.iter().find(|e| e.property == id).unwrap();
    assert_eq!(get("load_a2_a1_free").risk, Some(0.0));
    assert_eq!(get("unload_a3_a2_free").risk, Some(0.0));
    // On the automaton alone (free(a1) false is a valuation) ⊥ is one step away ...
    assert_eq!(get("load_a2_a1_free").min_steps, Some(1));
    // ... and with a1 known free now, two steps (load a1, then load a2).
    let exact2 = sup.exact(2, &known);
    assert_eq!(
        exact2
            .iter()
            .find(|e| e.property == "load_a2_a1_free")
            .unwrap()
            .min_steps,
        Some(2)
    );
    assert_eq!(get("only_a1").risk, None);
    assert_eq!(get("only_a1").min_steps, Some(1));
    assert!(get("only_a1")
        .immediate
        .iter()
        .any(|c| c.contains("load_into(a2)")));
    // A candidate known to load into a2: risk exactly 1 for only_a1.
    let exact = sup.exact(1, &|l: &str| {
        Some(l == "load_into(a2)" || l.starts_with("free("))
    });
    assert_eq!(
        exact.iter().find(|e| e.property == "only_a1").unwrap().risk,
        Some(1.0)
    );

    // A spec whose only rule needs two steps: with k = 1 nothing is sampled, one call saved.
    let small = Spec::from_str(
        r#"(name: "s", properties: [(id: "front", formula: "G(load_into(a2) -> free(a1))")])"#,
        "s.ron",
    )
    .unwrap()
    .check()
    .unwrap();
    let sup = Supervisor::new(&[small], &SupervisorOptions::default()).unwrap();
    let model = ScriptedTrucks::new(0.5);
    let pred = SamplingPredictor {
        k: 1,
        n: 5,
        temperature: 0.8,
        max_tokens: None,
    }
    .predict(&sup, &model, &prompt(&env, &sup), &[], Some(&env), 1)
    .unwrap();
    assert_eq!(model.usage().requests, 0);
    assert_eq!((pred.calls, pred.saved_calls), (0, 1));
    assert!(pred.risks[0].exact && pred.risks[0].p == 0.0);
}

fn config(intervention: Intervention) -> RunConfig {
    RunConfig {
        intervention,
        sampling: SamplingPredictor {
            k: 3,
            n: 5,
            temperature: 0.8,
            max_tokens: None,
        },
        threshold: 0.3,
        max_steps: 30,
        seed: 7,
        ..RunConfig::default()
    }
}

fn runs(cfg: &RunConfig, model: Arc<dyn ChatModel>, n: usize) -> (Vec<RunResult>, Vec<StepRecord>) {
    let specs = [spec()];
    let models = Models {
        agent: model,
        substitute: None,
    };
    let mut steps = Vec::new();
    let mut results = Vec::new();
    for r in 1..=n {
        let mut env = Trucks::new();
        let res = run_episode(r, cfg, &specs, &mut env, &models, &mut |s: &StepRecord| {
            steps.push(s.clone())
        })
        .unwrap();
        results.push(res);
    }
    (results, steps)
}

fn violations(results: &[RunResult]) -> usize {
    results.iter().map(RunResult::total_violations).sum()
}

#[test]
fn every_intervention_lowers_violations() {
    let model: Arc<dyn ChatModel> = Arc::new(ScriptedTrucks::new(0.5));
    let (none, _) = runs(&config(Intervention::None), model.clone(), 6);
    let base = violations(&none);
    // 5 loads per run, each into a2 with probability 1/2.
    assert!(base >= 6, "none: {base} violations");
    for r in &none {
        assert_eq!(r.interventions, 0);
        assert!(r.done, "the scripted plan finishes");
        assert_eq!(r.reward, 5.0);
    }
    for i in [
        Intervention::Resample,
        Intervention::Inject,
        Intervention::Switch,
        Intervention::Shield,
    ] {
        let (res, steps) = runs(&config(i), model.clone(), 6);
        let v = violations(&res);
        assert!(v < base, "{}: {v} violations, none: {base}", i.as_str());
        let count: usize = res.iter().map(|r| r.interventions).sum();
        assert!(count > 0, "{}: no intervention", i.as_str());
        // Every record names its step, properties and what it replaced.
        for s in &steps {
            for rec in &s.interventions {
                assert_eq!(rec.step, s.step);
                assert_eq!(rec.kind, i);
                assert!(!rec.properties.is_empty() && rec.properties.len() == rec.risks.len());
                assert_eq!(rec.replaced, s.candidate);
                assert_eq!(rec.by, s.action);
            }
        }
        if i == Intervention::Shield {
            // No action leading to ⊥ ever reaches the environment.
            assert_eq!(v, 0);
        }
    }
}

fn verdict_set(steps: &[StepRecord]) -> BTreeSet<(String, usize, String, Option<String>, String)> {
    steps
        .iter()
        .flat_map(|s| {
            s.verdicts.iter().map(move |v| {
                (
                    s.session.clone(),
                    v.step,
                    v.property.clone(),
                    v.value.clone(),
                    format!("{:?}", v.verdict),
                )
            })
        })
        .collect()
}

#[test]
fn run_log_reaudits_to_the_same_verdicts() {
    let model: Arc<dyn ChatModel> = Arc::new(ScriptedTrucks::new(0.5));
    let (_, steps) = runs(&config(Intervention::Inject), model, 3);
    let mut text = String::new();
    for s in &steps {
        text.push_str(&s.log_json().to_string());
        text.push('\n');
    }
    let dir = std::env::temp_dir().join(format!("trac-agent-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("runs.jsonl");
    std::fs::write(&path, &text).unwrap();
    let events: Vec<_> = trace::open(&path).unwrap().map(Result::unwrap).collect();
    let specs = [spec()];
    let opts = AuditOptions {
        compiler: Some(trac_compile::Compiler::shared()),
        ..AuditOptions::default()
    };
    let mut audited = BTreeSet::new();
    let sessions: BTreeSet<String> = events.iter().filter_map(|e| e.session.clone()).collect();
    assert_eq!(sessions.len(), 3);
    for sess in sessions {
        let evs: Vec<_> = events
            .iter()
            .filter(|e| e.session.as_deref() == Some(&sess))
            .cloned()
            .map(Ok)
            .collect();
        let rep = audit_events(&specs, &sess, evs, &opts).unwrap().remove(0);
        for r in rep.records {
            audited.insert((
                sess.clone(),
                r.step,
                r.property,
                r.value,
                format!("{:?}", r.verdict),
            ));
        }
    }
    let live = verdict_set(&steps);
    assert!(!live.is_empty(), "the runs reached verdicts");
    assert_eq!(audited, live);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A loopback server answering as the scripted agent, with faults on some requests.
fn scripted_server(p: f64, faults: bool) -> TestServer {
    let agent = ScriptedTrucks::new(p);
    TestServer::start(move |req: &Value, k| {
        if faults {
            match k % 9 {
                2 => {
                    return Reply::Status {
                        code: 500,
                        headers: vec![],
                        body: "oops".into(),
                    }
                }
                4 => {
                    return Reply::Status {
                        code: 429,
                        headers: vec![("Retry-After".into(), "0".into())],
                        body: "slow down".into(),
                    }
                }
                6 => return Reply::truncated("$ACTION: WAIT$"),
                _ => {}
            }
            if k == 7 {
                // Once: an answer slower than the client's timeout.
                return Reply::Delay(
                    Duration::from_millis(1500),
                    Box::new(Reply::content("$ACTION: WAIT$")),
                );
            }
        }
        let msgs = req["messages"].as_array().cloned().unwrap_or_default();
        let text = |role: &str| {
            msgs.iter()
                .filter(|m| m["role"] == role)
                .filter_map(|m| m["content"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        };
        let n = req.get("n").and_then(Value::as_u64).unwrap_or(1) as usize;
        let seed = req.get("seed").and_then(Value::as_u64).unwrap_or(0);
        let answers: Vec<String> = (0..n)
            .map(|i| agent.answer(&text("system"), &text("user"), seed + i as u64))
            .collect();
        let refs: Vec<&str> = answers.iter().map(String::as_str).collect();
        Reply::Json(completion(&refs))
    })
}

fn http_model(server: &TestServer) -> Arc<dyn ChatModel> {
    let mut o = ModelOptions::new("scripted");
    o.base_url = Some(server.base_url());
    o.timeout = Duration::from_millis(700);
    o.retry.base_delay = Duration::from_millis(5);
    o.retry.max_retries = 6;
    trac_llm::open_model(&o).unwrap()
}

#[test]
fn whole_loop_over_http_with_faults_matches_in_process() {
    for i in [
        Intervention::None,
        Intervention::Shield,
        Intervention::Resample,
    ] {
        let cfg = config(i);
        let (local, local_steps) = runs(&cfg, Arc::new(ScriptedTrucks::new(0.5)), 1);
        let server = scripted_server(0.5, true);
        let (remote, remote_steps) = runs(&cfg, http_model(&server), 1);
        let actions = |s: &[StepRecord]| s.iter().map(|r| r.action.clone()).collect::<Vec<_>>();
        assert_eq!(
            actions(&remote_steps),
            actions(&local_steps),
            "{}",
            i.as_str()
        );
        assert_eq!(verdict_set(&remote_steps), verdict_set(&local_steps));
        assert_eq!(remote[0].violations, local[0].violations);
        // Faults were met and retried: more HTTP requests than model calls without faults.
        assert!(
            server.request_count() as u64 > local[0].model_calls,
            "{}",
            i.as_str()
        );
        assert!(remote[0].model_calls >= server.request_count() as u64 - 1);
    }
}

#[test]
fn a_dead_server_is_an_error_naming_the_request() {
    let server = scripted_server(0.5, false);
    let url = server.base_url();
    drop(server);
    let mut o = ModelOptions::new("scripted");
    o.base_url = Some(url);
    o.timeout = Duration::from_millis(300);
    o.retry.max_retries = 1;
    o.retry.base_delay = Duration::from_millis(5);
    let model = trac_llm::open_model(&o).unwrap();
    let specs = [spec()];
    let mut env = Trucks::new();
    let models = Models {
        agent: model,
        substitute: None,
    };
    let err = run_episode(
        1,
        &config(Intervention::None),
        &specs,
        &mut env,
        &models,
        &mut |_: &StepRecord| {},
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("run-1 step 1"), "{err}");
}

#[test]
fn direct_predictor_reads_the_models_probabilities() {
    let model: Arc<dyn ChatModel> = Arc::new(ScriptedTrucks::new(0.25));
    let mut cfg = config(Intervention::None);
    cfg.predictor = Some(PredictorKind::Direct);
    cfg.max_steps = 2;
    let (_, steps) = runs(&cfg, model, 1);
    let p = steps[0].prediction.as_ref().unwrap();
    let r = p.risks.iter().find(|r| r.property == "only_a1").unwrap();
    assert_eq!(r.p, 0.25);
    // A model that answers garbage: an error naming the direct prediction.
    let server = TestServer::start(|_: &Value, _| Reply::content("no idea"));
    let mut o = ModelOptions::new("m");
    o.base_url = Some(server.base_url());
    let (specs, mut env) = ([spec()], Trucks::new());
    let models = Models {
        agent: trac_llm::open_model(&o).unwrap(),
        substitute: None,
    };
    let err = run_episode(1, &cfg, &specs, &mut env, &models, &mut |_: &StepRecord| {})
        .unwrap_err()
        .to_string();
    assert!(err.contains("direct prediction"), "{err}");
    let _ = json!(null);
}
