//! The run loop of TRAC_P+I (paper §4.2–4.3, §5.3): agent ↔ supervisor ↔ environment, with
//! prediction and interventions, step records for the terminal and the log, and summaries.
//!
//! Per step:
//! 1. **Predict** (when a predictor is on): each property's risk of a violation within `k`
//!    steps ([`crate::predict`]); the properties above the threshold τ are *at risk*.
//! 2. **Candidate**: the agent's own action (its prompt, acting temperature 0.2).
//! 3. **Intervene** ([`Intervention`]): *resample* keeps the best of the `n` predicted
//!    continuations' first actions (fewest violations; fresh samples if none were drawn);
//!    *inject* asks the agent again with the at-risk properties' residuals in English added to
//!    its prompt; *switch* asks the substitute model with only the rules and the history;
//!    *shield* (no prediction needed) checks the candidate's labels on the monitors and, if they
//!    lead to ⊥ now, replaces it by the first compliant one of `n` samples, else by the
//!    environment's no-op. Every intervention is recorded ([`InterventionRecord`]).
//! 4. **Execute** the action, label the step with the environment's ground truth (and the
//!    spec's rules), progress the monitors, report the verdicts.

use crate::agent::{parse_action, AgentPrompt, HistoryStep};
use crate::env::Environment;
use crate::predict::{simulate_step, DirectPredictor, Prediction, SamplingPredictor};
use crate::stats::MeanCi;
use crate::supervisor::{Check, Supervisor, SupervisorOptions};
use crate::AgentError;
use serde::Serialize;
use serde_json::{json, Value};
use std::sync::Arc;
use trac_llm::{ChatModel, ChatRequest, Usage};
use trac_runtime::audit::VerdictRecord;
use trac_runtime::Verdict;
use trac_spec::spec::CheckedSpec;

/// How the supervisor intervenes on an at-risk step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Intervention {
    /// Monitor only.
    None,
    /// Best of `n` samples.
    Resample,
    /// Constraint-guided prompting with the residuals in English.
    Inject,
    /// Take the action from a substitute model prompted with the rules and the history.
    Switch,
    /// Never let an action whose labels lead to ⊥ reach the environment.
    Shield,
}

impl Intervention {
    /// All interventions, `none` first.
    pub const ALL: [Intervention; 5] = [
        Intervention::None,
        Intervention::Resample,
        Intervention::Inject,
        Intervention::Switch,
        Intervention::Shield,
    ];

    /// `none`, `resample`, `inject`, `switch`, `shield`.
    pub fn as_str(self) -> &'static str {
        match self {
            Intervention::None => "none",
            Intervention::Resample => "resample",
            Intervention::Inject => "inject",
            Intervention::Switch => "switch",
            Intervention::Shield => "shield",
        }
    }

    /// Whether the intervention acts on predicted risk (so needs a predictor).
    pub fn needs_prediction(self) -> bool {
        matches!(
            self,
            Intervention::Resample | Intervention::Inject | Intervention::Switch
        )
    }
}

/// A name that is no [`Intervention`] (the name).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown intervention `{0}`: expected none, resample, inject, switch or shield")]
pub struct UnknownIntervention(pub String);

impl std::str::FromStr for Intervention {
    type Err = UnknownIntervention;
    fn from_str(s: &str) -> Result<Self, UnknownIntervention> {
        Intervention::ALL
            .into_iter()
            .find(|i| i.as_str() == s)
            .ok_or_else(|| UnknownIntervention(s.to_string()))
    }
}

/// Which predictor runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PredictorKind {
    /// Sampling continuations (paper §4.2), with the exact look-ahead first.
    Sampling,
    /// Asking a model for the probabilities.
    Direct,
}

