//! Yes/no scoring of propositions, the core of labeling by scoring ([`crate::scoring`]): the
//! question asked of each proposition after a step's context, `P(yes)` from the
//! log-probabilities of the answers, and the generated value of a parametric proposition that
//! holds. Needs only a model that can score ([`ChatModel::score`]).

use crate::model::{ChatModel, ChatRequest, Message, ScoreRequest};
use serde::Serialize;
use trac_runtime::label::labeler::label_value;
use trac_runtime::label::labeler::LabelFailure;
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

/// Scores `props` at `event` with `model`, each asked after `context` (the earlier steps and
/// the step to label, [`crate::labeler::LlmLabeler::scoring_context`]); parametric values are
/// normalized as the rule labeler's (`case_sensitive`). See the [module docs](crate::scoring).
///
/// Errors: the model failed or cannot score; the failure names the step.
pub fn score_propositions(
    model: &dyn ChatModel,
    props: &[PropositionDecl],
    case_sensitive: bool,
    context: &str,
    config: &ScoringConfig,
    event: &Event,
) -> Result<Vec<PropScore>, LabelFailure> {
    let fail = |message: String| LabelFailure {
        step: event.step,
        line: event.line,
        message,
    };
    if props.is_empty() {
        return Ok(Vec::new());
    }
    let prompts: Vec<Vec<Message>> = props.iter().map(|p| prompt(context, p)).collect();
    let req = ScoreRequest {
        prompts: prompts.clone(),
        choices: YES.iter().chain(NO.iter()).map(|s| s.to_string()).collect(),
        tag: Some(format!("scoring step {}", event.step)),
    };
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
                    case_sensitive,
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
