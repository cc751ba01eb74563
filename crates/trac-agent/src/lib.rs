//! TRAC_P+I: monitor a running agent, predict violations, and intervene (Alamdari, Klassen &
//! McIlraith, arXiv 2605.16198, §4.2, §4.3, §5.3 and appendix C).
//!
//! A monitor sits between an agent (a black-box chat model) and its environment. At each step
//! it labels the step, progresses the monitors, predicts the probability of a violation within
//! `k` steps, and when that risk passes a threshold τ intervenes before the action reaches the
//! environment.
//!
//! - [`supervisor`]: the [`Supervisor`] (the spec's compiled monitors; check a candidate action
//!   without committing it, commit a step, simulate a continuation), usable as a library.
//! - [`lookahead`]: exact look-ahead on a compiled monitor automaton: least number of steps to
//!   ⊥, the next-step valuations that lead to ⊥ at once, risk exactly 0 or 1.
//! - [`predict`]: the sampling predictor (paper §4.2) behind the exact look-ahead, and the
//!   direct predictor.
//! - [`run`]: the run loop with the interventions (none, resample, inject, switch, shield),
//!   step and intervention records, summaries over runs.
//! - [`env`](mod@env): the [`env::Environment`] trait and JSON-lines child-process environments;
//!   [`trucks`]: the paper's IPC-Trucks environment with 5 packages.
//! - [`agent`]: the agent's prompts and action parsing; [`scripted`]: a scripted Trucks agent
//!   with a known violation probability (tests, demos).
//! - [`stats`]: Wilson and Student-t intervals.
#![deny(missing_docs)]

pub mod agent;
pub mod env;
pub mod lookahead;
pub mod predict;
pub mod run;
pub mod scripted;
pub mod stats;
pub mod supervisor;
pub mod trucks;

pub use env::{EnvError, Environment, Outcome};
pub use supervisor::{Supervisor, SupervisorError, SupervisorOptions};

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// A model call failed (after its retries).
    #[error("model: {0}")]
    Model(#[from] trac_llm::ModelError),
    /// The environment failed.
    #[error("{0}")]
    Env(#[from] EnvError),
    /// The spec cannot be monitored.
    #[error("spec: {0}")]
    Spec(#[from] SupervisorError),
    /// A predictor's answer was unusable.
    #[error("{0}")]
    Prediction(#[from] PredictionError),
}

/// Why the direct predictor's answer is unusable.
#[derive(Debug, thiserror::Error)]
pub enum PredictionError {
    /// No `{ ... }` in the answer (the answer).
    #[error("direct prediction: no JSON object in the answer `{0}`")]
    NoObject(String),
    /// The answer's `{ ... }` is not JSON.
    #[error("direct prediction: {source} in `{json}`")]
    Json {
        /// The answer's `{ ... }`.
        json: String,
        /// Why it is not JSON.
        #[source]
        source: serde_json::Error,
    },
    /// A property without a probability in `[0, 1]`.
    #[error("direct prediction: no probability in [0, 1] for `{property}` in `{json}`")]
    NoProbability {
        /// The property's id.
        property: String,
        /// The answer's `{ ... }`.
        json: String,
    },
}
