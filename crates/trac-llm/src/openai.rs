//! A client for OpenAI-compatible `/v1/chat/completions` servers (OpenAI, vLLM, llama.cpp's
//! server, llama-cpp-python, Ollama, OpenRouter), on the blocking HTTP client `ureq`.
//!
//! - Timeouts: each HTTP call has a whole-call timeout ([`OpenAiConfig::timeout`], headers and
//!   body) and a connect timeout.
//! - Retries ([`RetryPolicy`]): connection errors, timeouts, HTTP 408, 429 (waiting the server's
//!   `Retry-After` when given) and 5xx but 501 and 505 ([`crate::retry::is_retryable_status`]), and a 2xx body that cannot be read or is not JSON (a
//!   truncated body), with exponential backoff and jitter, bounded in count and total time.
//! - At most [`OpenAiConfig::max_in_flight`] HTTP calls at once across threads (waits between
//!   retries hold no slot).
//! - `n > 1`: asked in one call; when the server rejects `n` (HTTP 400/422, as llama.cpp's
//!   server does) the model remembers it and draws each sample by its own call (seed + sample
//!   index); when it answers fewer choices (llama-cpp-python's server answers one), the missing
//!   ones are drawn the same way.
//! - The API key is read from an environment variable ([`ApiKey::from_env`]), sent as
//!   `Authorization: Bearer`, and never printed: [`ApiKey`]'s `Debug` shows `<redacted>`.

pub use crate::model::EndpointError;
use crate::model::{
    body_snippet, endpoint_hint, gather_choices, ChatModel, ChatRequest, ChatResponse, ConfigError,
    ModelError, Usage, UsageCounter,
};
use crate::retry::{is_retryable_status, parse_retry_after, RetryPolicy};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// An API key. Its `Debug` output is `ApiKey(<redacted>)`; it has no `Display`.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }

    /// The key in environment variable `var`; `None` when it is unset or empty (local servers
    /// need none).
    pub fn from_env(var: &str) -> Option<ApiKey> {
        std::env::var(var)
            .ok()
            .filter(|k| !k.trim().is_empty())
            .map(|k| ApiKey(k.trim().to_string()))
    }

    pub(crate) fn bearer(&self) -> String {
        format!("Bearer {}", self.0)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Settings of an [`OpenAiModel`].
#[derive(Clone, Debug)]
pub struct OpenAiConfig {
    /// The server's base URL: `http://127.0.0.1:8080/v1`, `https://api.openai.com/v1`. A URL
    /// without a path gets `/v1`; `/chat/completions` is appended unless already there.
    pub base_url: String,
    /// The model name sent in each request.
    pub model: String,
    /// The API key, if the server needs one.
    pub api_key: Option<ApiKey>,
    /// The environment variable the key was read from, named in the error of an HTTP 401/403.
    pub api_key_env: Option<String>,
    /// Whole-call timeout (connect, send, headers and body). Default 120 s.
    pub timeout: Duration,
    /// Connect timeout. Default 10 s.
    pub connect_timeout: Duration,
    /// HTTP calls in flight at most, over all threads. Default 4.
    pub max_in_flight: usize,
    /// Retries of transient failures.
    pub retry: RetryPolicy,
}

impl OpenAiConfig {
    /// Defaults for `model` at `base_url`, without a key.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> OpenAiConfig {
        OpenAiConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            api_key_env: None,
            timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            max_in_flight: 4,
            retry: RetryPolicy::default(),
        }
    }
}

/// The chat-completions endpoint for a base URL (see [`OpenAiConfig::base_url`]).
///
/// Errors: a URL that does not start with `http://` or `https://`, or has no host.
pub fn endpoint(base_url: &str) -> Result<String, EndpointError> {
    let base = base_url.trim().trim_end_matches('/');
    let rest = base
        .strip_prefix("http://")
        .or_else(|| base.strip_prefix("https://"))
        .ok_or_else(|| EndpointError::Scheme(base_url.to_string()))?;
    if rest.is_empty() {
        return Err(EndpointError::NoHost(base_url.to_string()));
    }
    if base.ends_with("/chat/completions") {
        Ok(base.to_string())
    } else if !rest.contains('/') {
        Ok(format!("{base}/v1/chat/completions"))
    } else {
        Ok(format!("{base}/chat/completions"))
    }
}