/// Parameters of a run.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// The intervention.
    pub intervention: Intervention,
    /// The predictor, or `None` for no prediction.
    pub predictor: Option<PredictorKind>,
    /// Horizon `k`, sample count `n` and prediction/resampling temperature (0.8).
    pub sampling: SamplingPredictor,
    /// Risk threshold τ: a property is at risk when its predicted risk exceeds it.
    pub threshold: f64,
    /// The agent's acting temperature (0.2, paper appendix F.3).
    pub act_temperature: f32,
    /// Token limit of an action.
    pub max_tokens: Option<u32>,
    /// Steps per run at most.
    pub max_steps: usize,
    /// Base seed (run `r` resets the environment with `seed + r` and seeds the models from it).
    pub seed: u64,
    /// TRAC_R restarts after violations (default true).
    pub reset: bool,
    /// Prefix of the session names (`{prefix}run-R`), to keep runs of several configurations
    /// apart in one log.
    pub session_prefix: String,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            intervention: Intervention::None,
            predictor: None,
            sampling: SamplingPredictor::default(),
            threshold: 0.3,
            act_temperature: 0.2,
            max_tokens: Some(256),
            max_steps: 30,
            seed: 0,
            reset: true,
            session_prefix: String::new(),
        }
    }
}

/// The models of a run.
#[derive(Clone)]
pub struct Models {
    /// The agent.
    pub agent: Arc<dyn ChatModel>,
    /// The *switch* intervention's substitute (default: the agent's model).
    pub substitute: Option<Arc<dyn ChatModel>>,
}

impl Models {
    fn usage(&self) -> Usage {
        let mut u = self.agent.usage();
        if let Some(s) = &self.substitute {
            if !same(s, &self.agent) {
                u += s.usage();
            }
        }
        u
    }
}

fn same(a: &Arc<dyn ChatModel>, b: &Arc<dyn ChatModel>) -> bool {
    std::ptr::eq(Arc::as_ptr(a) as *const u8, Arc::as_ptr(b) as *const u8)
}

/// One intervention.
#[derive(Clone, Debug, Serialize)]
pub struct InterventionRecord {
    /// The step (1-based).
    pub step: usize,
    /// `resample`, `inject`, `switch`, `shield`.
    pub kind: Intervention,
    /// The properties that triggered it (at risk, or violated by the shielded action).
    pub properties: Vec<String>,
    /// Their predicted risks (1 for a shielded violation).
    pub risks: Vec<f64>,
    /// Their residuals in plain English.
    pub residuals: Vec<String>,
    /// The agent's candidate action.
    pub replaced: String,
    /// The action sent instead (may equal the candidate).
    pub by: String,
    /// Model requests the intervention spent (prediction not included, except the samples
    /// resample reuses).
    pub model_calls: u64,
    /// What happened, in words.
    pub note: String,
}

/// One executed step.
#[derive(Clone, Debug, Serialize)]
pub struct StepRecord {
    /// Run number (1-based).
    pub run: usize,
    /// Session name (`run-R`, after the configuration's prefix).
    pub session: String,
    /// Step (1-based).
    pub step: usize,
    /// The observation the agent acted on.
    pub input: String,
    /// The agent's candidate action.
    pub candidate: String,
    /// The action executed.
    pub action: String,
    /// The environment's answer.
    pub observation: String,
    /// Reward of the step.
    pub reward: f64,
    /// Whether the episode ended.
    pub done: bool,
    /// The step's labels (sorted).
    pub labels: Vec<String>,
    /// The prediction made before the step.
    pub prediction: Option<Prediction>,
    /// Interventions at this step.
    pub interventions: Vec<InterventionRecord>,
    /// Verdicts reached at this step.
    pub verdicts: Vec<VerdictRecord>,
}

