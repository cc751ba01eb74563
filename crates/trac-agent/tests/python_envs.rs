//! The adapters of `examples/envs/` for the paper's other two environments, TextWorld and
//! ScienceWorld (PyPI `textworld` 1.7.0, `scienceworld` 1.2.3 with Java), run through the whole
//! loop: [`CommandEnv`] serving the environment and a command model serving the adapters'
//! scripted agent (violation probability 0: it follows the game's walkthrough / gold path).
//!
//! Where the packages were missing at build time the tests are reported as ignored with that
//! reason (`cfg(no_textworld)`, `cfg(no_scienceworld)`: build/needs.rs). `.ci/install-envs`
//! installs them (`python3 -m venv ~/.cache/trac/envs-venv && ~/.cache/trac/envs-venv/bin/pip
//! install textworld==1.7.0 scienceworld==1.2.3`), and under `CI=true` they run. `TRAC_ENVS_PYTHON` names the
//! interpreter (default `~/.cache/trac/envs-venv/bin/python`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;
use trac_agent::env::{CommandEnv, Environment};
use trac_agent::predict::SamplingPredictor;
use trac_agent::run::{run_episode, Intervention, Models, RunConfig, RunResult, StepRecord};
use trac_llm::{ChatModel, ModelOptions};
use trac_spec::spec::{CheckedSpec, Spec};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn python(module: &str) -> PathBuf {
    let py = std::env::var("TRAC_ENVS_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()))
                .join(".cache/trac/envs-venv/bin/python")
        });
    let ok = Command::new(&py)
        .args(["-c", &format!("import {module}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "`{} -c 'import {module}'` failed: install PyPI's {module} there (see this file's docs) or set TRAC_ENVS_PYTHON",
        py.display()
    );
    py
}

fn spec(name: &str) -> CheckedSpec {
    Spec::from_path(&root().join("examples/specs").join(name))
        .unwrap()
        .check()
        .unwrap()
}

fn model(cmd: &str) -> Arc<dyn ChatModel> {
    let mut o = ModelOptions::new(format!("cmd:{cmd}"));
    o.timeout = Duration::from_secs(120);
    trac_llm::open_model(&o).unwrap()
}

fn run(
    spec: &CheckedSpec,
    env: &mut dyn Environment,
    agent: &str,
    intervention: Intervention,
    max_steps: usize,
) -> (RunResult, Vec<StepRecord>) {
    let cfg = RunConfig {
        intervention,
        sampling: SamplingPredictor {
            k: 1,
            n: 2,
            temperature: 0.8,
            max_tokens: None,
        },
        max_steps,
        seed: 3,
        ..RunConfig::default()
    };
    let models = Models {
        agent: model(agent),
        substitute: None,
    };
    let mut steps = Vec::new();
    let r = run_episode(
        1,
        &cfg,
        std::slice::from_ref(spec),
        env,
        &models,
        &mut |s: &StepRecord| steps.push(s.clone()),
    )
    .unwrap();
    (r, steps)
}

fn count(r: &RunResult, id: &str) -> usize {
    r.violations
        .iter()
        .find(|(p, _)| p == id)
        .map(|(_, n)| *n)
        .unwrap()
}

