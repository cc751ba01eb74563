//! Where the exact look-ahead saves model calls, counted over whole runs.
//!
//! On `examples/specs/trucks-5.ron` it saves none: `only_a1` (`G !(load_into(a2) |
//! load_into(a3))`) can fail at any next step, so every step needs samples. On the free-area
//! rules alone (`examples/specs/lookahead/trucks-free-areas.ron`) with `k = 1`, a rule can only
//! fail at a step where an area is occupied, and the environment says before the step which
//! areas are free: every step that starts with all three areas free is decided exactly (risk 0,
//! no sample). The test checks this against the environment's own ground truth (the step's
//! `free(aN)` labels), and that the calls saved and spent add up.

use std::path::PathBuf;
use std::sync::Arc;
use trac_agent::predict::SamplingPredictor;
use trac_agent::run::{run_episode, Intervention, Models, RunConfig, StepRecord};
use trac_agent::scripted::ScriptedTrucks;
use trac_agent::trucks::Trucks;
use trac_spec::spec::{CheckedSpec, Spec};

fn spec(rel: &str) -> CheckedSpec {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    Spec::from_path(&path).unwrap().check().unwrap()
}

fn run(
    spec: &CheckedSpec,
    k: u32,
    n: usize,
    p: f64,
) -> (trac_agent::run::RunResult, Vec<StepRecord>) {
    let cfg = RunConfig {
        intervention: Intervention::Resample,
        sampling: SamplingPredictor {
            k,
            n,
            temperature: 0.8,
            max_tokens: None,
        },
        max_steps: 40,
        seed: 5,
        ..RunConfig::default()
    };
    let models = Models {
        agent: Arc::new(ScriptedTrucks::new(p)),
        substitute: None,
    };
    let mut steps = Vec::new();
    let mut env = Trucks::new();
    let r = run_episode(
        1,
        &cfg,
        std::slice::from_ref(spec),
        &mut env,
        &models,
        &mut |s: &StepRecord| steps.push(s.clone()),
    )
    .unwrap();
    (r, steps)
}

#[test]
fn free_area_rules_are_decided_exactly_when_every_area_is_free() {
    let s = spec("examples/specs/lookahead/trucks-free-areas.ron");
    for p in [0.0, 0.5] {
        let (r, steps) = run(&s, 1, 5, p);
        let all_free = |st: &StepRecord| {
            ["free(a1)", "free(a2)", "free(a3)"]
                .iter()
                .all(|f| st.labels.iter().any(|l| l == f))
        };
        let mut exact_steps = 0u64;
        for st in &steps {
            let pred = st.prediction.as_ref().expect("resample predicts each step");
            let exact = pred.risks.iter().all(|r| r.exact && r.samples == 0);
            assert_eq!(
                exact,
                all_free(st),
                "p = {p}, step {}: {:?}",
                st.step,
                st.labels
            );
            if exact {
                assert!(pred.risks.iter().all(|r| r.p == 0.0));
                assert_eq!((pred.calls, pred.saved_calls), (0, 1));
                exact_steps += 1;
            } else {
                assert_eq!(pred.saved_calls, 0);
            }
        }
        assert!(
            exact_steps > 0 && (exact_steps as usize) < steps.len(),
            "p = {p}"
        );
        // k = 1: the look-ahead saves the one request for the n first-step samples.
        assert_eq!(r.saved_calls, exact_steps, "p = {p}");
        let predicted: u64 = steps
            .iter()
            .map(|s| s.prediction.as_ref().unwrap().calls)
            .sum();
        assert_eq!(predicted, steps.len() as u64 - exact_steps, "p = {p}");
    }
}

#[test]
fn trucks5_needs_samples_at_every_step() {
    let s = spec("examples/specs/trucks-5.ron");
    let (r, steps) = run(&s, 1, 5, 0.0);
    assert_eq!(r.saved_calls, 0);
    for st in &steps {
        let pred = st.prediction.as_ref().unwrap();
        let only_a1 = pred.risks.iter().find(|r| r.property == "only_a1").unwrap();
        assert!(!only_a1.exact, "step {}", st.step);
        assert_eq!(only_a1.min_steps, Some(1), "step {}", st.step);
    }
}

/// TextWorld's knife rule is a deadline: before the knife is taken, ⊥ is 5 steps away (take the
/// knife, then four steps without a cut), so its risk within `k ≤ 4` steps is exactly 0; R1 is
/// two steps from ⊥ (a take, then no examine), R3 and R4 one.
#[test]
fn textworld_knife_rule_is_exactly_safe_within_four_steps() {
    use trac_agent::{Supervisor, SupervisorOptions};
    let s = spec("examples/specs/textworld.ron");
    let sup = Supervisor::new(std::slice::from_ref(&s), &SupervisorOptions::default()).unwrap();
    let none = |_: &str| None;
    for k in 1..=6u32 {
        let ex = sup.exact(k, &none);
        let r2 = ex.iter().find(|e| e.property == "R2").unwrap();
        assert_eq!(r2.min_steps, Some(5), "k = {k}");
        assert_eq!(r2.risk, (k <= 4).then_some(0.0), "k = {k}");
        // R1 (take an item, examine it next) fails at the earliest one step after a take.
        let r1 = ex.iter().find(|e| e.property == "R1").unwrap();
        assert_eq!(r1.min_steps, Some(2), "k = {k}");
        assert_eq!(r1.risk, (k == 1).then_some(0.0), "k = {k}");
        for id in ["R3", "R4"] {
            let e = ex.iter().find(|e| e.property == id).unwrap();
            assert_eq!((e.risk, e.min_steps), (None, Some(1)), "{id}, k = {k}");
        }
    }
}
