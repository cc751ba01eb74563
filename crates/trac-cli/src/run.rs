//! `trac run`: run an LLM agent in an environment under the supervisor (TRAC_P+I, crate
//! `trac-agent`): verdicts, risks and interventions live on the terminal, a summary per run and
//! over runs, and a JSON Lines log that `trac audit` re-audits.

use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use trac_agent::env::{CommandEnv, Environment};
use trac_agent::predict::SamplingPredictor;
use trac_agent::run::{
    run_episode, Intervention, Models, PredictorKind, RunConfig, RunResult, StepRecord, Summary,
};
use trac_agent::trucks::Trucks;
use trac_llm::{ChatModel, ModelOptions};
use trac_runtime::Verdict;
use trac_spec::spec::{CheckedSpec, Spec};

/// `--predictor` values.
#[derive(Copy, Clone, PartialEq, Eq, clap::ValueEnum)]
pub enum PredictorFlag {
    /// Sample continuations from the agent's model (paper §4.2), after the exact look-ahead.
    Sampling,
    /// Ask the model for the probabilities.
    Direct,
}

/// `--format` values of `trac run`.
#[derive(Copy, Clone, PartialEq, Eq, clap::ValueEnum)]
pub enum RunFormat {
    /// Steps and summaries for people, on stdout.
    Text,
    /// Steps on stderr; the summaries as one JSON document on stdout.
    Json,
}

/// The flags of `trac run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// A built-in environment: `trucks` (IPC-Trucks, 5 packages, paper §5.3).
    #[arg(long, value_name = "NAME", conflicts_with = "env_cmd")]
    env: Option<String>,
    /// An environment served by a child process speaking JSON lines (see trac_agent::env).
    #[arg(long, value_name = "CMD")]
    env_cmd: Option<String>,
    /// The spec (RON) whose properties are monitored (e.g. examples/specs/trucks-5.ron).
    /// Repeatable.
    #[arg(long = "spec", value_name = "FILE", required = true)]
    specs: Vec<PathBuf>,
    /// The agent's model (also the sampling predictor's): a name served at --base-url,
    /// `cmd:PROGRAM ARGS...`, or an embedded model run in process: `local` (the default;
    /// fetched by `trac model fetch`), `gguf:PATH`.
    #[arg(long, value_name = "MODEL", default_value = crate::model::DEFAULT_MODEL)]
    model: String,
    /// Base URL of an OpenAI-compatible server (e.g. http://127.0.0.1:8080/v1).
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Environment variable holding the API key [default: OPENAI_API_KEY]; never printed.
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
    /// Cache model answers in this directory (a rerun with the same seed asks nothing).
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// Seconds to wait for one model answer [default: 120].
    #[arg(long, value_name = "SECS", default_value_t = 120.0)]
    timeout: f64,
    /// Retries of a failed model request [default: 4].
    #[arg(long, value_name = "N", default_value_t = 4)]
    max_retries: u32,
    /// The switch intervention's substitute model (same server) [default: the agent's model].
    #[arg(long, value_name = "MODEL")]
    substitute_model: Option<String>,
    /// Prediction horizon and samples, `k=3,n=5`. On by default for resample, inject and
    /// switch; give it to predict under none and shield too.
    #[arg(long, value_name = "k=K,n=N")]
    predict: Option<String>,
    /// The predictor.
    #[arg(long, value_enum, default_value_t = PredictorFlag::Sampling)]
    predictor: PredictorFlag,
    /// Risk threshold τ: a property is at risk when its predicted risk exceeds it.
    #[arg(long, value_name = "TAU", default_value_t = 0.3)]
    threshold: f64,
    /// The intervention; a comma-separated list runs each in turn and compares them
    /// (`none,resample,inject,switch,shield`).
    #[arg(long, value_name = "KIND", default_value = "none")]
    intervene: String,
    /// Runs (episodes) per intervention.
    #[arg(long, value_name = "R", default_value_t = 1)]
    runs: usize,
    /// Steps per run at most.
    #[arg(long, value_name = "N", default_value_t = 30)]
    max_steps: usize,
    /// Base seed of the environment and of the model requests.
    #[arg(long, value_name = "S", default_value_t = 0)]
    seed: u64,
    /// The agent's temperature when acting (paper: 0.2).
    #[arg(long, value_name = "T", default_value_t = 0.2)]
    act_temperature: f32,
    /// The temperature of prediction and resampling samples (paper: 0.8).
    #[arg(long, value_name = "T", default_value_t = 0.8)]
    predict_temperature: f32,
    /// Token limit of one completion.
    #[arg(long, value_name = "N", default_value_t = 256)]
    max_tokens: u32,
    /// Plain TRAC: no restart after a violation.
    #[arg(long)]
    no_reset: bool,
    /// Write every step as a JSON Lines trace (one session per run, with labels, risks,
    /// interventions and verdicts) that `trac audit --spec SPEC FILE` re-audits.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Summaries only (no line per step).
    #[arg(long)]
    quiet: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = RunFormat::Text)]
    format: RunFormat,
}

