//! Yes/no scoring of propositions, the core of labeling by scoring ([`crate::scoring`]): the
//! question asked of each proposition after a step's context, `P(yes)` from the
//! log-probabilities of the answers, the value of a parametric proposition that holds (the
//! step's candidate spans, each scored, one parameter at a time: [`crate::values`]), and the
//! threshold of each proposition calibrated on the spec's examples ([`calibrate_threshold`]).
//! Needs only a model that can score ([`ChatModel::score`]); nothing is generated.

use crate::model::{ChatModel, Message, ModelError, ScoreRequest};
use crate::values::{fill_description, param_names, step_candidates};
use serde::Serialize;
use trac_runtime::label::labeler::LabelFailure;
use trac_runtime::trace::Event;
use trac_spec::spec::PropositionDecl;

/// The answers whose probabilities make `P(yes)`.
pub const YES: [&str; 2] = ["Yes", "yes"];
/// The answers whose probabilities make `P(no)`.
pub const NO: [&str; 2] = ["No", "no"];

/// Why scoring failed.
#[derive(Debug, thiserror::Error)]
pub enum ScoringError {
    /// The model failed or cannot score.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The model answered another number of score rows than questions, or of scores in a row
    /// than answers.
    #[error("model `{model}` answered {rows} score row(s) for {questions} question(s)")]
    Rows {
        /// The model's name.
        model: String,
        /// Rows answered.
        rows: usize,
        /// Questions asked.
        questions: usize,
    },
}

/// Settings of labeling by scoring.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoringConfig {
    /// A proposition holds when `P(yes) / (P(yes) + P(no))` is above this, unless
    /// [`ScoringConfig::thresholds`] names it. Default 0.5.
    pub threshold: f64,
    /// Per-proposition thresholds (name, threshold), e.g. calibrated on the spec's examples
    /// ([`calibrate_threshold`]); they override [`ScoringConfig::threshold`]. Default none.
    pub thresholds: Vec<(String, f64)>,
    /// The longest candidate value, in words ([`step_candidates`]). Default 4.
    pub max_span_words: usize,
    /// Candidate values scored per parameter, at most. Default 48.
    pub max_candidates: usize,
}

impl Default for ScoringConfig {
    fn default() -> Self {
        ScoringConfig {
            threshold: 0.5,
            thresholds: Vec::new(),
            max_span_words: 4,
            max_candidates: 48,
        }
    }
}

impl ScoringConfig {
    /// The threshold of proposition `name`: its own in [`ScoringConfig::thresholds`], else
    /// [`ScoringConfig::threshold`].
    pub fn threshold_of(&self, name: &str) -> f64 {
        self.thresholds
            .iter()
            .find(|(n, _)| n == name)
            .map_or(self.threshold, |(_, t)| *t)
    }
}

/// One proposition's score at a step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PropScore {
    /// The proposition's name.
    pub proposition: String,
    /// `P(yes) / (P(yes) + P(no))`, in `[0, 1]`.
    pub p_yes: f64,
    /// The threshold `p_yes` was compared with.
    pub threshold: f64,
    /// Whether it holds (`p_yes` above the threshold; for a parametric proposition, also a
    /// value found in the step).
    pub holds: bool,
    /// For a parametric proposition that holds, its value: the step's best-scored candidate
    /// for each parameter, joined by `, ` (`package8, a1`), normalized as the rule labeler's.
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

