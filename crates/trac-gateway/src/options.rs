//! What a gateway is told ([`GatewayOptions`], [`Intervene`], [`OnBlock`]) and why one cannot
//! start ([`GatewayError`]).

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// The default address: loopback only (`--listen` to choose another).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8090";

/// The default limit on a request body (8 MiB): a larger one gets HTTP 413.
pub const DEFAULT_MAX_BODY: usize = 8 << 20;

/// What the gateway does with a response that would violate a property.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intervene {
    /// Monitor only: every response reaches the agent; verdicts are logged and shown.
    None,
    /// A response whose step would lead a property to ⊥ never reaches the agent (see
    /// [`OnBlock`]).
    Shield,
    /// A response whose predicted risk is above the threshold is replaced by the first of up
    /// to `--samples N` (at least 1) more answers of the upstream whose risk is not (else by
    /// the least risky of them all).
    Resample,
    /// A response whose predicted risk is above the threshold is replaced by the upstream's
    /// answer to the same request with the at-risk properties' residuals in English appended
    /// to its system message.
    Inject,
    /// A response whose predicted risk is above the threshold is replaced by the answer of the
    /// substitute model (`--substitute-model`) to the same request.
    Switch,
}

impl Intervene {
    /// Its name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Intervene::None => "none",
            Intervene::Shield => "shield",
            Intervene::Resample => "resample",
            Intervene::Inject => "inject",
            Intervene::Switch => "switch",
        }
    }

    /// Whether it acts on predicted risk (resample, inject, switch).
    pub fn predictive(self) -> bool {
        matches!(
            self,
            Intervene::Resample | Intervene::Inject | Intervene::Switch
        )
    }
}

/// An intervention this gateway does not know (or does not do yet).
#[derive(Debug, thiserror::Error)]
#[error("unknown intervention `{0}`: expected none, shield, resample, inject or switch")]
pub struct UnknownIntervention(pub String);

impl FromStr for Intervene {
    type Err = UnknownIntervention;

    fn from_str(s: &str) -> Result<Intervene, UnknownIntervention> {
        match s {
            "none" => Ok(Intervene::None),
            "shield" => Ok(Intervene::Shield),
            "resample" => Ok(Intervene::Resample),
            "inject" => Ok(Intervene::Inject),
            "switch" => Ok(Intervene::Switch),
            other => Err(UnknownIntervention(other.to_string())),
        }
    }
}

/// What replaces a blocked response (under [`Intervene::Shield`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnBlock {
    /// An assistant message without tool calls stating the rule it would break (the agent's
    /// loop goes on, or ends, as after any answer).
    Refuse,
    /// An OpenAI-style error response: HTTP 400, `"type": "trac_blocked"`.
    Error,
}

impl OnBlock {
    /// Its name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            OnBlock::Refuse => "refuse",
            OnBlock::Error => "error",
        }
    }
}

/// An `--on-block` value this gateway does not know.
#[derive(Debug, thiserror::Error)]
#[error("unknown --on-block `{0}`: expected refuse or error")]
pub struct UnknownOnBlock(pub String);

impl FromStr for OnBlock {
    type Err = UnknownOnBlock;

    fn from_str(s: &str) -> Result<OnBlock, UnknownOnBlock> {
        match s {
            "refuse" => Ok(OnBlock::Refuse),
            "error" => Ok(OnBlock::Error),
            other => Err(UnknownOnBlock(other.to_string())),
        }
    }
}

/// The sampling predictor's parameters (`--predict k=K,n=N`), for resample, inject and switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Predict {
    /// Horizon: model responses per continuation, the response itself first (≥ 1). With
    /// `k = 1` the continuation is the response itself: its risk is exact (0 or 1), no sample
    /// is drawn.
    pub k: u32,
    /// Continuations drawn when the exact look-ahead does not decide (≥ 1).
    pub n: usize,
}

impl Default for Predict {
    fn default() -> Self {
        Predict { k: 1, n: 3 }
    }
}

/// A `--predict` value that is not `k=K,n=N` with integers K, N ≥ 1.
#[derive(Debug, thiserror::Error)]
#[error("--predict `{given}`: {why}")]
pub struct BadPredict {
    /// The value given.
    pub given: String,
    /// What is wrong with it.
    pub why: String,
}

impl FromStr for Predict {
    type Err = BadPredict;

    /// `k=K,n=N` (either may be left out: its default stays).
    fn from_str(s: &str) -> Result<Predict, BadPredict> {
        let bad = |why: String| BadPredict {
            given: s.to_string(),
            why,
        };
        let mut p = Predict::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| bad(format!("`{part}` is not KEY=VALUE (expected k=K,n=N)")))?;
            let number = value
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|v| *v >= 1)
                .ok_or_else(|| bad(format!("{} must be an integer ≥ 1", key.trim())))?;
            match key.trim() {
                "k" => p.k = number,
                "n" => p.n = number as usize,
                other => return Err(bad(format!("unknown key `{other}` (expected k and n)"))),
            }
        }
        Ok(p)
    }
}