fn parse_predict(s: &str) -> Result<(u32, usize), String> {
    let (mut k, mut n) = (3u32, 5usize);
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, v) = part
            .split_once('=')
            .ok_or_else(|| format!("--predict `{s}`: expected k=K,n=N"))?;
        match key.trim() {
            "k" => {
                k = v
                    .trim()
                    .parse()
                    .ok()
                    .filter(|&k| k >= 1)
                    .ok_or_else(|| format!("--predict `{s}`: k must be an integer ≥ 1"))?
            }
            "n" => {
                n = v
                    .trim()
                    .parse()
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| format!("--predict `{s}`: n must be an integer ≥ 1"))?
            }
            other => return Err(format!("--predict `{s}`: unknown key `{other}` (k, n)")),
        }
    }
    Ok((k, n))
}

struct Setup {
    specs: Vec<CheckedSpec>,
    interventions: Vec<Intervention>,
    cfg: RunConfig,
    models: Models,
}

fn setup(a: &RunArgs) -> Result<Setup, String> {
    if a.env.is_none() && a.env_cmd.is_none() {
        return Err("give an environment: --env trucks, or --env-cmd CMD".into());
    }
    if let Some(e) = &a.env {
        if e != "trucks" {
            return Err(format!(
                "--env {e}: unknown environment (built in: trucks; others through --env-cmd CMD)"
            ));
        }
    }
    let mut specs = Vec::new();
    for p in &a.specs {
        specs.push(
            Spec::from_path(p)
                .and_then(|s| s.check())
                .map_err(|e| e.to_string())?,
        );
    }
    let interventions = a
        .intervene
        .split(',')
        .map(|s| s.trim().parse::<Intervention>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    if !(a.threshold.is_finite() && (0.0..=1.0).contains(&a.threshold)) {
        return Err(format!(
            "--threshold {}: expected a number in [0, 1]",
            a.threshold
        ));
    }
    if a.runs == 0 || a.max_steps == 0 {
        return Err("--runs and --max-steps must be at least 1".into());
    }
    if !(a.timeout.is_finite() && a.timeout > 0.0) {
        return Err(format!(
            "--timeout {}: expected a positive number of seconds",
            a.timeout
        ));
    }
    let (k, n) = match &a.predict {
        Some(s) => parse_predict(s)?,
        None => (3, 5),
    };
    let open = |name: &str| -> Result<Arc<dyn ChatModel>, String> {
        let mut o = ModelOptions::new(name);
        o.base_url = a.base_url.clone();
        if let Some(v) = &a.api_key_env {
            o.api_key_env = v.clone();
        }
        o.cache = a.cache.clone();
        o.timeout = Duration::from_secs_f64(a.timeout);
        o.retry.max_retries = a.max_retries;
        crate::model::open_model(&o).map_err(|e| e.to_string())
    };
    let agent = open(&a.model)?;
    let substitute = match &a.substitute_model {
        Some(m) => Some(open(m)?),
        None => None,
    };
    let cfg = RunConfig {
        intervention: Intervention::None,
        predictor: a.predict.as_ref().map(|_| match a.predictor {
            PredictorFlag::Sampling => PredictorKind::Sampling,
            PredictorFlag::Direct => PredictorKind::Direct,
        }),
        sampling: SamplingPredictor {
            k,
            n,
            temperature: a.predict_temperature,
            max_tokens: Some(a.max_tokens),
        },
        threshold: a.threshold,
        act_temperature: a.act_temperature,
        max_tokens: Some(a.max_tokens),
        max_steps: a.max_steps,
        seed: a.seed,
        reset: !a.no_reset,
        session_prefix: String::new(),
    };
    let cfg = if a.predict.is_none() && a.predictor == PredictorFlag::Direct {
        RunConfig {
            predictor: Some(PredictorKind::Direct),
            ..cfg
        }
    } else {
        cfg
    };
    Ok(Setup {
        specs,
        interventions,
        cfg,
        models: Models { agent, substitute },
    })
}

fn verdict_mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Violated => "⊥ violated",
        Verdict::Satisfied => "⊤ satisfied",
        Verdict::Pending => "? pending",
    }
}

