//! LLM-as-a-judge baselines (the paper's §5.1 and appendix F.1): a model is shown the rules and
//! an agent's numbered action log and names, per action, the rules it violates. Its answer is
//! scored against TRAC_R with the rules' labels (the paper's ground truth) exactly as
//! `trac label-eval` scores TRAC with an LLM labeler: a violation is the key (property, step),
//! counted by [`AuditScores::add_keys`] (TP when both report it, FP only the judge, FN only
//! TRAC_R), F1 = 2TP/(2TP+FP+FN) over all properties and traces of a run; a method's score is the
//! mean F1 over runs with a 95% interval ([`crate::stats::mean_interval`]).
//!
//! The judge names rules, not parameter values: a parametric property's violations are compared
//! by (property, step), several instances violated at one step counting once. A judge reports no
//! satisfaction, so only violations are scored for it.
//!
//! An answer that does not give every action a verdict ([`parse::parse_answer`]) is asked again
//! ([`JudgeConfig::answer_retries`] times, as another sample); then the trace counts as a failure
//! of the judge for that run: reported with the answer's problem, and left out of the run's F1
//! (never read as "no violation").

pub mod parse;
pub mod prompt;

use crate::stats::{mean_interval, Interval};
use serde::Serialize;
use std::collections::BTreeSet;
use trac_llm::labeler::{HybridError, HybridLabeler, LabelerMode, LlmLabelerConfig};
use trac_llm::metrics::{AuditScores, VerdictKey};
use trac_llm::{ChatModel, ChatRequest, ModelError};
use trac_runtime::audit::{AuditError, AuditOptions, Auditor};
use trac_runtime::label::labeler::LabelFailure;
use trac_runtime::trace::Event;
use trac_runtime::Verdict;
use trac_spec::spec::{CheckedSpec, Spec};

/// A judge baseline of the paper.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// The rules and the action log.
    ZeroShot,
    /// Plus each rule's worked examples (the `examples` of the spec's properties).
    FewShot,
    /// Plus the propositions true at each step, from a perfect labeler (the rules).
    FewShotLabels,
}

impl Method {
    /// The three, in the paper's order.
    pub const ALL: [Method; 3] = [Method::ZeroShot, Method::FewShot, Method::FewShotLabels];

    /// `zero-shot`, `few-shot`, `few-shot-labels`.
    pub fn name(self) -> &'static str {
        match self {
            Method::ZeroShot => "zero-shot",
            Method::FewShot => "few-shot",
            Method::FewShotLabels => "few-shot-labels",
        }
    }
}

/// How the judge is asked.
#[derive(Clone, Debug)]
pub struct JudgeConfig {
    /// Sampling temperature (the paper: 0.2).
    pub temperature: f32,
    /// Further samples asked when an answer cannot be read (default 1).
    pub answer_retries: u32,
    /// Answer tokens allowed per action (plus 64) (default 24).
    pub tokens_per_action: u32,
    /// Requests in flight at once (default 4).
    pub concurrency: usize,
}

impl Default for JudgeConfig {
    fn default() -> Self {
        JudgeConfig {
            temperature: 0.2,
            answer_retries: 1,
            tokens_per_action: 24,
            concurrency: 4,
        }
    }
}

/// One session of a trace, ready to be judged: its actions, the rules' labels, and TRAC_R's
/// violations with those labels.
#[derive(Clone, Debug)]
pub struct JudgeTrace {
    /// `FILE` or `FILE#SESSION`.
    pub name: String,
    /// The actions (each event's output, else its line), step 1 first.
    pub actions: Vec<String>,
    /// The propositions true at each step by the spec's rules.
    pub labels: Vec<Vec<String>>,
    /// TRAC_R's violations with the rules' labels, as (property, step, `None`).
    pub reference: BTreeSet<VerdictKey>,
}