impl StepRecord {
    /// The run-log line: a `trac audit` JSON Lines event (`session`, `step`, `input`,
    /// `output`, `labels`) with the run's details as extra fields (`candidate`, `observation`,
    /// `reward`, `done`, `risks`, `interventions`, `verdicts`).
    pub fn log_json(&self) -> Value {
        let risks: Value = match &self.prediction {
            None => Value::Null,
            Some(p) => json!(p.risks),
        };
        json!({
            "session": self.session,
            "step": self.step,
            "input": self.input,
            "output": self.action,
            "labels": self.labels,
            "candidate": self.candidate,
            "observation": self.observation,
            "reward": self.reward,
            "done": self.done,
            "risks": risks,
            "interventions": self.interventions,
            "verdicts": self.verdicts.iter().map(|v| json!({
                "property": v.property, "value": v.value, "verdict": v.verdict,
            })).collect::<Vec<_>>(),
        })
    }
}

/// What one run did.
#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    /// Run number (1-based).
    pub run: usize,
    /// Session name.
    pub session: String,
    /// Steps executed.
    pub steps: usize,
    /// Whether the environment ended the episode (else `max_steps` was reached).
    pub done: bool,
    /// Per property (spec order): `(id, violations)`.
    pub violations: Vec<(String, usize)>,
    /// Total reward.
    pub reward: f64,
    /// Interventions made (by kind: resample/inject/switch/shield).
    pub interventions: usize,
    /// Of which actually changed the action.
    pub replaced: usize,
    /// Model requests (agent, substitute, predictor), retries included.
    pub model_calls: u64,
    /// Model requests the exact look-ahead saved.
    pub saved_calls: u64,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Verdicts decided before the first step and at the end of the run.
    pub boundary_verdicts: Vec<VerdictRecord>,
}

impl RunResult {
    /// Total violations.
    pub fn total_violations(&self) -> usize {
        self.violations.iter().map(|(_, v)| v).sum()
    }
}

/// What the run loop reports as it goes.
pub trait Observer {
    /// A step was executed.
    fn step(&mut self, record: &StepRecord);
}

impl<F: FnMut(&StepRecord)> Observer for F {
    fn step(&mut self, record: &StepRecord) {
        self(record)
    }
}

fn act(
    model: &dyn ChatModel,
    messages: Vec<trac_llm::Message>,
    temperature: f32,
    seed: u64,
    n: usize,
    max_tokens: Option<u32>,
    tag: String,
) -> Result<Vec<String>, AgentError> {
    let r = model.complete(&ChatRequest {
        messages,
        n,
        temperature,
        seed: Some(seed),
        max_tokens,
        tag: Some(tag),
        ..ChatRequest::default()
    })?;
    Ok(r.choices.iter().map(|c| parse_action(&c.content)).collect())
}

/// The rules the agent is told: the spec's property descriptions (else their English), once
/// each, in order.
pub fn rules_of(sup: &Supervisor) -> Vec<String> {
    let mut rules: Vec<String> = Vec::new();
    for p in sup.properties() {
        let r = if p.description.trim().is_empty() {
            p.english.clone()
        } else {
            p.description.clone()
        };
        if !rules.contains(&r) {
            rules.push(r);
        }
    }
    rules
}

/// What one step's prediction and interventions read: the run's fixed parts (configuration,
/// models, prompt, property ids, session) and the step's (supervisor state, history, environment,
/// step number and seed).
struct Step<'a> {
    cfg: &'a RunConfig,
    models: &'a Models,
    sup: &'a Supervisor,
    env: &'a dyn Environment,
    prompt: &'a AgentPrompt,
    history: &'a [HistoryStep],
    ids: &'a [String],
    session: &'a str,
    t: usize,
    seed: u64,
}