/// A counting semaphore bounding the calls in flight.
#[derive(Debug)]
pub(crate) struct Slots {
    free: Mutex<usize>,
    cv: Condvar,
}

impl Slots {
    pub(crate) fn new(n: usize) -> Slots {
        Slots {
            free: Mutex::new(n.max(1)),
            cv: Condvar::new(),
        }
    }

    pub(crate) fn acquire(&self) -> SlotGuard<'_> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        while *free == 0 {
            free = self.cv.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= 1;
        SlotGuard(self)
    }
}

pub(crate) struct SlotGuard<'a>(&'a Slots);

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        let mut free = self.0.free.lock().unwrap_or_else(|e| e.into_inner());
        *free += 1;
        self.0.cv.notify_one();
    }
}

/// A model behind an OpenAI-compatible chat-completions server.
pub struct OpenAiModel {
    config: OpenAiConfig,
    url: String,
    agent: ureq::Agent,
    slots: Slots,
    usage: UsageCounter,
    /// The server rejected `n > 1` once: draw samples one call each.
    single_choice: AtomicBool,
}

impl fmt::Debug for OpenAiModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiModel")
            .field("config", &self.config)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

/// One failed HTTP call, classified.
enum Failure {
    /// Worth retrying; `after`: the server's `Retry-After`.
    Transient {
        error: ModelError,
        after: Option<Duration>,
    },
    /// Final (client errors other than 408/429; bad configuration).
    Fatal(ModelError),
}

impl OpenAiModel {
    /// A client for `config`.
    ///
    /// Errors: a malformed base URL ([`ModelError::Config`]).
    pub fn new(config: OpenAiConfig) -> Result<OpenAiModel, ModelError> {
        let url = endpoint(&config.base_url).map_err(|e| ModelError::Config(e.into()))?;
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(config.timeout))
            .timeout_connect(Some(config.connect_timeout))
            .user_agent(concat!("trac/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Ok(OpenAiModel {
            slots: Slots::new(config.max_in_flight),
            url,
            agent,
            usage: UsageCounter::default(),
            single_choice: AtomicBool::new(false),
            config,
        })
    }

    /// The endpoint requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// One HTTP call, no retry.
    fn call_once(
        &self,
        req: &ChatRequest,
        n: usize,
        sample: usize,
    ) -> Result<ChatResponse, Failure> {
        let name = req.name();
        let body = req
            .to_openai_json(&self.config.model, n, sample)
            .to_string();
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
        let mut resp = match call.send(body) {
            Ok(r) => r,
            Err(e) => return Err(self.transport_failure(&name, e)),
        };
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let text = match resp.body_mut().read_to_string() {
            Ok(t) => t,
            Err(e) => {
                if (200..300).contains(&status) {
                    return Err(self.transport_failure(&name, e));
                }
                String::new()
            }
        };
        if !(200..300).contains(&status) {
            let mut body = body_snippet(&text);
            body.push_str(&endpoint_hint(status, &self.url));
            if status == 401 || status == 403 {
                body.push_str(&match (&self.config.api_key, &self.config.api_key_env) {
                    (None, Some(var)) => {
                        format!(" (no API key: environment variable {var} is unset)")
                    }
                    (Some(_), Some(var)) => format!(" (check the API key in {var})"),
                    _ => String::new(),
                });
            }
            let error = ModelError::Status {
                request: name,
                status,
                attempts: 1,
                body,
            };
            return Err(if is_retryable_status(status) {
                Failure::Transient {
                    error,
                    after: retry_after,
                }
            } else {
                Failure::Fatal(error)
            });
        }
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| Failure::Transient {
                error: ModelError::BadResponse {
                    request: name.clone(),
                    message: format!("the body is not JSON ({e}): {}", body_snippet(&text)),
                },
                after: None,
            })?;
        let r = ChatResponse::from_openai_json(&value).map_err(|m| {
            Failure::Fatal(ModelError::BadResponse {
                request: name.clone(),
                message: format!("{m}: {}", body_snippet(&text)),
            })
        })?;
        self.usage.add(Usage {
            prompt_tokens: r.usage.prompt_tokens,
            completion_tokens: r.usage.completion_tokens,
            ..Usage::default()
        });
        Ok(r)
    }

    fn transport_failure(&self, name: &str, e: ureq::Error) -> Failure {
        match e {
            ureq::Error::Timeout(_) => Failure::Transient {
                error: ModelError::Timeout {
                    request: name.to_string(),
                    attempts: 1,
                    timeout: self.config.timeout,
                },
                after: None,
            },
            ureq::Error::BadUri(m) => Failure::Fatal(ModelError::Config(ConfigError::BadUrl {
                url: self.url.clone(),
                message: m,
            })),
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                Failure::Transient {
                    error: ModelError::Timeout {
                        request: name.to_string(),
                        attempts: 1,
                        timeout: self.config.timeout,
                    },
                    after: None,
                }
            }
            other => Failure::Transient {
                error: ModelError::Connection {
                    request: name.to_string(),
                    attempts: 1,
                    message: other.to_string(),
                },
                after: None,
            },
        }
    }

    /// One logical call with retries.
    fn call(&self, req: &ChatRequest, n: usize, sample: usize) -> Result<ChatResponse, ModelError> {
        let policy = &self.config.retry;
        let start = Instant::now();
        let mut rng = fastrand::Rng::new();
        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            let (error, after) = match self.call_once(req, n, sample) {
                Ok(r) => return Ok(r),
                Err(Failure::Fatal(e)) => return Err(with_attempts(e, attempt)),
                Err(Failure::Transient { error, after }) => (error, after),
            };
            if attempt > policy.max_retries {
                return Err(with_attempts(error, attempt));
            }
            let wait = after.unwrap_or_else(|| policy.backoff(attempt - 1, &mut rng));
            if start.elapsed() + wait > policy.max_total {
                return Err(with_attempts(error, attempt));
            }
            self.usage.add(Usage {
                retries: 1,
                ..Usage::default()
            });
            std::thread::sleep(wait);
        }
    }
}

