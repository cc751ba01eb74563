//! Labeling by scoring: each proposition is decided by comparing the probability of a yes and a
//! no answer, instead of parsing a generated JSON object.
//!
//! For a step, one prompt per proposition is built: the same context (the last
//! [`LlmLabelerConfig::window`] steps of the session and the step to label, as
//! [`LlmLabeler::messages`] renders them), then a question about that one proposition. The
//! prompts share everything up to the question, so a model that keeps its KV cache evaluates the
//! step's context once and only the question of each proposition after it
//! ([`ChatModel::score`]). The proposition holds when `P(yes) / (P(yes) + P(no))` exceeds
//! [`ScoringConfig::threshold`], where `P(yes)` sums the probabilities of the answers `Yes`,
//! `yes`, and `P(no)` those of `No`, `no`. The answer is therefore always valid, and comes with
//! a confidence (`max(p, 1 - p)`).
//!
//! A parametric proposition (`take(item)`) is first asked as "does it hold for some value"; when
//! it does, the value is generated (greedy, a few tokens: "Which item? Answer with its name
//! only.") and normalized as the rule labeler's values.
//!
//! This is the labeling function of the paper (§3) with a small model; the paper's §5.1 finds
//! small labeling models competitive with frontier LLM judges.

use crate::labeler::{LlmLabeler, ANSWER_MARKER, STEP_MARKER};
use crate::model::{ChatModel, ChatRequest, Message, ScoreRequest};
use serde::Serialize;
use std::sync::Arc;
use trac_runtime::labeler::label_value;
use trac_runtime::labeler::{LabelFailure, Labeler};
use trac_runtime::trace::Event;
use trac_spec::spec::PropositionDecl;

/// The answers whose probabilities make `P(yes)`.
pub const YES: [&str; 2] = ["Yes", "yes"];
/// The answers whose probabilities make `P(no)`.
pub const NO: [&str; 2] = ["No", "no"];

/// Settings of labeling by scoring.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoringConfig {
    /// A proposition holds when `P(yes) / (P(yes) + P(no))` is above this. Default 0.5.
    pub threshold: f64,
    /// Token limit of a generated parametric value. Default 12.
    pub value_tokens: u32,
}

impl Default for ScoringConfig {
    fn default() -> Self {
        ScoringConfig {
            threshold: 0.5,
            value_tokens: 12,
        }
    }
}

/// One proposition's score at a step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PropScore {
    /// The proposition's name.
    pub proposition: String,
    /// `P(yes) / (P(yes) + P(no))`, in `[0, 1]`.
    pub p_yes: f64,
    /// Whether it holds (`p_yes` above the threshold).
    pub holds: bool,
    /// For a parametric proposition that holds, the generated value (normalized), if any.
    pub value: Option<String>,
}

impl PropScore {
    /// The confidence of the decision: `max(p_yes, 1 - p_yes)`.
    pub fn confidence(&self) -> f64 {
        self.p_yes.max(1.0 - self.p_yes)
    }
}

/// The system message of scoring prompts.
pub const SYSTEM: &str = "You judge one step of an AI agent's trace. Earlier steps are context \
only. Answer the question about the step to label with yes or no.";