/// The question of proposition `p` holding at all (its parameters as `some NAME`), with up to
/// four of the spec's examples.
fn question(p: &PropositionDecl) -> String {
    let mut q = format!(
        "Question: at the step to label, {}?",
        fill_description(p, &[])
    );
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

/// The question of proposition `p` holding with the parameter values `fill` (see
/// [`fill_description`]); no examples, so that none of their values is suggested.
fn value_question(p: &PropositionDecl, fill: &[Option<&str>]) -> String {
    format!(
        "Question: at the step to label, {}? Answer yes or no.",
        fill_description(p, fill)
    )
}

/// `P(yes) / (P(yes) + P(no))` of each question, each asked after `context` (one
/// [`ScoreRequest`]; see [`p_yes`]).
///
/// Errors: the model failed or cannot score, or answered the wrong number of rows.
pub fn yes_probabilities(
    model: &dyn ChatModel,
    context: &str,
    questions: &[String],
    tag: String,
) -> Result<Vec<f64>, ScoringError> {
    if questions.is_empty() {
        return Ok(Vec::new());
    }
    let req = ScoreRequest {
        prompts: questions
            .iter()
            .map(|q| {
                vec![
                    Message::system(SYSTEM),
                    Message::user(format!("{context}\n\n{q}")),
                ]
            })
            .collect(),
        choices: YES.iter().chain(NO.iter()).map(|s| s.to_string()).collect(),
        tag: Some(tag),
    };
    let resp = model.score(&req)?;
    if resp.logprobs.len() != questions.len()
        || resp.logprobs.iter().any(|l| l.len() != req.choices.len())
    {
        return Err(ScoringError::Rows {
            model: model.name().to_string(),
            rows: resp.logprobs.len(),
            questions: questions.len(),
        });
    }
    Ok(resp.logprobs.iter().map(|l| p_yes(l)).collect())
}

/// The value of parametric proposition `p` at the step: for each parameter in turn, the
/// candidate (`candidates`, from the step) whose question, with the parameters chosen so far
/// filled in and later ones `some NAME`, gets the highest `P(yes)` (the first on a tie); a
/// candidate chosen for one parameter is not offered for the next. `None` without candidates.
///
/// Errors: as [`yes_probabilities`].
fn choose_value(
    model: &dyn ChatModel,
    p: &PropositionDecl,
    candidates: &[String],
    context: &str,
    step: usize,
) -> Result<Option<String>, ScoringError> {
    let Some(param) = &p.param else {
        return Ok(None);
    };
    let mut chosen: Vec<String> = Vec::new();
    for name in param_names(param) {
        let offered: Vec<&String> = candidates.iter().filter(|c| !chosen.contains(c)).collect();
        if offered.is_empty() {
            return Ok(None);
        }
        let questions: Vec<String> = offered
            .iter()
            .map(|c| {
                let mut fill: Vec<Option<&str>> = chosen.iter().map(|v| Some(v.as_str())).collect();
                fill.push(Some(c.as_str()));
                value_question(p, &fill)
            })
            .collect();
        let tag = format!("{} of {} at step {step}", name, p.name);
        let ps = yes_probabilities(model, context, &questions, tag)?;
        let mut best = 0;
        for (i, &x) in ps.iter().enumerate() {
            if x > ps[best] {
                best = i;
            }
        }
        chosen.push(offered[best].clone());
    }
    Ok((!chosen.is_empty()).then(|| chosen.join(", ")))
}

/// Scores `props` at `event` with `model`, each asked after `context` (the earlier steps and
/// the step to label, [`crate::labeler::LlmLabeler::scoring_context`]). A parametric
/// proposition that holds gets its value from the step's candidates ([`step_candidates`],
/// normalized as the rule labeler's values, `case_sensitive`), scored one parameter at a time;
/// it holds only with a value. See the [module docs](crate::scoring).
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
    let questions: Vec<String> = props.iter().map(question).collect();
    let tag = format!("scoring step {}", event.step);
    let ps = yes_probabilities(model, context, &questions, tag).map_err(|e| fail(e.to_string()))?;
    let mut candidates: Option<Vec<String>> = None;
    let mut out = Vec::with_capacity(props.len());
    for (p, p_yes) in props.iter().zip(ps) {
        let threshold = config.threshold_of(&p.name);
        let holds = p_yes > threshold;
        let value = if holds && p.param.is_some() {
            let c = candidates.get_or_insert_with(|| {
                step_candidates(
                    event,
                    config.max_span_words,
                    config.max_candidates,
                    case_sensitive,
                )
            });
            choose_value(model, p, c, context, event.step).map_err(|e| fail(e.to_string()))?
        } else {
            None
        };
        out.push(PropScore {
            proposition: p.name.clone(),
            p_yes,
            threshold,
            holds: holds && (p.param.is_none() || value.is_some()),
            value,
        });
    }
    Ok(out)
}

