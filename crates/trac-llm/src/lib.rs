//! Models and LLM labeling for trac.
//!
//! All network and model I/O of trac lives in this crate; the monitor crates (`trac-spec`,
//! `trac-runtime`, `trac-compile`) never talk to a model.
//!
//! - [`model`]: the [`ChatModel`] trait (messages in, `n` completions out, with temperature,
//!   seed, token limit and log-probabilities; token usage counted) and its types.
//! - [`openai`]: a client for any OpenAI-compatible `/v1/chat/completions` server, with
//!   timeouts, retries (exponential backoff with jitter; `Retry-After`), bounded requests in
//!   flight, and `n > 1` by repeated calls where the server does not sample `n`.
//! - [`child`]: a child process spoken to in JSON lines, with a timeout per answer.
//! - [`command`]: a model served by a child process over JSON lines (`--model cmd:PROGRAM ARGS`).
//! - [`cache`]: an on-disk response cache keyed by (model, messages, parameters, sample index).
//! - [`labeler`]: the LLM labeling function (one request per step for all propositions, answers
//!   validated and retried) and the hybrid rule/LLM labeler.
//! - [`pipeline`]: steps labeled concurrently, delivered in trace order.
//! - [`scoring`]: labeling by comparing the probabilities of yes and no answers, for models that
//!   can score ([`ChatModel::score`], e.g. the in-process model of `trac-embed`); [`yes_no`]:
//!   its core, one yes/no question per proposition after the step's context; [`values`]: where
//!   parameter values come from (the step's own words, never an example's).
//! - [`embeddings`]: a client for OpenAI-compatible `/v1/embeddings` servers (same HTTP stack,
//!   retries and bounds as [`openai`]) and an on-disk cache of embeddings; [`embed_labeler`]:
//!   labeling by nearness of a step's embedding to the spec's examples (`--labeler embed`).
//! - [`metrics`]: per-proposition accuracy/precision/recall and the audit F1 of the paper's
//!   §5.1 (Table 1).
//!
//! [`open_model`] builds a model from the command line's `--model` / `--base-url` flags.

#![deny(missing_docs)]

pub mod cache;
pub mod child;
pub mod command;
pub mod embed_labeler;
pub mod embeddings;
pub mod labeler;
pub mod metrics;
pub mod model;
pub mod openai;
pub mod pipeline;
pub mod retry;
pub mod scoring;
#[cfg(feature = "test-server")]
pub mod testserver;
pub mod values;
pub mod yes_no;

pub use labeler::{
    HybridLabeler, LabelSource, LabelerMode, LlmLabeler, LlmLabelerConfig, StepLabels,
};
pub use model::{
    ChatModel, ChatRequest, ChatResponse, Choice, ConfigError, Message, ModelError, Role,
    ScoreRequest, ScoreResponse, Usage,
};

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How to reach a model (the `--model`, `--base-url`, `--api-key-env`, `--cache` flags).
#[derive(Clone, Debug)]
pub struct ModelOptions {
    /// `cmd:PROGRAM ARGS...` for a command model; else the model name sent to the server.
    pub model: String,
    /// The server's base URL (needed unless the model is a command).
    pub base_url: Option<String>,
    /// The environment variable holding the API key (default `OPENAI_API_KEY`).
    pub api_key_env: String,
    /// Cache completions in this directory.
    pub cache: Option<PathBuf>,
    /// Per-call timeout (HTTP call, or a command model's answer).
    pub timeout: Duration,
    /// HTTP calls in flight at most.
    pub max_in_flight: usize,
    /// Retries of transient failures.
    pub retry: retry::RetryPolicy,
    /// An embeddings model (`--labeler embed`): opened by [`open_embeddings`].
    pub embeddings: bool,
}

impl ModelOptions {
    /// Defaults for `model`: no base URL, key from `OPENAI_API_KEY`, no cache, 120 s timeout,
    /// 4 calls in flight, default retries.
    pub fn new(model: impl Into<String>) -> ModelOptions {
        ModelOptions {
            model: model.into(),
            base_url: None,
            api_key_env: "OPENAI_API_KEY".into(),
            cache: None,
            timeout: Duration::from_secs(120),
            max_in_flight: 4,
            retry: retry::RetryPolicy::default(),
            embeddings: false,
        }
    }
}

/// The model `opts` describe: a [`command::CommandModel`] for `cmd:...`, else an
/// [`openai::OpenAiModel`] at the base URL (the key read from the named environment variable),
/// wrapped in a [`cache::CachedModel`] when a cache directory is given; with
/// [`ModelOptions::embeddings`], what [`embeddings::open_embeddings`] opens.
///
/// Errors: no base URL for a server model, a malformed URL or command, a command that cannot
/// start, an unusable cache directory.
pub fn open_model(opts: &ModelOptions) -> Result<Arc<dyn ChatModel>, ModelError> {
    if opts.embeddings {
        return open_embeddings(opts);
    }
    let inner: Arc<dyn ChatModel> = if let Some(cmd) = opts.model.strip_prefix("cmd:") {
        Arc::new(command::CommandModel::spawn(cmd, opts.timeout)?)
    } else {
        let base = opts
            .base_url
            .clone()
            .ok_or_else(|| ModelError::Config(ConfigError::NoBaseUrl(opts.model.clone())))?;
        let mut c = openai::OpenAiConfig::new(base, opts.model.clone());
        c.api_key = openai::ApiKey::from_env(&opts.api_key_env);
        c.api_key_env = Some(opts.api_key_env.clone());
        c.timeout = opts.timeout;
        c.max_in_flight = opts.max_in_flight;
        c.retry = opts.retry.clone();
        Arc::new(openai::OpenAiModel::new(c)?)
    };
    Ok(match &opts.cache {
        Some(dir) => Arc::new(cache::CachedModel::new(inner, dir.clone())?),
        None => inner,
    })
}

/// The embeddings model `opts` describe: an [`embeddings::EmbeddingsModel`] at `opts.base_url`
/// (the key read from the named environment variable), in an [`embeddings::CachedEmbeddings`]
/// when a cache directory is given.
///
/// Errors: no base URL, a malformed URL, an unusable cache directory.
pub fn open_embeddings(opts: &ModelOptions) -> Result<Arc<dyn ChatModel>, ModelError> {
    let base = opts
        .base_url
        .clone()
        .ok_or_else(|| ModelError::Config(ConfigError::NoEmbeddingsUrl(opts.model.clone())))?;
    let mut c = embeddings::EmbeddingsConfig::new(base, opts.model.clone());
    c.api_key = openai::ApiKey::from_env(&opts.api_key_env);
    c.timeout = opts.timeout;
    c.max_in_flight = opts.max_in_flight;
    c.retry = opts.retry.clone();
    let inner = embeddings::EmbeddingsModel::new(c)?;
    Ok(match &opts.cache {
        Some(dir) => Arc::new(embeddings::CachedEmbeddings::new(inner, dir.clone())?),
        None => Arc::new(inner),
    })
}