impl Step<'_> {
    fn agent(&self) -> &dyn ChatModel {
        self.models.agent.as_ref()
    }

    /// Asks `model` for `n` actions; the seed is the step's plus `offset`, the tag names `what`.
    fn act(
        &self,
        model: &dyn ChatModel,
        messages: Vec<trac_llm::Message>,
        temperature: f32,
        offset: u64,
        n: usize,
        what: &str,
    ) -> Result<Vec<String>, AgentError> {
        act(
            model,
            messages,
            temperature,
            self.seed.wrapping_add(offset),
            n,
            self.cfg.max_tokens,
            format!("{} step {}: {what}", self.session, self.t),
        )
    }

    /// Step 1: the prediction of `predictor`, if any.
    fn predict(&self, predictor: Option<PredictorKind>) -> Result<Option<Prediction>, AgentError> {
        Ok(match predictor {
            None => None,
            Some(PredictorKind::Sampling) => Some(self.cfg.sampling.predict(
                self.sup,
                self.agent(),
                self.prompt,
                self.history,
                Some(self.env),
                self.seed.wrapping_add(1 << 24),
            )?),
            Some(PredictorKind::Direct) => Some(
                DirectPredictor {
                    k: self.cfg.sampling.k,
                    temperature: 0.0,
                }
                .predict(self.sup, self.agent(), self.prompt, self.history)?,
            ),
        })
    }

    /// Step 2: the agent's candidate action.
    fn candidate(&self) -> Result<String, AgentError> {
        let messages = self.prompt.act(self.history, None);
        let temperature = self.cfg.act_temperature;
        Ok(self
            .act(self.agent(), messages, temperature, 0, 1, "action")?
            .remove(0))
    }

    /// `n` samples of the agent at the sampling temperature (resample, shield).
    fn samples(&self, offset: u64, what: &str) -> Result<Vec<String>, AgentError> {
        let messages = self.prompt.act(self.history, None);
        let (temperature, n) = (self.cfg.sampling.temperature, self.cfg.sampling.n.max(1));
        self.act(self.agent(), messages, temperature, offset, n, what)
    }

    /// What `action` would do to the monitors, tried on a copy of the environment (or on the
    /// spec's rules alone when it cannot be copied).
    fn check_simulated(&self, action: &str) -> Result<Check, AgentError> {
        let (_, labels, _) = simulate_step(self.sup, self.env.try_clone().as_mut(), action)?;
        Ok(self.sup.check(action, &labels))
    }

    fn residuals(&self, idx: &[(usize, f64)]) -> Vec<String> {
        idx.iter()
            .map(|&(i, _)| self.sup.residual_english(i))
            .collect()
    }

    /// Model requests since `before`.
    fn calls_since(&self, before: u64) -> u64 {
        self.models.usage().requests - before
    }

    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        kind: Intervention,
        idx: &[(usize, f64)],
        residuals: Vec<String>,
        candidate: &str,
        by: &str,
        model_calls: u64,
        note: String,
    ) -> InterventionRecord {
        InterventionRecord {
            step: self.t,
            kind,
            properties: idx.iter().map(|&(i, _)| self.ids[i].clone()).collect(),
            risks: idx.iter().map(|&(_, p)| p).collect(),
            residuals,
            replaced: candidate.to_string(),
            by: by.to_string(),
            model_calls,
            note,
        }
    }

    /// Step 3: the intervention of the configuration on `candidate`: the action sent instead and
    /// its record, or `None` when it did not act.
    fn intervene(
        &self,
        candidate: &str,
        prediction: Option<&Prediction>,
        at_risk: &[(usize, f64)],
    ) -> Result<Option<(String, InterventionRecord)>, AgentError> {
        let before = self.models.usage().requests;
        Ok(match self.cfg.intervention {
            Intervention::None => None,
            Intervention::Resample if !at_risk.is_empty() => {
                let pred = prediction.expect("at risk needs a prediction");
                Some(self.resample(candidate, pred, at_risk, before)?)
            }
            Intervention::Inject if !at_risk.is_empty() => {
                Some(self.inject(candidate, at_risk, before)?)
            }
            Intervention::Switch if !at_risk.is_empty() => {
                Some(self.switch(candidate, at_risk, before)?)
            }
            Intervention::Shield => self.shield(candidate, before)?,
            _ => None,
        })
    }

    /// *Resample*: the best of the predicted continuations' first actions (fewest violations),
    /// or of fresh samples when none were drawn.
    fn resample(
        &self,
        candidate: &str,
        pred: &Prediction,
        at_risk: &[(usize, f64)],
        before: u64,
    ) -> Result<(String, InterventionRecord), AgentError> {
        let mut pool: Vec<(String, usize)> = pred
            .continuations
            .iter()
            .filter_map(|c| Some((c.actions.first()?.clone(), c.total())))
            .collect();
        let reused = !pool.is_empty();
        let mut note = format!("best of {} predicted continuations", pool.len());
        if !reused {
            for a in self.samples(2 << 24, "resample")? {
                let v = self.check_simulated(&a)?.violated.len();
                pool.push((a, v));
            }
            note = format!("best of {} fresh samples", pool.len());
        }
        let mut action = candidate.to_string();
        if let Some((best, score)) = pool.iter().min_by_key(|(_, v)| *v).cloned() {
            note.push_str(&format!(
                " (violations per sample: {:?}; kept one with {score})",
                pool.iter().map(|(_, v)| *v).collect::<Vec<_>>()
            ));
            action = best;
        }
        let calls = self.calls_since(before) + if reused { pred.calls } else { 0 };
        let res = self.residuals(at_risk);
        let kind = Intervention::Resample;
        let record = self.record(kind, at_risk, res, candidate, &action, calls, note);
        Ok((action, record))
    }

    /// *Inject*: the agent asked again with the at-risk residuals in its prompt.
    fn inject(
        &self,
        candidate: &str,
        at_risk: &[(usize, f64)],
        before: u64,
    ) -> Result<(String, InterventionRecord), AgentError> {
        let res = self.residuals(at_risk);
        let warning = at_risk
            .iter()
            .zip(&res)
            .map(|(&(i, _), r)| {
                format!(
                    "**{}** ({})",
                    r,
                    self.sup.properties()[i].description.trim()
                )
            })
            .collect::<Vec<_>>()
            .join(" ");
        let messages = self.prompt.act(self.history, Some(&warning));
        let temperature = self.cfg.act_temperature;
        let action = self
            .act(self.agent(), messages, temperature, 3 << 24, 1, "inject")?
            .remove(0);
        let calls = self.calls_since(before);
        let note = "asked again with the at-risk residuals in the prompt".into();
        let kind = Intervention::Inject;
        let record = self.record(kind, at_risk, res, candidate, &action, calls, note);
        Ok((action, record))
    }

    /// *Switch*: the action taken from the substitute model.
    fn switch(
        &self,
        candidate: &str,
        at_risk: &[(usize, f64)],
        before: u64,
    ) -> Result<(String, InterventionRecord), AgentError> {
        let substitute = self.models.substitute.as_deref().unwrap_or(self.agent());
        let res = self.residuals(at_risk);
        let messages = self.prompt.switch(self.history, &res.join("; "));
        let temperature = self.cfg.act_temperature;
        let action = self
            .act(substitute, messages, temperature, 4 << 24, 1, "switch")?
            .remove(0);
        let calls = self.calls_since(before);
        let note = format!(
            "action taken from the substitute model {}",
            substitute.name()
        );
        let kind = Intervention::Switch;
        let record = self.record(kind, at_risk, res, candidate, &action, calls, note);
        Ok((action, record))
    }

    /// *Shield*: a candidate whose labels lead to ⊥ now is replaced by the first compliant one
    /// of `n` samples, else by the environment's no-op; `None` when the candidate complies.
    fn shield(
        &self,
        candidate: &str,
        before: u64,
    ) -> Result<Option<(String, InterventionRecord)>, AgentError> {
        let check = self.check_simulated(candidate)?;
        if check.compliant() {
            return Ok(None);
        }
        let mut violated: Vec<(usize, f64)> = Vec::new();
        for (p, _) in &check.violated {
            if let Some(i) = self.ids.iter().position(|id| id == p) {
                if !violated.iter().any(|&(j, _)| j == i) {
                    violated.push((i, 1.0));
                }
            }
        }
        let res = self.residuals(&violated);
        let samples = self.samples(5 << 24, "shield resample")?;
        let mut chosen = None;
        for a in &samples {
            if self.check_simulated(a)?.compliant() {
                chosen = Some(a.clone());
                break;
            }
        }
        let note = match &chosen {
            Some(_) => format!(
                "blocked: its labels lead to ⊥ now; replaced by a compliant sample (of {})",
                samples.len()
            ),
            None => format!(
                "blocked: its labels lead to ⊥ now; none of {} samples complied, replaced by the environment's no-op",
                samples.len()
            ),
        };
        let action = chosen.unwrap_or_else(|| self.env.noop());
        let calls = self.calls_since(before);
        let kind = Intervention::Shield;
        let record = self.record(kind, &violated, res, candidate, &action, calls, note);
        Ok(Some((action, record)))
    }
}