/// The settings of a gateway.
#[derive(Clone, Debug)]
pub struct GatewayOptions {
    /// The address to listen on (default [`DEFAULT_LISTEN`]; port 0 picks a free one).
    pub listen: String,
    /// The upstream server's base URL (`http://127.0.0.1:8080/v1`; a URL without a path gets
    /// `/v1`): a request for `/v1/X` goes to `BASE/X`.
    pub upstream: String,
    /// What to do with a response that would violate a property.
    pub intervene: Intervene,
    /// What replaces a blocked response.
    pub on_block: OnBlock,
    /// Under `shield`, how many more times the upstream is asked (the same request, not
    /// streamed) for a response that would not violate before `on_block` applies: the first
    /// compliant sample reaches the agent. Default 0: blocked at once. Under `resample`: how
    /// many times at most the upstream is asked for an answer with no property at risk (0
    /// counts as 1).
    pub samples: usize,
    /// The sampling predictor of resample, inject and switch.
    pub predict: Predict,
    /// Risk threshold τ: a property is at risk when its predicted risk exceeds it (as in
    /// `trac run`).
    pub threshold: f64,
    /// The model `switch` asks instead (the request's `model` replaced); `None`: the request's
    /// own model.
    pub substitute_model: Option<String>,
    /// The JSON Lines log of every step (see [`crate::log`]); interventions go to
    /// `FILE.interventions.jsonl` beside it.
    pub log: Option<PathBuf>,
    /// The largest request body accepted, in bytes (default [`DEFAULT_MAX_BODY`]).
    pub max_body: usize,
    /// The whole-call timeout of an upstream request (default 600 s: long generations).
    pub upstream_timeout: Duration,
    /// The connect timeout of an upstream request (default 10 s).
    pub connect_timeout: Duration,
    /// Monitor threads (default: the machine's parallelism, at most 8; see
    /// [`crate::monitors`]).
    pub monitor_threads: usize,
}

impl GatewayOptions {
    /// Options for `upstream` with every default: listen on [`DEFAULT_LISTEN`], monitor only, no
    /// log.
    pub fn new(upstream: &str) -> GatewayOptions {
        GatewayOptions {
            listen: DEFAULT_LISTEN.to_string(),
            upstream: upstream.to_string(),
            intervene: Intervene::None,
            on_block: OnBlock::Refuse,
            samples: 0,
            predict: Predict::default(),
            threshold: 0.3,
            substitute_model: None,
            log: None,
            max_body: DEFAULT_MAX_BODY,
            upstream_timeout: Duration::from_secs(600),
            connect_timeout: Duration::from_secs(10),
            monitor_threads: std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(8),
        }
    }
}

/// Why a gateway cannot start.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The specs cannot be monitored.
    #[error(transparent)]
    Supervisor(#[from] trac_agent::supervisor::SupervisorError),
    /// The upstream URL is not an `http://` or `https://` URL.
    #[error("--upstream {url}: expected an http:// or https:// URL")]
    BadUpstream {
        /// The URL given.
        url: String,
    },
    /// The log (or its interventions file) cannot be opened for appending.
    #[error("{}: cannot open the log: {source}", path.display())]
    Log {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The monitor threads could not start.
    #[error("{0}")]
    Monitors(String),
    /// The address cannot be listened on.
    #[error("--listen {addr}: cannot listen: {message}")]
    Listen {
        /// The address given.
        addr: String,
        /// The server's error, in words.
        message: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predict_reads_k_and_n_and_says_what_is_wrong() {
        let p = |s: &str| s.parse::<Predict>().map_err(|e| e.to_string());
        assert_eq!(p("k=2,n=5"), Ok(Predict { k: 2, n: 5 }));
        assert_eq!(p(" n=4 "), Ok(Predict { k: 1, n: 4 }));
        assert_eq!(p("k=3,"), Ok(Predict { k: 3, n: 3 }));
        assert_eq!(
            p("k=0"),
            Err("--predict `k=0`: k must be an integer ≥ 1".into())
        );
        assert_eq!(
            p("n=x"),
            Err("--predict `n=x`: n must be an integer ≥ 1".into())
        );
        assert_eq!(
            p("k"),
            Err("--predict `k`: `k` is not KEY=VALUE (expected k=K,n=N)".into())
        );
        assert_eq!(
            p("m=2"),
            Err("--predict `m=2`: unknown key `m` (expected k and n)".into())
        );
    }

    #[test]
    fn the_interventions_read_back_their_names() {
        for i in [
            Intervene::None,
            Intervene::Shield,
            Intervene::Resample,
            Intervene::Inject,
            Intervene::Switch,
        ] {
            assert_eq!(i.as_str().parse::<Intervene>().unwrap(), i);
            assert_eq!(
                i.predictive(),
                !matches!(i, Intervene::None | Intervene::Shield)
            );
        }
        assert!("Shield".parse::<Intervene>().is_err());
    }
}