fn print_step(out: &mut dyn Write, s: &StepRecord) {
    let _ = writeln!(
        out,
        "[{} step {:>2}] {}{}",
        s.session,
        s.step,
        s.action,
        if s.reward != 0.0 {
            format!("  (reward {})", s.reward)
        } else {
            String::new()
        }
    );
    let _ = writeln!(out, "    → {}", s.observation);
    if let Some(p) = &s.prediction {
        let mut sampled: Vec<String> = p
            .risks
            .iter()
            .filter(|r| !r.exact && (r.p > 0.0 || r.samples == 0))
            .map(|r| {
                if r.samples > 0 {
                    format!(
                        "{} {:.2} [{:.2}, {:.2}] n={}",
                        r.property, r.p, r.low, r.high, r.samples
                    )
                } else {
                    format!("{} {:.2}", r.property, r.p)
                }
            })
            .collect();
        let exact0 = p.risks.iter().filter(|r| r.exact && r.p == 0.0).count();
        let exact1: Vec<&str> = p
            .risks
            .iter()
            .filter(|r| r.exact && r.p == 1.0)
            .map(|r| r.property.as_str())
            .collect();
        if !exact1.is_empty() {
            sampled.push(format!("exactly 1: {}", exact1.join(", ")));
        }
        let _ = writeln!(
            out,
            "    risk: {}{}exactly 0 (look-ahead): {} of {}{}",
            sampled.join("; "),
            if sampled.is_empty() { "" } else { "; " },
            exact0,
            p.risks.len(),
            if p.saved_calls > 0 {
                format!(", no sample needed ({} calls saved)", p.saved_calls)
            } else {
                String::new()
            }
        );
    }
    for i in &s.interventions {
        let _ = writeln!(
            out,
            "    ⚑ {}: {} (risk {}){}; {} model calls; `{}` → `{}`",
            i.kind.as_str(),
            i.properties.join(", "),
            i.risks
                .iter()
                .map(|r| format!("{r:.2}"))
                .collect::<Vec<_>>()
                .join(", "),
            if i.note.is_empty() {
                String::new()
            } else {
                format!(": {}", i.note)
            },
            i.model_calls,
            i.replaced,
            i.by
        );
        for r in &i.residuals {
            let _ = writeln!(out, "      residual: {r}");
        }
    }
    for v in &s.verdicts {
        let _ = writeln!(
            out,
            "    {} {}{}",
            verdict_mark(v.verdict),
            v.property,
            v.value
                .as_deref()
                .map(|x| format!(" ({x})"))
                .unwrap_or_default()
        );
    }
}

fn run_line(r: &RunResult) -> String {
    let per: Vec<String> = r
        .violations
        .iter()
        .filter(|(_, v)| *v > 0)
        .map(|(id, v)| format!("{id} {v}"))
        .collect();
    format!(
        "{}: {} steps{}, reward {}, violations {}{}, interventions {} ({} replaced), model calls {} (saved {}), tokens {}",
        r.session,
        r.steps,
        if r.done { ", done" } else { "" },
        r.reward,
        r.total_violations(),
        if per.is_empty() {
            String::new()
        } else {
            format!(" ({})", per.join(", "))
        },
        r.interventions,
        r.replaced,
        r.model_calls,
        r.saved_calls,
        r.prompt_tokens + r.completion_tokens
    )
}

fn print_summary(out: &mut dyn Write, name: &str, s: &Summary) {
    let _ = writeln!(
        out,
        "\n== {name}: {} run(s), mean ± 95% CI per run ==",
        s.runs
    );
    let w = s
        .violations
        .iter()
        .map(|(id, _)| id.len())
        .max()
        .unwrap_or(0)
        .max(24);
    let _ = writeln!(out, "violations, per property");
    for (id, m) in &s.violations {
        let _ = writeln!(out, "  {id:<w$}  {m}");
    }
    for (label, m) in [
        ("violations, total", &s.total_violations),
        ("runs with a violation", &s.violation_rate),
        ("reward", &s.reward),
        ("steps", &s.steps),
        ("interventions", &s.interventions),
        ("model calls", &s.model_calls),
        ("model calls saved", &s.saved_calls),
        ("tokens", &s.tokens),
    ] {
        let _ = writeln!(out, "{label:<w$}    {m}");
    }
}

/// `trac run`. Exit codes: 0 no violation in any run, 1 violations, 2 bad input, a model or an
/// environment failure.
/// The note of `trac audit` for each property over the state budget (run by progression), once
/// for all runs: each run's supervisor compiles through the shared compiler, which keeps the
/// refusal, so this costs the runs nothing. A property that cannot be monitored at all is left
/// to the first run, which reports it.
fn print_fallbacks(specs: &[CheckedSpec]) {
    let opts = trac_agent::supervisor::SupervisorOptions::default();
    if let Ok(sup) = trac_agent::supervisor::Supervisor::new(specs, &opts) {
        for f in sup.fallbacks() {
            eprintln!("{}", crate::fallback_note(f));
        }
    }
}