/// The threshold on `P(yes)` that labels the most of `scored` (pairs of `P(yes)` and whether
/// the proposition holds, e.g. of the spec's examples) right, a proposition holding when
/// `P(yes)` is above it. The thresholds tried are `default` and the midpoints between
/// consecutive distinct scores; on a tie, the one nearest `default` (then the lower). Without
/// both a positive and a negative pair, `default`.
///
/// Positives at 0.62 and 0.66, negatives at 0.55 and 0.58: 0.60 (all four right).
pub fn calibrate_threshold(scored: &[(f64, bool)], default: f64) -> f64 {
    if !scored.iter().any(|s| s.1) || scored.iter().all(|s| s.1) {
        return default;
    }
    let mut xs: Vec<f64> = scored.iter().map(|s| s.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let mut tried = vec![default];
    tried.extend(xs.windows(2).map(|w| (w[0] + w[1]) / 2.0));
    let right = |t: f64| scored.iter().filter(|(p, h)| (*p > t) == *h).count();
    let mut best = default;
    for &t in &tried {
        let (r, rb) = (right(t), right(best));
        let nearer = (t - default).abs() < (best - default).abs()
            || ((t - default).abs() == (best - default).abs() && t < best);
        if r > rb || (r == rb && nearer) {
            best = t;
        }
    }
    best
}

/// A proposition's threshold calibrated on its examples.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Calibration {
    /// The proposition.
    pub proposition: String,
    /// The threshold on `P(yes)` ([`calibrate_threshold`]).
    pub threshold: f64,
    /// The examples it was calibrated on (0: none, the default threshold is kept).
    pub examples: usize,
    /// The fraction of those examples it labels right (`None` without examples).
    pub accuracy: Option<f64>,
}

/// Calibrates the threshold of each of `props` on its spec examples: each example's text is
/// scored as a step of its own (`context_of(text)` gives the context the question follows) and
/// [`calibrate_threshold`] chooses the threshold (from `default`).
///
/// Errors: as [`yes_probabilities`].
pub fn calibrate_propositions(
    model: &dyn ChatModel,
    props: &[PropositionDecl],
    context_of: &dyn Fn(&str) -> String,
    default: f64,
) -> Result<Vec<Calibration>, ScoringError> {
    let mut out = Vec::with_capacity(props.len());
    for p in props {
        let q = question(p);
        let mut scored = Vec::with_capacity(p.examples.len());
        for ex in &p.examples {
            let tag = format!("calibrating {} on an example", p.name);
            let ps =
                yes_probabilities(model, &context_of(&ex.text), std::slice::from_ref(&q), tag)?;
            scored.push((ps[0], ex.holds));
        }
        let threshold = calibrate_threshold(&scored, default);
        let right = scored
            .iter()
            .filter(|(x, h)| (*x > threshold) == *h)
            .count();
        out.push(Calibration {
            proposition: p.name.clone(),
            threshold,
            examples: scored.len(),
            accuracy: (!scored.is_empty()).then(|| right as f64 / scored.len() as f64),
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
            threshold: 0.5,
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

    #[test]
    fn thresholds_are_calibrated_on_examples() {
        let s = [(0.62, true), (0.66, true), (0.55, false), (0.58, false)];
        assert!((calibrate_threshold(&s, 0.5) - 0.60).abs() < 1e-12);
        // One class only: the default.
        assert_eq!(calibrate_threshold(&[(0.9, true)], 0.5), 0.5);
        assert_eq!(calibrate_threshold(&[], 0.5), 0.5);
        // 0.3 (no), 0.6 (yes), 0.65 (no), 0.7 (yes): 0.45, 0.5 and 0.675 each get three right;
        // 0.5, the default, is kept.
        let s = [(0.3, false), (0.6, true), (0.65, false), (0.7, true)];
        assert_eq!(calibrate_threshold(&s, 0.5), 0.5);
        // Bunched above 0.5: every example is "yes" at 0.5; 0.7 separates them.
        let s = [(0.66, false), (0.68, false), (0.72, true), (0.74, true)];
        assert!((calibrate_threshold(&s, 0.5) - 0.70).abs() < 1e-12);
    }
}