/// Why traces cannot be prepared.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// The rules labeler cannot be built.
    #[error("{0}")]
    Labeler(#[from] HybridError),
    /// A step cannot be labeled by the rules.
    #[error("{trace}: {source}")]
    Label {
        /// The trace.
        trace: String,
        /// Why.
        #[source]
        source: LabelFailure,
    },
    /// The spec cannot be audited.
    #[error("{0}")]
    Audit(#[from] AuditError),
}

/// The sessions of the trace `name` (its `events`), each labeled by `spec`'s rules and audited
/// with TRAC_R (`opts`, whose `reset` should be `true`).
///
/// Errors: see [`PrepareError`].
pub fn prepare(
    spec: &CheckedSpec,
    opts: &AuditOptions,
    name: &str,
    events: &[Event],
) -> Result<Vec<JudgeTrace>, PrepareError> {
    let specs: [&Spec; 1] = [&spec.spec];
    let rules = HybridLabeler::new(
        &specs,
        LabelerMode::Rules,
        None,
        &LlmLabelerConfig::default(),
        false,
    )?;
    let mut sessions: Vec<Option<String>> = Vec::new();
    for e in events {
        if !sessions.contains(&e.session) {
            sessions.push(e.session.clone());
        }
    }
    let mut out = Vec::new();
    for s in &sessions {
        let trace = match s {
            Some(s) => format!("{name}#{s}"),
            None => name.to_string(),
        };
        let mut auditor = Auditor::new(std::slice::from_ref(spec), opts)?;
        let mut recs = auditor.initial();
        let (mut actions, mut labels) = (Vec::new(), Vec::new());
        for e in events.iter().filter(|e| e.session == *s) {
            let l = rules
                .label_step(e, &[])
                .map_err(|source| PrepareError::Label {
                    trace: trace.clone(),
                    source,
                })?
                .names();
            recs.extend(auditor.step_labeled(e, l.iter().cloned().collect()));
            actions.push(e.output.clone().unwrap_or_else(|| e.raw.clone()));
            labels.push(l);
        }
        recs.extend(auditor.end_of_trace());
        let reference = recs
            .iter()
            .filter(|r| r.verdict == Verdict::Violated && r.step >= 1)
            .map(|r| (r.property.clone(), r.step.min(actions.len()), None))
            .collect();
        out.push(JudgeTrace {
            name: trace,
            actions,
            labels,
            reference,
        });
    }
    Ok(out)
}

/// Why a judge gave no usable answer for a trace.
#[derive(Debug, thiserror::Error)]
pub enum JudgeFailure {
    /// The model failed (after its own retries).
    #[error("{0}")]
    Model(#[from] ModelError),
    /// No answer could be read, after the retries; the last problem and answer.
    #[error("unreadable answer ({error}): {answer:?}")]
    Answer {
        /// The problem of the last answer.
        error: parse::AnswerError,
        /// The last answer (its first 200 characters).
        answer: String,
    },
}

/// The violations the judge finds in `trace` (run `run`, 0-based: sample `run`, seed `run`),
/// as (property id, step, `None`).
///
/// Errors: see [`JudgeFailure`].
pub fn judge_trace(
    model: &dyn ChatModel,
    spec: &CheckedSpec,
    trace: &JudgeTrace,
    method: Method,
    run: usize,
    config: &JudgeConfig,
) -> Result<BTreeSet<VerdictKey>, JudgeFailure> {
    let steps: Vec<prompt::Step> = trace
        .actions
        .iter()
        .zip(&trace.labels)
        .map(|(action, labels)| prompt::Step { action, labels })
        .collect();
    let messages = prompt::messages(spec, method, &steps);
    let attempts = config.answer_retries as usize + 1;
    let mut last = None;
    for attempt in 0..attempts {
        let sample = run * attempts + attempt;
        let req = ChatRequest {
            messages: messages.clone(),
            sample_offset: sample,
            temperature: config.temperature,
            seed: Some(sample as u64),
            max_tokens: Some(64 + config.tokens_per_action * trace.actions.len() as u32),
            tag: Some(format!("{} {} run {}", trace.name, method.name(), run + 1)),
            ..ChatRequest::default()
        };
        let answer = model
            .complete(&req)?
            .choices
            .into_iter()
            .next()
            .map(|c| c.content)
            .unwrap_or_default();
        match parse::parse_answer(&answer, trace.actions.len(), spec.properties.len()) {
            Ok(per_action) => {
                let mut out = BTreeSet::new();
                for (i, rules) in per_action.iter().enumerate() {
                    for &r in rules {
                        out.insert((spec.properties[r - 1].decl.id.clone(), i + 1, None));
                    }
                }
                return Ok(out);
            }
            Err(e) => last = Some((e, answer.chars().take(200).collect())),
        }
    }
    let (error, answer) = last.expect("at least one attempt");
    Err(JudgeFailure::Answer { error, answer })
}

/// One run of one method over all traces.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunScore {
    /// Per-property agreement with TRAC_R over the traces judged.
    pub scores: AuditScores,
    /// Traces judged.
    pub judged: usize,
    /// Traces the judge failed on: (trace, why).
    pub failures: Vec<(String, String)>,
}

impl RunScore {
    /// F1 of the violations over all properties (`None` when neither side reported one).
    pub fn violation_f1(&self) -> Option<f64> {
        self.scores.totals().0.f1()
    }

    /// F1 of the satisfactions over all properties.
    pub fn satisfaction_f1(&self) -> Option<f64> {
        self.scores.totals().1.f1()
    }
}

/// One row of the Figure 2 table: a method over its runs.
#[derive(Clone, Debug, Serialize)]
pub struct MethodScore {
    /// The domain (the spec's name).
    pub domain: String,
    /// `zero-shot`, `few-shot`, `few-shot-labels`, or `trac+labeler`.
    pub method: String,
    /// The runs.
    pub runs: Vec<RunScore>,
    /// Mean violation F1 over the runs where it is defined, with its 95% interval (clipped to
    /// [0, 1], the range of an F1).
    pub violation_f1: Option<Interval>,
    /// Mean satisfaction F1, likewise (`None` for judges: they report no satisfaction).
    pub satisfaction_f1: Option<Interval>,
    /// Judge failures over all runs.
    pub failures: usize,
}

impl MethodScore {
    /// The row of `runs`; `satisfactions`: score satisfactions too (not for a judge).
    pub fn new(domain: &str, method: &str, runs: Vec<RunScore>, satisfactions: bool) -> Self {
        let v: Vec<f64> = runs.iter().filter_map(RunScore::violation_f1).collect();
        let s: Vec<f64> = runs.iter().filter_map(RunScore::satisfaction_f1).collect();
        MethodScore {
            domain: domain.to_string(),
            method: method.to_string(),
            violation_f1: mean_interval(&v).map(clip),
            satisfaction_f1: if satisfactions {
                mean_interval(&s).map(clip)
            } else {
                None
            },
            failures: runs.iter().map(|r| r.failures.len()).sum(),
            runs,
        }
    }
}

fn clip(i: Interval) -> Interval {
    Interval {
        low: i.low.max(0.0),
        high: i.high.min(1.0),
        ..i
    }
}

/// Judges every trace with every method, `runs` times, `config.concurrency` requests at once;
/// one [`MethodScore`] per method, in `methods`' order. Failures of the judge are in the scores;
/// nothing here fails.
pub fn evaluate(
    model: &dyn ChatModel,
    spec: &CheckedSpec,
    traces: &[JudgeTrace],
    methods: &[Method],
    runs: usize,
    config: &JudgeConfig,
) -> Vec<MethodScore> {
    let jobs: Vec<(usize, usize, usize)> = (0..methods.len())
        .flat_map(|m| (0..runs).flat_map(move |r| (0..traces.len()).map(move |t| (m, r, t))))
        .collect();
    let results = crate::pool::par_map(&jobs, config.concurrency, |&(m, r, t)| {
        judge_trace(model, spec, &traces[t], methods[m], r, config).map_err(|e| e.to_string())
    });
    let ids = spec.properties.iter().map(|p| p.decl.id.as_str());
    let mut per: Vec<Vec<RunScore>> = vec![
        vec![
            RunScore {
                scores: AuditScores::new(ids.clone()),
                ..RunScore::default()
            };
            runs
        ];
        methods.len()
    ];
    for (&(m, r, t), res) in jobs.iter().zip(results) {
        let run = &mut per[m][r];
        match res {
            Ok(found) => {
                run.scores
                    .add_keys(Verdict::Violated, &traces[t].reference, &found);
                run.judged += 1;
            }
            Err(why) => run.failures.push((traces[t].name.clone(), why)),
        }
    }
    methods
        .iter()
        .zip(per)
        .map(|(m, runs)| MethodScore::new(&spec.spec.name, m.name(), runs, false))
        .collect()
}