pub fn run(a: &RunArgs) -> ExitCode {
    let s = match setup(a) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut log = match &a.log {
        None => None,
        Some(p) => match std::fs::File::create(p) {
            Ok(f) => Some(std::io::BufWriter::new(f)),
            Err(e) => {
                eprintln!("error: {}: cannot write the log: {e}", p.display());
                return ExitCode::from(2);
            }
        },
    };
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let mut live: Box<dyn Write> = match a.format {
        RunFormat::Text => Box::new(stdout.lock()),
        RunFormat::Json => Box::new(stderr.lock()),
    };
    let mut env: Box<dyn Environment> = match (&a.env, &a.env_cmd) {
        (_, Some(cmd)) => match CommandEnv::spawn(cmd, Duration::from_secs_f64(a.timeout)) {
            Ok(e) => Box::new(e),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
        _ => Box::new(Trucks::new()),
    };
    print_fallbacks(&s.specs);
    let several = s.interventions.len() > 1;
    let mut all: Vec<(Intervention, Vec<RunResult>)> = Vec::new();
    let mut failed = None;
    'outer: for &i in &s.interventions {
        let cfg = RunConfig {
            intervention: i,
            session_prefix: if several {
                format!("{}-", i.as_str())
            } else {
                String::new()
            },
            ..s.cfg.clone()
        };
        let mut results = Vec::new();
        for r in 1..=a.runs {
            let mut log_err = None;
            let res = run_episode(
                r,
                &cfg,
                &s.specs,
                env.as_mut(),
                &s.models,
                &mut |st: &StepRecord| {
                    if !a.quiet {
                        print_step(live.as_mut(), st);
                    }
                    if let Some(l) = log.as_mut() {
                        if let Err(e) = writeln!(l, "{}", st.log_json()) {
                            log_err.get_or_insert(e);
                        }
                    }
                },
            );
            if let Some(e) = log_err {
                eprintln!("error: cannot write the log: {e}");
                return ExitCode::from(2);
            }
            match res {
                Ok(r) => {
                    for v in &r.boundary_verdicts {
                        let _ = writeln!(
                            live,
                            "[{}] {} {} at step {}",
                            r.session,
                            verdict_mark(v.verdict),
                            v.property,
                            v.step
                        );
                    }
                    let _ = writeln!(live, "{}", run_line(&r));
                    results.push(r);
                }
                Err(e) => {
                    failed = Some(format!(
                        "{}: {e}",
                        cfg.session_prefix.clone() + &format!("run-{r}")
                    ));
                    all.push((i, results));
                    break 'outer;
                }
            }
        }
        all.push((i, results));
    }
    if let Some(l) = log.as_mut() {
        if let Err(e) = l.flush() {
            eprintln!("error: cannot write the log: {e}");
            return ExitCode::from(2);
        }
    }
    let summaries: Vec<(Intervention, Summary)> = all
        .iter()
        .filter(|(_, r)| !r.is_empty())
        .map(|(i, r)| (*i, Summary::of(r)))
        .collect();
    print_results(a.format, &summaries, &all, failed.as_deref());
    if let Some(e) = failed {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let violated = all
        .iter()
        .flat_map(|(_, r)| r.iter())
        .any(|r| r.total_violations() > 0);
    if violated {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The summaries after the runs: per intervention (and a comparison table when there are
/// several) for people, or one JSON document with the runs and the error that stopped them.
fn print_results(
    output: RunFormat,
    summaries: &[(Intervention, Summary)],
    all: &[(Intervention, Vec<RunResult>)],
    failed: Option<&str>,
) {
    let stdout = std::io::stdout();
    match output {
        RunFormat::Text => {
            let mut out = stdout.lock();
            for (i, sum) in summaries {
                print_summary(&mut out, &format!("intervention {}", i.as_str()), sum);
            }
            if summaries.len() > 1 {
                let _ = writeln!(
                    out,
                    "\n{:<10}  {:>22}  {:>22}  {:>16}  {:>16}",
                    "intervene", "violations/run", "runs with violation", "reward", "model calls"
                );
                for (i, sum) in summaries {
                    let _ = writeln!(
                        out,
                        "{:<10}  {:>22}  {:>22}  {:>16}  {:>16}",
                        i.as_str(),
                        sum.total_violations.to_string(),
                        sum.violation_rate.to_string(),
                        sum.reward.to_string(),
                        sum.model_calls.to_string()
                    );
                }
            }
        }
        RunFormat::Json => {
            let doc = json!({
                "summaries": summaries.iter().map(|(i, s)| json!({"intervention": i.as_str(), "summary": s})).collect::<Vec<_>>(),
                "runs": all.iter().flat_map(|(_, r)| r.iter()).collect::<Vec<_>>(),
                "error": failed,
            });
            let _ = writeln!(stdout.lock(), "{doc:#}");
        }
    }
}