/// `ln(e^a + e^b + ...)`, `-inf` for no terms.
fn log_sum_exp(xs: impl IntoIterator<Item = f64>) -> f64 {
    let xs: Vec<f64> = xs.into_iter().collect();
    let m = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + xs.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// `P(yes) / (P(yes) + P(no))` from the log-probabilities of [`YES`] then [`NO`] (in that
/// order); 0.5 when both are impossible.
pub fn p_yes(logprobs: &[f64]) -> f64 {
    let y = log_sum_exp(logprobs[..YES.len()].iter().copied());
    let n = log_sum_exp(logprobs[YES.len()..YES.len() + NO.len()].iter().copied());
    if y == f64::NEG_INFINITY && n == f64::NEG_INFINITY {
        return 0.5;
    }
    // 1 / (1 + e^(n - y)), stable for large differences.
    1.0 / (1.0 + (n - y).exp())
}

/// A labeling function that decides each proposition by scoring yes/no answers (see the
/// [module docs](self)). Its model must support [`ChatModel::score`].
pub struct ScoringLabeler {
    inner: LlmLabeler,
    config: ScoringConfig,
    failures: Vec<LabelFailure>,
}

impl std::fmt::Debug for ScoringLabeler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScoringLabeler")
            .field("inner", &self.inner)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl ScoringLabeler {
    /// A scoring labeler over the propositions, model and prompt settings of `inner`.
    pub fn new(inner: LlmLabeler, config: ScoringConfig) -> ScoringLabeler {
        ScoringLabeler {
            inner,
            config,
            failures: Vec::new(),
        }
    }

    /// The model asked.
    pub fn model(&self) -> &Arc<dyn ChatModel> {
        self.inner.model()
    }

    /// The scores of every proposition at `event` (`history`: earlier steps of its session).
    ///
    /// Errors: the model failed; the failure names the step.
    pub fn score_step(
        &self,
        event: &Event,
        history: &[Event],
    ) -> Result<Vec<PropScore>, LabelFailure> {
        score_step(&self.inner, &self.config, event, history)
    }

    /// Failures of [`Labeler::label`] calls so far (taken out).
    pub fn take_failures(&mut self) -> Vec<LabelFailure> {
        std::mem::take(&mut self.failures)
    }
}

impl Labeler for ScoringLabeler {
    /// Prefer [`Labeler::try_label`]: a step that could not be labeled gives no labels here and
    /// the failure is kept for [`ScoringLabeler::take_failures`].
    fn label(&mut self, event: &Event, history: &[Event]) -> Vec<String> {
        match self.try_label(event, history) {
            Ok(l) => l,
            Err(f) => {
                self.failures.push(f);
                Vec::new()
            }
        }
    }

    fn try_label(&mut self, event: &Event, history: &[Event]) -> Result<Vec<String>, LabelFailure> {
        self.score_step(event, history).map(|s| labels_of(&s))
    }
}

/// The labels the scores give: `p` for a plain proposition that holds, `p(v)` for a parametric
/// one with a value.
pub fn labels_of(scores: &[PropScore]) -> Vec<String> {
    scores
        .iter()
        .filter(|s| s.holds)
        .map(|s| match &s.value {
            Some(v) => format!("{}({v})", s.proposition),
            None => s.proposition.clone(),
        })
        .collect()
}

/// The context part of the labeling prompt of `labeler` for `event`: the earlier steps and the
/// step to label, without the proposition catalogue and the JSON answer instructions.
fn context_text(labeler: &LlmLabeler, event: &Event, history: &[Event]) -> String {
    let msgs = labeler.messages(event, history);
    let user = msgs
        .iter()
        .rev()
        .find(|m| m.role == crate::model::Role::User)
        .map(|m| m.content.as_str())
        .unwrap_or("");
    let start = user
        .find("Earlier steps")
        .or_else(|| user.find(STEP_MARKER))
        .unwrap_or(0);
    let end = user
        .rfind(&format!("\n\n{ANSWER_MARKER}"))
        .unwrap_or(user.len());
    user[start..end.max(start)].trim_end().to_string()
}

fn question(p: &PropositionDecl) -> String {
    let desc = if p.description.trim().is_empty() {
        p.name.clone()
    } else {
        p.description.trim().trim_end_matches('.').to_string()
    };
    let mut q = match &p.param {
        None => format!("Question: at the step to label, {desc}?"),
        Some(param) => {
            let desc = desc.replace(&format!("{{{param}}}"), &format!("some {param}"));
            format!("Question: at the step to label, {desc}?")
        }
    };
    let examples: Vec<String> = p
        .examples
        .iter()
        .take(4)
        .map(|ex| {
            format!(
                "{} -> {}",
                serde_json::to_string(&ex.text).expect("a string serializes"),
                if ex.holds { "yes" } else { "no" }
            )
        })
        .collect();
    if !examples.is_empty() {
        q.push_str(&format!(" (Examples: {}.)", examples.join("; ")));
    }
    q.push_str(" Answer yes or no.");
    q
}

/// The scoring prompt of proposition `p` after `context`.
fn prompt(context: &str, p: &PropositionDecl) -> Vec<Message> {
    vec![
        Message::system(SYSTEM),
        Message::user(format!("{context}\n\n{}", question(p))),
    ]
}

/// Scores the propositions of `labeler` at `event` (see the [module docs](self)).
///
/// Errors: the model failed or cannot score; the failure names the step.
pub fn score_step(
    labeler: &LlmLabeler,
    config: &ScoringConfig,
    event: &Event,
    history: &[Event],
) -> Result<Vec<PropScore>, LabelFailure> {
    let fail = |message: String| LabelFailure {
        step: event.step,
        line: event.line,
        message,
    };
    let props = labeler.propositions();
    if props.is_empty() {
        return Ok(Vec::new());
    }
    let context = context_text(labeler, event, history);
    let prompts: Vec<Vec<Message>> = props.iter().map(|p| prompt(&context, p)).collect();
    let req = ScoreRequest {
        prompts: prompts.clone(),
        choices: YES.iter().chain(NO.iter()).map(|s| s.to_string()).collect(),
        tag: Some(format!("scoring step {}", event.step)),
    };
    let model = labeler.model();
    let resp = model.score(&req).map_err(|e| fail(e.to_string()))?;
    if resp.logprobs.len() != props.len()
        || resp.logprobs.iter().any(|l| l.len() != req.choices.len())
    {
        return Err(fail(format!(
            "model `{}` answered {} score row(s) for {} proposition(s)",
            model.name(),
            resp.logprobs.len(),
            props.len()
        )));
    }
    let mut out = Vec::with_capacity(props.len());
    for ((p, lp), msgs) in props.iter().zip(&resp.logprobs).zip(prompts) {
        let p_yes = p_yes(lp);
        let holds = p_yes > config.threshold;
        let value = match (&p.param, holds) {
            (Some(param), true) => {
                let mut messages = msgs;
                messages.push(Message::assistant("Yes"));
                messages.push(Message::user(format!(
                    "Which {param}? Answer with its name only."
                )));
                let req = ChatRequest {
                    messages,
                    max_tokens: Some(config.value_tokens),
                    stop: vec!["\n".into(), ".".into(), ",".into()],
                    tag: Some(format!("value of {} at step {}", p.name, event.step)),
                    ..ChatRequest::default()
                };
                let r = model.complete(&req).map_err(|e| fail(e.to_string()))?;
                let text = r
                    .choices
                    .into_iter()
                    .next()
                    .map(|c| c.content)
                    .unwrap_or_default();
                label_value(
                    text.trim().trim_matches(['"', '\'', '`']),
                    1,
                    labeler.case_sensitive(),
                    true,
                )
            }
            _ => None,
        };
        out.push(PropScore {
            proposition: p.name.clone(),
            p_yes,
            holds: holds && (p.param.is_none() || value.is_some()),
            value,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_yes_compares_summed_probabilities() {
        // P(Yes)=0.2, P(yes)=0.1, P(No)=0.1, P(no)=0.1 -> 0.3 / 0.5.
        let lp = [0.2f64.ln(), 0.1f64.ln(), 0.1f64.ln(), 0.1f64.ln()];
        assert!((p_yes(&lp) - 0.6).abs() < 1e-12);
        let impossible = [f64::NEG_INFINITY; 4];
        assert_eq!(p_yes(&impossible), 0.5);
        // Far apart: no overflow.
        let lp = [-1.0, f64::NEG_INFINITY, -2000.0, f64::NEG_INFINITY];
        assert!(p_yes(&lp) > 0.999_999);
    }

    #[test]
    fn labels_of_scores() {
        let s = |p: &str, holds: bool, value: Option<&str>| PropScore {
            proposition: p.into(),
            p_yes: if holds { 0.9 } else { 0.1 },
            holds,
            value: value.map(str::to_string),
        };
        let scores = [
            s("go", true, None),
            s("drop", false, None),
            s("take", true, Some("knife")),
        ];
        assert_eq!(labels_of(&scores), ["go", "take(knife)"]);
        assert!((scores[1].confidence() - 0.9).abs() < 1e-12);
    }
}
