//! Labeling by scoring: each proposition is decided by comparing the probability of a yes and a
//! no answer, instead of parsing a generated JSON object.
//!
//! For a step, one prompt per proposition is built: the same context (the last
//! [`LlmLabelerConfig::window`](crate::labeler::LlmLabelerConfig::window) steps of the session and the step to label, as
//! [`LlmLabeler::messages`] renders them), then a question about that one proposition. The
//! prompts share everything up to the question, so a model that keeps its KV cache evaluates the
//! step's context once and only the question of each proposition after it
//! ([`ChatModel::score`]). The proposition holds when `P(yes) / (P(yes) + P(no))` exceeds
//! its threshold ([`ScoringConfig::threshold_of`]: 0.5, or calibrated on the spec's examples,
//! [`crate::yes_no::calibrate_threshold`]), where `P(yes)` sums the probabilities of the answers
//! `Yes`, `yes`, and `P(no)` those of `No`, `no`. The answer is therefore always valid, and comes
//! with a confidence (`max(p, 1 - p)`).
//!
//! A parametric proposition (`take(item)`) is first asked as "does it hold for some value"; when
//! it does, its value is chosen among the step's own words ([`crate::values::step_candidates`]:
//! spans of the step's text, its tool calls' arguments), each candidate scored by the same yes/no
//! question with the value filled in, one parameter at a time (`loads(pkg, area)`: the package,
//! then the area with the package filled in). Nothing is generated, so a value is never the
//! model's free text (`item is a knife`) nor an example's.
//!
//! This is the labeling function of the paper (§3) with a small model; the paper's §5.1 finds
//! small labeling models competitive with frontier LLM judges.

use crate::labeler::LlmLabeler;
use crate::model::ChatModel;
use crate::yes_no::score_propositions;
pub use crate::yes_no::{labels_of, p_yes, PropScore, ScoringConfig, NO, SYSTEM, YES};
use std::sync::Arc;
use trac_runtime::label::labeler::{LabelFailure, Labeler};
use trac_runtime::trace::Event;

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

/// Scores the propositions of `labeler` at `event` (see the [module docs](self)).
///
/// Errors: the model failed or cannot score; the failure names the step.
pub fn score_step(
    labeler: &LlmLabeler,
    config: &ScoringConfig,
    event: &Event,
    history: &[Event],
) -> Result<Vec<PropScore>, LabelFailure> {
    let props = labeler.propositions();
    if props.is_empty() {
        return Ok(Vec::new());
    }
    let context = labeler.scoring_context(event, history);
    score_propositions(
        labeler.model().as_ref(),
        props,
        labeler.case_sensitive(),
        &context,
        config,
        event,
    )
}
