//! `trac gateway`: the flags, the specs loaded as `trac audit` loads them, and the server of
//! crate `trac-gateway` run until the process is stopped.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use trac_gateway::options::{DEFAULT_LISTEN, DEFAULT_MAX_BODY};
use trac_gateway::{Gateway, GatewayOptions, Intervene, OnBlock, Predict, Server};

/// The flags of `trac gateway`.
#[derive(clap::Args)]
pub struct GatewayArgs {
    /// A spec file (RON) whose properties every conversation is monitored against. Repeatable.
    #[arg(long = "spec", value_name = "FILE", required = true)]
    specs: Vec<PathBuf>,
    /// The upstream OpenAI-compatible server's base URL (e.g. http://127.0.0.1:8080/v1; a URL
    /// without a path gets /v1), or Anthropic-compatible one (https://api.anthropic.com):
    /// `/v1/X` goes to `BASE/X`.
    #[arg(long, value_name = "URL")]
    upstream: String,
    /// The address to listen on (loopback unless told otherwise; port 0 picks a free one).
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_LISTEN)]
    listen: String,
    /// `none`: monitor only; `shield`: a response that would violate a property never reaches
    /// the agent; `resample`, `inject`, `switch`: a response whose predicted risk is above
    /// --threshold is replaced by another answer of the upstream (asked again up to --samples
    /// times, at least once), by its answer with the at-risk rules' residuals in English in the
    /// system message, or by the answer of --substitute-model.
    #[arg(long, value_name = "MODE", default_value = "none")]
    intervene: String,
    /// Prediction of resample, inject and switch: horizon k (model responses, the response
    /// itself first; k=1: whether the response itself violates, no sample) and n continuations
    /// sampled from the upstream after empty tool results when the exact look-ahead does not
    /// decide.
    #[arg(long, value_name = "k=K,n=N", default_value = "k=1,n=3")]
    predict: String,
    /// Risk threshold τ in [0, 1]: a property is at risk when its predicted risk exceeds it.
    #[arg(long, value_name = "TAU", default_value_t = 0.3)]
    threshold: f64,
    /// The model `switch` asks instead of the request's own (the request's `model` replaced).
    #[arg(long, value_name = "MODEL")]
    substitute_model: Option<String>,
    /// What replaces a blocked response: `refuse` (an assistant message stating the rule) or
    /// `error` (an OpenAI-style HTTP 400, type `trac_blocked`; Anthropic-style on
    /// `/v1/messages`).
    #[arg(long, value_name = "WHAT", default_value = "refuse")]
    on_block: String,
    /// Under `shield`, how many more times the upstream is asked (the same request, not
    /// streamed) for a blocked response: the first sample that violates nothing reaches the
    /// agent, else `--on-block` applies. 0: block at once. Under `resample`, how many times
    /// at most it is asked for an answer that is not at risk (0 counts as 1).
    #[arg(long, value_name = "N", default_value_t = 0)]
    samples: usize,
    /// JSON Lines log of every step (OpenAI messages with `session`) that `trac audit --spec
    /// SPEC FILE` re-audits; interventions go to FILE.interventions.jsonl. Created anew.
    #[arg(long, value_name = "FILE.jsonl")]
    log: Option<PathBuf>,
    /// The largest request body accepted, in bytes (larger: HTTP 413).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BODY)]
    max_body: usize,
    /// Whole-call timeout of an upstream request, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    timeout: u64,
}

/// The gateway's options from the flags.
///
/// # Errors
/// A usage error, in words.
fn options(a: &GatewayArgs) -> Result<GatewayOptions, String> {
    let mut o = GatewayOptions::new(&a.upstream);
    o.listen = a.listen.clone();
    o.intervene = a
        .intervene
        .parse::<Intervene>()
        .map_err(|e| format!("--intervene: {e}"))?;
    o.on_block = a.on_block.parse::<OnBlock>().map_err(|e| e.to_string())?;
    o.samples = a.samples;
    o.predict = a.predict.parse::<Predict>().map_err(|e| e.to_string())?;
    if !(a.threshold.is_finite() && (0.0..=1.0).contains(&a.threshold)) {
        return Err(format!(
            "--threshold {}: expected a number in [0, 1]",
            a.threshold
        ));
    }
    o.threshold = a.threshold;
    if a.substitute_model.is_some() && o.intervene != Intervene::Switch {
        return Err(format!(
            "--substitute-model is for --intervene switch (not {})",
            o.intervene.as_str()
        ));
    }
    o.substitute_model = a.substitute_model.clone();
    o.log = a.log.clone();
    o.max_body = a.max_body;
    if a.timeout == 0 {
        return Err("--timeout 0: expected a number of seconds above 0".into());
    }
    o.upstream_timeout = Duration::from_secs(a.timeout);
    Ok(o)
}

/// Runs `trac gateway` (until the process is stopped). Exit code 2: bad flags, an unreadable
/// spec, an upstream URL that is not http(s), a log that cannot be created, an address that
/// cannot be listened on.
pub fn run(a: &GatewayArgs) -> ExitCode {
    let opts = match options(a) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let specs = match crate::load_spec_list(&a.specs, &[]) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let summary = format!(
        "upstream {}, intervene {}{}, {} properties{}",
        opts.upstream,
        opts.intervene.as_str(),
        match opts.intervene {
            Intervene::Shield => format!(
                " (on block: {}, samples {})",
                opts.on_block.as_str(),
                opts.samples
            ),
            Intervene::None => String::new(),
            _ => format!(
                " (predict k={},n={}, threshold {})",
                opts.predict.k, opts.predict.n, opts.threshold
            ),
        },
        specs.iter().map(|s| s.properties.len()).sum::<usize>(),
        opts.log
            .as_ref()
            .map(|p| format!(", log {}", p.display()))
            .unwrap_or_default()
    );
    let server = match Gateway::new(&specs, opts).and_then(Server::bind) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    eprintln!(
        "trac gateway: listening on http://{}/v1 ({summary})",
        server.addr()
    );
    for f in server.gateway().fallbacks() {
        eprintln!("trac gateway: {}", crate::fallback_note(f));
    }
    if server.gateway().options().intervene.predictive() {
        eprintln!(
            "trac gateway: note: {} acts on /v1/chat/completions; /v1/messages (Anthropic) is monitored without intervening",
            server.gateway().options().intervene.as_str()
        );
    }
    server.run();
    ExitCode::SUCCESS
}
