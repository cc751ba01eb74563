//! An on-disk response cache in front of any [`ChatModel`].
//!
//! Each completion is stored on its own, keyed by (model name, messages, sampling parameters,
//! sample index): the file `DIR/ab/abcdef….json` is named by the SHA-256 of the key's canonical
//! JSON and holds `{"key": .., "choice": ..}`. A rerun of the same audit asks the model nothing;
//! an interrupted audit resumes where it stopped (every completion is written as soon as it is
//! received, by a write to a temporary file and a rename, so a file is whole or absent). A file
//! that cannot be read back or whose stored key differs is ignored and overwritten.

use crate::model::{ChatModel, ChatRequest, ChatResponse, Choice, ConfigError, ModelError, Usage};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// `dir`, created if missing, for a cache (of completions or embeddings).
///
/// # Errors
/// [`ConfigError::CacheDir`] when it cannot be created.
pub(crate) fn cache_dir(dir: PathBuf) -> Result<PathBuf, ModelError> {
    std::fs::create_dir_all(&dir).map_err(|e| {
        ModelError::Config(ConfigError::CacheDir {
            dir: dir.clone(),
            source: Arc::new(e),
        })
    })?;
    Ok(dir)
}

/// A [`ChatModel`] whose completions are cached in a directory.
#[derive(Debug)]
pub struct CachedModel<M> {
    inner: M,
    dir: PathBuf,
    hits: AtomicU64,
}

impl<M: ChatModel> CachedModel<M> {
    /// Caches `inner`'s completions under `dir` (created if missing).
    ///
    /// Errors: the directory cannot be created ([`ModelError::Config`]).
    pub fn new(inner: M, dir: impl Into<PathBuf>) -> Result<CachedModel<M>, ModelError> {
        let dir = cache_dir(dir.into())?;
        Ok(CachedModel {
            inner,
            dir,
            hits: AtomicU64::new(0),
        })
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The wrapped model.
    pub fn inner(&self) -> &M {
        &self.inner
    }

    /// The cache key of sample `sample` of `req` (canonical JSON: object keys sorted).
    pub fn key(&self, req: &ChatRequest, sample: usize) -> Value {
        json!({
            "model": self.inner.name(),
            "messages": req.messages,
            "temperature": req.temperature,
            "top_p": req.top_p,
            "seed": req.seed,
            "max_tokens": req.max_tokens,
            "logprobs": req.logprobs,
            "stop": req.stop,
            "response_format": req.response_format,
            "sample": sample,
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

    fn load(&self, key: &Value) -> Option<Choice> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        let v: Value = serde_json::from_str(&text).ok()?;
        if v.get("key")? != key {
            return None;
        }
        serde_json::from_value(v.get("choice")?.clone()).ok()
    }

    fn store(&self, key: &Value, choice: &Choice) -> Result<(), ModelError> {
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
        let doc = json!({"key": key, "choice": choice});
        std::fs::write(&tmp, doc.to_string()).map_err(err)?;
        std::fs::rename(&tmp, &path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            err(e)
        })
    }
}

impl<M: ChatModel> ChatModel for CachedModel<M> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// Cached samples come from disk; the samples from the first missing one to the last are
    /// asked of the inner model in one request (with `sample_offset` set) and stored.
    fn complete(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let n = req.n.max(1);
        let keys: Vec<Value> = (0..n)
            .map(|i| self.key(req, req.sample_offset + i))
            .collect();
        let mut choices: Vec<Option<Choice>> = keys.iter().map(|k| self.load(k)).collect();
        let first_missing = choices.iter().position(Option::is_none);
        // Samples from the first missing one on are asked again, cached or not.
        let hits = first_missing.unwrap_or(n) as u64;
        let mut usage = Usage::default();
        if let Some(first_missing) = first_missing {
            let mut sub = req.clone();
            sub.n = n - first_missing;
            sub.sample_offset = req.sample_offset + first_missing;
            let r = self.inner.complete(&sub)?;
            usage += r.usage;
            for (i, c) in r.choices.into_iter().enumerate() {
                let slot = first_missing + i;
                if slot >= n {
                    break;
                }
                self.store(&keys[slot], &c)?;
                choices[slot] = Some(c);
            }
        }
        self.hits.fetch_add(hits, Ordering::Relaxed);
        usage.cache_hits += hits;
        let choices: Option<Vec<Choice>> = choices.into_iter().collect();
        let choices = choices.ok_or_else(|| ModelError::BadResponse {
            request: req.name(),
            message: format!("the model returned fewer than {n} choices"),
        })?;
        Ok(ChatResponse { choices, usage })
    }

    fn usage(&self) -> Usage {
        let mut u = self.inner.usage();
        u.cache_hits += self.hits.load(Ordering::Relaxed);
        u
    }

    /// Scores are not cached (a scoring model runs in process): forwarded to the inner model.
    fn can_score(&self) -> bool {
        self.inner.can_score()
    }

    fn score(
        &self,
        req: &crate::model::ScoreRequest,
    ) -> Result<crate::model::ScoreResponse, ModelError> {
        self.inner.score(req)
    }
}