/// Runs one episode (run number `run`, 1-based) and returns its result; every executed step is
/// passed to `observer` as it happens.
///
/// # Errors
/// A spec that cannot be monitored, a model or environment failure (the run stops there).
pub fn run_episode(
    run: usize,
    cfg: &RunConfig,
    specs: &[CheckedSpec],
    env: &mut dyn Environment,
    models: &Models,
    observer: &mut dyn Observer,
) -> Result<RunResult, AgentError> {
    let session = format!("{}run-{run}", cfg.session_prefix);
    let mut sup = Supervisor::new(
        specs,
        &SupervisorOptions {
            reset: cfg.reset,
            session: Some(session.clone()),
        },
    )?;
    let ids: Vec<String> = sup.properties().iter().map(|p| p.id.clone()).collect();
    let mut violations = vec![0usize; ids.len()];
    let count = |records: &[VerdictRecord], violations: &mut Vec<usize>| {
        for r in records {
            if r.verdict == Verdict::Violated {
                if let Some(i) = ids.iter().position(|id| *id == r.property) {
                    violations[i] += 1;
                }
            }
        }
    };
    let mut boundary = sup.initial();
    count(&boundary, &mut violations);
    let usage0 = models.usage();
    let first = env.reset(cfg.seed.wrapping_add(run as u64))?;
    let prompt = AgentPrompt {
        instructions: env.instructions(),
        rules: rules_of(&sup),
        task: env.task(),
        first_observation: first.clone(),
    };
    let mut history: Vec<HistoryStep> = Vec::new();
    let mut input = first;
    let (mut reward, mut interventions, mut replaced, mut saved) = (0.0, 0usize, 0usize, 0u64);
    let mut done = false;
    let mut steps = 0;
    let predictor = cfg.predictor.or(if cfg.intervention.needs_prediction() {
        Some(PredictorKind::Sampling)
    } else {
        None
    });
    for t in 1..=cfg.max_steps {
        steps = t;
        let step = Step {
            cfg,
            models,
            sup: &sup,
            env: &*env,
            prompt: &prompt,
            history: &history,
            ids: &ids,
            session: &session,
            t,
            seed: cfg
                .seed
                .wrapping_mul(1_000_003)
                .wrapping_add(run as u64 * 100_003)
                .wrapping_add(t as u64 * 1_009),
        };
        // 1. Predict.
        let prediction = step.predict(predictor)?;
        if let Some(p) = &prediction {
            saved += p.saved_calls;
        }
        let at_risk: Vec<(usize, f64)> = prediction
            .as_ref()
            .map(|p| {
                p.at_risk(cfg.threshold)
                    .into_iter()
                    .map(|(i, r)| (i, r.p))
                    .collect()
            })
            .unwrap_or_default();
        // 2. The agent's candidate.
        let candidate = step.candidate()?;
        // 3. Intervene.
        let (action, records) = match step.intervene(&candidate, prediction.as_ref(), &at_risk)? {
            Some((action, record)) => (action, vec![record]),
            None => (candidate.clone(), Vec::new()),
        };
        interventions += records.len();
        replaced += records.iter().filter(|r| r.by != r.replaced).count();
        // 4. Execute.
        let outcome = env.step(&action)?;
        let labels = sup.label(&action, outcome.labels.clone());
        let verdicts = sup.commit(&action, Some(&input), &labels);
        count(&verdicts, &mut violations);
        reward += outcome.reward;
        let mut sorted: Vec<String> = labels.iter().map(|s| s.to_string()).collect();
        sorted.sort();
        let rec = StepRecord {
            run,
            session: session.clone(),
            step: t,
            input: input.clone(),
            candidate,
            action: action.clone(),
            observation: outcome.observation.clone(),
            reward: outcome.reward,
            done: outcome.done,
            labels: sorted,
            prediction,
            interventions: records,
            verdicts,
        };
        observer.step(&rec);
        history.push(HistoryStep {
            action,
            observation: outcome.observation.clone(),
        });
        input = outcome.observation;
        if outcome.done {
            done = true;
            break;
        }
    }
    let end = sup.end_of_run();
    count(&end, &mut violations);
    boundary.extend(end);
    let usage = models.usage();
    Ok(RunResult {
        run,
        session,
        steps,
        done,
        violations: ids.into_iter().zip(violations).collect(),
        reward,
        interventions,
        replaced,
        model_calls: usage.requests - usage0.requests,
        saved_calls: saved,
        prompt_tokens: usage.prompt_tokens - usage0.prompt_tokens,
        completion_tokens: usage.completion_tokens - usage0.completion_tokens,
        boundary_verdicts: boundary,
    })
}