fn script(name: &str) -> String {
    root()
        .join("examples/envs")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn quote(p: &Path) -> String {
    shlex_quote(&p.to_string_lossy())
}

fn shlex_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// TextWorld: a `tw-make tw-cooking` game, walkthrough agent. Under `none` rule R1 ("examine
/// what you take, at the next step") is violated once per `take` not followed by `examine` of
/// the same item (counted here from the actions); under `inject` the warning makes the agent
/// examine, so no violation, and the game is still won with its full score.
#[test]
#[cfg_attr(
    no_textworld,
    ignore = "needs PyPI textworld in ~/.cache/trac/envs-venv or TRAC_ENVS_PYTHON (.ci/install-envs)"
)]
fn textworld_adapter_runs_the_loop() {
    let py = python("textworld");
    let dir = std::env::temp_dir().join(format!("trac-tw-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let game = dir.join("cook.z8");
    let tw_make = py.parent().unwrap().join("tw-make");
    let out = Command::new(&tw_make)
        .args([
            "tw-cooking",
            "--recipe",
            "2",
            "--take",
            "2",
            "--cut",
            "--open",
        ])
        .args(["--go", "1", "--seed", "3", "--output"])
        .arg(&game)
        .output()
        .expect("run tw-make");
    assert!(
        out.status.success(),
        "tw-make failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = spec("textworld.ron");
    let adapter = format!(
        "{} {}",
        quote(&py),
        shlex_quote(&script("textworld_env.py"))
    );
    let env_cmd = format!("{adapter} env --game {}", quote(&game));
    let agent = format!("{adapter} agent --game {} --p 0", quote(&game));

    let mut env = CommandEnv::spawn(&env_cmd, Duration::from_secs(120)).unwrap();
    let (r, steps) = run(&s, &mut env, &agent, Intervention::None, 30);
    let max: f64 = env
        .task()
        .split("at most ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("the task names the maximum score");
    assert!(r.done, "the walkthrough wins the game");
    assert_eq!(r.reward, max);
    let actions: Vec<&str> = steps.iter().map(|s| s.action.as_str()).collect();
    let item = |a: &str, verb: &str| -> Option<String> {
        let rest = a.strip_prefix(verb)?;
        Some(rest.split(" from ").next()?.trim().to_string())
    };
    let expected = (0..actions.len().saturating_sub(1))
        .filter(|&i| {
            item(actions[i], "take ").is_some()
                && item(actions[i], "take ") != item(actions[i + 1], "examine ")
        })
        .count();
    assert!(
        expected > 0,
        "the walkthrough takes without examining: {actions:?}"
    );
    assert_eq!(count(&r, "R1"), expected, "{actions:?}");
    assert_eq!(count(&r, "R3") + count(&r, "R4"), 0, "{actions:?}");

    let mut env = CommandEnv::spawn(&env_cmd, Duration::from_secs(120)).unwrap();
    let (r, steps) = run(&s, &mut env, &agent, Intervention::Inject, 30);
    let actions: Vec<&str> = steps.iter().map(|s| s.action.as_str()).collect();
    assert_eq!(r.total_violations(), 0, "{actions:?}");
    assert!(r.interventions > 0);
    assert!(r.done);
    assert_eq!(r.reward, max);
    let _ = std::fs::remove_dir_all(&dir);
}

/// ScienceWorld: the paper's task (`use-thermometer`, variation 0), gold-path agent. Under
/// `none` rule R2 ("look around after entering a room") is violated once per `go` not followed
/// by `look around` (counted here from the actions) and R4 (only hallway, living room, kitchen)
/// once per move to another room; the gold path completes the task (score 100). Under `inject`
/// the agent looks around after each move: no R2 violation.
#[test]
#[cfg_attr(
    no_scienceworld,
    ignore = "needs PyPI scienceworld in ~/.cache/trac/envs-venv or TRAC_ENVS_PYTHON, and java (.ci/install-envs)"
)]
fn scienceworld_adapter_runs_the_loop() {
    let py = python("scienceworld");
    let s = spec("scienceworld.ron");
    let adapter = format!(
        "{} {}",
        quote(&py),
        shlex_quote(&script("scienceworld_env.py"))
    );
    let env_cmd = format!("{adapter} env --variation 0");
    let agent = format!("{adapter} agent --p 0");

    let mut env = CommandEnv::spawn(&env_cmd, Duration::from_secs(120)).unwrap();
    let (r, steps) = run(&s, &mut env, &agent, Intervention::None, 40);
    let actions: Vec<&str> = steps.iter().map(|s| s.action.as_str()).collect();
    assert!(r.done, "the gold path completes the task: {actions:?}");
    assert_eq!(r.reward, 100.0, "{actions:?}");
    let moves = |i: usize| actions[i].starts_with("go ");
    let r2 = (0..actions.len() - 1)
        .filter(|&i| moves(i) && actions[i + 1] != "look around")
        .count();
    assert!(r2 > 0, "{actions:?}");
    assert_eq!(count(&r, "R2"), r2, "{actions:?}");
    let allowed = ["go to hallway", "go to living room", "go to kitchen"];
    let r4 = (0..actions.len())
        .filter(|&i| moves(i) && !allowed.contains(&actions[i]))
        .count();
    assert_eq!(count(&r, "R4"), r4, "{actions:?}");

    let mut env = CommandEnv::spawn(&env_cmd, Duration::from_secs(120)).unwrap();
    let (r, steps) = run(&s, &mut env, &agent, Intervention::Inject, 50);
    let actions: Vec<&str> = steps.iter().map(|s| s.action.as_str()).collect();
    assert_eq!(count(&r, "R2"), 0, "{actions:?}");
    assert_eq!(count(&r, "R3"), 0, "{actions:?}");
    assert!(r.interventions > 0);
    assert!(r.done, "{actions:?}");
    assert_eq!(r.reward, 100.0, "{actions:?}");
}