pub(crate) fn with_attempts(e: ModelError, n: u32) -> ModelError {
    match e {
        ModelError::Connection {
            request, message, ..
        } => ModelError::Connection {
            request,
            attempts: n,
            message,
        },
        ModelError::Timeout {
            request, timeout, ..
        } => ModelError::Timeout {
            request,
            attempts: n,
            timeout,
        },
        ModelError::Status {
            request,
            status,
            body,
            ..
        } => ModelError::Status {
            request,
            status,
            attempts: n,
            body,
        },
        other => other,
    }
}

impl ChatModel for OpenAiModel {
    fn name(&self) -> &str {
        &self.config.model
    }

    fn complete(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let batch = !self.single_choice.load(Ordering::Relaxed);
        let result = gather_choices(req, batch, |n, sample| self.call(req, n, sample));
        match result {
            Err(ModelError::Status { status, .. })
                if req.n > 1 && batch && (status == 400 || status == 422) =>
            {
                // The server rejects `n`: one call per sample from now on.
                self.single_choice.store(true, Ordering::Relaxed);
                gather_choices(req, false, |n, sample| self.call(req, n, sample))
            }
            other => other,
        }
    }

    fn usage(&self) -> Usage {
        self.usage.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        assert_eq!(
            endpoint("http://127.0.0.1:8080").unwrap(),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
        assert_eq!(
            endpoint("https://api.openai.com/v1/").unwrap(),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(
            endpoint("http://h/openai/v1/chat/completions").unwrap(),
            "http://h/openai/v1/chat/completions"
        );
        assert!(endpoint("127.0.0.1:8080").is_err());
        assert!(endpoint("http://").is_err());
    }

    #[test]
    fn api_key_is_redacted() {
        let k = ApiKey::new("sk-secret-123");
        assert_eq!(format!("{k:?}"), "ApiKey(<redacted>)");
        let mut c = OpenAiConfig::new("http://127.0.0.1:1", "m");
        c.api_key = Some(k);
        let m = OpenAiModel::new(c).unwrap();
        let shown = format!("{m:?}");
        assert!(!shown.contains("sk-secret"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }
}