/// Statistics over runs: per property the mean violations with a 95% interval, and the same
/// for total violations, reward, interventions, model calls and tokens.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Number of runs.
    pub runs: usize,
    /// Per property: `(id, mean ± CI of violations per run)`.
    pub violations: Vec<(String, MeanCi)>,
    /// Total violations per run.
    pub total_violations: MeanCi,
    /// Fraction of runs with at least one violation.
    pub violation_rate: MeanCi,
    /// Reward per run.
    pub reward: MeanCi,
    /// Steps per run.
    pub steps: MeanCi,
    /// Interventions per run.
    pub interventions: MeanCi,
    /// Model requests per run.
    pub model_calls: MeanCi,
    /// Model requests saved by the exact look-ahead per run.
    pub saved_calls: MeanCi,
    /// Tokens (prompt + completion) per run.
    pub tokens: MeanCi,
}

impl Summary {
    /// The summary of `results` (all runs of one configuration).
    pub fn of(results: &[RunResult]) -> Summary {
        let col =
            |f: &dyn Fn(&RunResult) -> f64| MeanCi::of(&results.iter().map(f).collect::<Vec<_>>());
        let ids: Vec<String> = results
            .first()
            .map(|r| r.violations.iter().map(|(id, _)| id.clone()).collect())
            .unwrap_or_default();
        Summary {
            runs: results.len(),
            violations: ids
                .iter()
                .enumerate()
                .map(|(i, id)| (id.clone(), col(&|r| r.violations[i].1 as f64)))
                .collect(),
            total_violations: col(&|r| r.total_violations() as f64),
            violation_rate: col(&|r| f64::from(u8::from(r.total_violations() > 0))),
            reward: col(&|r| r.reward),
            steps: col(&|r| r.steps as f64),
            interventions: col(&|r| r.interventions as f64),
            model_calls: col(&|r| r.model_calls as f64),
            saved_calls: col(&|r| r.saved_calls as f64),
            tokens: col(&|r| (r.prompt_tokens + r.completion_tokens) as f64),
        }
    }
}
