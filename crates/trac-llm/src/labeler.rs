//! LLM labeling: a labeling function that asks a chat model which atomic propositions hold at a
//! step (the paper's labeling function, §3 and §5.1), and a hybrid labeler that decides each
//! proposition by its rule, the LLM, or both.
//!
//! # The request
//! One request per step labels all of the LLM-labeled propositions. The system message states the
//! task; the user message lists each proposition with its description (and the spec's examples),
//! the last [`LlmLabelerConfig::window`] steps of the same session as context (oldest first), and
//! the step to label, under the line `Step to label (step N):`. The answer must be one JSON object
//! with one key per proposition: `true`/`false` for a plain proposition, the list of values for a
//! parametric one (`"take": ["knife"]`, `[]` when it holds for none).
//!
//! # Validation
//! The answer's JSON object is taken from the first `{` to the last `}` (so a markdown fence or a
//! sentence around it is tolerated). Every proposition must be present; a key that names no
//! proposition, a missing key, or a value of the wrong type makes the answer malformed. Lenient
//! readings: `"true"`/`"yes"` and `"false"`/`"no"` for booleans; `false`, `null` or a single string
//! for a parametric proposition. Values are normalized as the rule labeler's (whitespace runs to
//! one space, lowercased unless the spec is `case_sensitive`; parentheses, which label names
//! cannot hold, become spaces). A malformed answer is sent back to the model with the reason and
//! the question asked again ([`LlmLabelerConfig::answer_retries`] times); then the step fails
//! with a [`LabelFailure`] naming it. A malformed answer never becomes "false".

use crate::model::{excerpt, ChatModel, ChatRequest, Message, ResponseFormat};
use crate::values::{leaked_from_examples, param_names};
use crate::yes_no::{
    calibrate_propositions, labels_of, score_propositions, Calibration, PropScore, ScoringConfig,
    ScoringError,
};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use trac_ltl::formula::split_atom_name;
use trac_runtime::label::labeler::{label_value, LabelFailure, Labeler, LabelerError, RuleLabeler};
use trac_runtime::trace::Event;
use trac_spec::spec::{LabelerChoice, PropositionDecl, Spec};

/// Why a labeling answer is malformed ([`LlmLabeler::parse_answer`]); the message is what the
/// model is told when asked again.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// No `{ ... }` in the answer.
    #[error("the answer holds no JSON object")]
    NoObject,
    /// The answer's `{ ... }` is JSON, but not an object.
    #[error("the answer is not a JSON object")]
    NotAnObject,
    /// The answer's `{ ... }` is not JSON.
    #[error("the answer is not valid JSON ({0})")]
    Json(#[source] serde_json::Error),
    /// A key names no proposition.
    #[error("unknown proposition `{name}` (the propositions are {})", known.join(", "))]
    UnknownProposition {
        /// The key.
        name: String,
        /// The propositions asked for.
        known: Vec<String>,
    },
    /// A proposition has no key.
    #[error("no value for proposition `{0}`")]
    Missing(String),
    /// A plain proposition's value is not a boolean.
    #[error("`{proposition}`: expected true or false, got {got}")]
    NotBool {
        /// The proposition.
        proposition: String,
        /// The value given (its start).
        got: String,
    },
    /// A proposition of several parameters got a flat list of values instead of a list of
    /// tuples (`["package3", "a1"]` for `[["package3", "a1"]]`), or a tuple of the wrong length.
    #[error("`{proposition}`: expected a list of [{params}] tuples, one per instance (e.g. [[\"{}\"]]), got {got}", params.split(',').map(str::trim).collect::<Vec<_>>().join("\", \""))]
    NotTuples {
        /// The proposition.
        proposition: String,
        /// Its parameters (`pkg, area`).
        params: String,
        /// The value given (its start).
        got: String,
    },
    /// A parametric proposition's value is not a list of values.
    #[error("`{proposition}`: expected a list of values of {param}, got {got}")]
    NotValues {
        /// The proposition.
        proposition: String,
        /// Its parameter.
        param: String,
        /// The value given (its start).
        got: String,
    },
}

/// Why a [`HybridLabeler`] cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum HybridError {
    /// A labeling rule is unusable.
    #[error("{0}")]
    Rules(#[from] LabelerError),
    /// Propositions are labeled by an LLM and no model is given.
    #[error("spec `{spec}`: proposition(s) {} are labeled by an LLM: give a model (--model)", propositions.join(", "))]
    NoModel {
        /// The spec's name.
        spec: String,
        /// The propositions an LLM labels.
        propositions: Vec<String>,
    },
}

/// Settings of an [`LlmLabeler`].
#[derive(Clone, Debug, PartialEq)]
pub struct LlmLabelerConfig {
    /// Earlier steps of the same session shown as context. Default 4.
    pub window: usize,
    /// Sampling temperature of the first request of a step. Default 0 (greedy).
    pub temperature: f32,
    /// Temperature of the requests after a malformed answer (a greedy model would repeat it).
    /// Default 0.7.
    pub retry_temperature: f32,
    /// Seed sent with each request (reproducible sampling, where the server takes one). Default 0.
    pub seed: Option<u64>,
    /// Completion token limit. Default 512.
    pub max_tokens: u32,
    /// How many times a malformed answer is asked again. Default 2.
    pub answer_retries: u32,
    /// How the answer's format is constrained (`response_format`). Default
    /// [`AnswerFormat::JsonObject`].
    pub answer_format: AnswerFormat,
    /// Characters of each step's text shown (longer texts are cut). Default 2000.
    pub max_step_chars: usize,
    /// Labeling by scoring: calibrate each proposition's threshold on `P(yes)` on its spec
    /// examples ([`LlmLabeler::calibrate`]) instead of 0.5. Default true.
    pub calibrate: bool,
}

impl Default for LlmLabelerConfig {
    fn default() -> Self {
        LlmLabelerConfig {
            window: 4,
            temperature: 0.0,
            retry_temperature: 0.7,
            seed: Some(0),
            max_tokens: 512,
            answer_retries: 2,
            answer_format: AnswerFormat::JsonObject,
            max_step_chars: 2000,
            calibrate: true,
        }
    }
}

/// How an [`LlmLabeler`] constrains the model's answer (the request's `response_format`; see
/// [`ResponseFormat`] for which servers take which).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AnswerFormat {
    /// No constraint.
    Text,
    /// Any JSON object (the default: the widest supported).
    #[default]
    JsonObject,
    /// The answer's JSON schema, OpenAI style (OpenAI, vLLM, llama.cpp's server).
    JsonSchema,
    /// The answer's JSON schema, llama-cpp-python style: a small model then cannot answer
    /// anything but well-formed labels.
    JsonObjectSchema,
}

/// The line that introduces the step to label in the prompt (followed by the step number and `):`).
pub const STEP_MARKER: &str = "Step to label (step ";

/// The line that follows the step to label in the prompt.
pub const ANSWER_MARKER: &str = "Answer with one JSON object";

/// A labeling function backed by a chat model: one request per step for all its propositions.
///
/// [`LlmLabeler::label_step`] takes `&self` and may be called from several threads at once.
pub struct LlmLabeler {
    model: Arc<dyn ChatModel>,
    props: Vec<PropositionDecl>,
    case_sensitive: bool,
    config: LlmLabelerConfig,
    system: String,
    catalogue: String,
    template: String,
    /// The JSON schema of a well-formed answer.
    schema: Value,
    /// Failures of [`Labeler::label`] calls (which cannot return them).
    failures: Vec<LabelFailure>,
    /// The thresholds calibrated on the examples, once computed.
    calibration: Mutex<Option<Vec<Calibration>>>,
}

impl std::fmt::Debug for LlmLabeler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmLabeler")
            .field("model", &self.model.name())
            .field(
                "propositions",
                &self.props.iter().map(|p| &p.name).collect::<Vec<_>>(),
            )
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl LlmLabeler {
    /// A labeler of `props` (a spec's propositions, or some of them) asking `model`.
    /// `case_sensitive`: the spec's setting, for normalizing values.
    pub fn new(
        model: Arc<dyn ChatModel>,
        props: Vec<PropositionDecl>,
        case_sensitive: bool,
        config: LlmLabelerConfig,
    ) -> LlmLabeler {
        let system = "You label one step of an AI agent's trace with atomic propositions. For \
each proposition, decide whether it holds at the step to label: judge only that step; earlier \
steps are context. Answer with one JSON object and nothing else."
            .to_string();
        let mut catalogue = String::from("Propositions:\n");
        let mut template = Vec::new();
        let mut schema_props = Map::new();
        for p in &props {
            schema_props.insert(p.name.clone(), value_schema(p));
            let desc = if p.description.trim().is_empty() {
                p.name.clone()
            } else {
                p.description.clone()
            };
            match &p.param {
                None => {
                    let _ = writeln!(catalogue, "- \"{}\": {desc}. Answer true or false.", p.name);
                    template.push(format!("\"{}\": true or false", p.name));
                }
                Some(param) if param_names(param).len() > 1 => {
                    let names = param_names(param);
                    let _ = writeln!(
                        catalogue,
                        "- \"{}\": {desc}. Answer the list of the [{}] tuples for which it holds, one list of {} values each ([] if none).",
                        p.name,
                        names.join(", "),
                        names.len()
                    );
                    template.push(format!("\"{}\": [[{}], ...]", p.name, names.join(", ")));
                }
                Some(param) => {
                    let _ = writeln!(
                        catalogue,
                        "- \"{}\": {desc}. Answer the list of the values of {{{param}}} for which it holds (a short name each, [] if none).",
                        p.name
                    );
                    template.push(format!("\"{}\": [values of {param}]", p.name));
                }
            }
            if !p.examples.is_empty() {
                let shown: Vec<String> = p
                    .examples
                    .iter()
                    .map(|ex| {
                        let answer = match &p.param {
                            None => ex.holds.to_string(),
                            Some(param) if ex.holds && param_names(param).len() > 1 => {
                                let tuples: Vec<Vec<&str>> = ex
                                    .values
                                    .iter()
                                    .map(|v| v.split(',').map(str::trim).collect())
                                    .collect();
                                serde_json::to_string(&tuples).expect("strings serialize")
                            }
                            Some(_) if ex.holds => {
                                serde_json::to_string(&ex.values).expect("strings serialize")
                            }
                            Some(_) => "[]".to_string(),
                        };
                        format!(
                            "{} -> {answer}",
                            serde_json::to_string(&ex.text).expect("a string serializes")
                        )
                    })
                    .collect();
                let _ = writeln!(catalogue, "  Examples: {}", shown.join("; "));
            }
        }
        let required: Vec<String> = props.iter().map(|p| p.name.clone()).collect();
        LlmLabeler {
            model,
            props,
            case_sensitive,
            config,
            system,
            catalogue,
            template: format!("{{{}}}", template.join(", ")),
            schema: serde_json::json!({
                "type": "object",
                "properties": schema_props,
                "required": required,
                "additionalProperties": false,
            }),
            failures: Vec::new(),
            calibration: Mutex::new(None),
        }
    }

    /// The propositions this labeler decides.
    pub fn propositions(&self) -> &[PropositionDecl] {
        &self.props
    }

    /// The model asked.
    pub fn model(&self) -> &Arc<dyn ChatModel> {
        &self.model
    }

    /// The configuration.
    pub fn config(&self) -> &LlmLabelerConfig {
        &self.config
    }

    /// The JSON schema of a well-formed answer: an object with one required key per
    /// proposition, a boolean or an array of strings, and no other key.
    pub fn answer_schema(&self) -> &Value {
        &self.schema
    }

    /// Whether values are compared case-sensitively (the spec's setting).
    pub fn case_sensitive(&self) -> bool {
        self.case_sensitive
    }

    /// The context part of the labeling prompt for `event` (`history`: earlier steps of its
    /// session): the earlier steps and the step to label, without the proposition catalogue and
    /// the JSON answer instructions. Labeling by scoring asks its questions after it.
    pub fn scoring_context(&self, event: &Event, history: &[Event]) -> String {
        let msgs = self.messages(event, history);
        let user = msgs
            .iter()
            .rev()
            .find(|m| m.role == crate::model::Role::User)
            .map(|m| m.content.as_str())
            .unwrap_or("");
        let start = user
            .find("Earlier steps")
            .or_else(|| user.find(STEP_MARKER))
            .unwrap_or(0);
        let end = user
            .rfind(&format!("\n\n{ANSWER_MARKER}"))
            .unwrap_or(user.len());
        user[start..end.max(start)].trim_end().to_string()
    }

    fn render_event(&self, e: &Event) -> String {
        let text = match (&e.input, &e.output) {
            (Some(i), Some(o)) if !i.trim().is_empty() => {
                format!("Input: {}\nOutput: {}", i.trim(), o.trim())
            }
            _ => e.text().trim().to_string(),
        };
        let text = if text.is_empty() {
            "(no text)".to_string()
        } else {
            text
        };
        excerpt(&text, self.config.max_step_chars)
    }

    /// The messages asking for the labels of `event` (`history`: earlier steps of its session,
    /// oldest first; the last [`LlmLabelerConfig::window`] are shown).
    pub fn messages(&self, event: &Event, history: &[Event]) -> Vec<Message> {
        let mut user = self.catalogue.clone();
        user.push('\n');
        let from = history.len().saturating_sub(self.config.window);
        if self.config.window > 0 {
            if history[from..].is_empty() {
                user.push_str("Earlier steps: none.\n\n");
            } else {
                user.push_str("Earlier steps (oldest first, for context only):\n");
                for h in &history[from..] {
                    let t = self.render_event(h).replace('\n', " / ");
                    let _ = writeln!(user, "step {}: {t}", h.step);
                }
                user.push('\n');
            }
        }
        let _ = writeln!(user, "{STEP_MARKER}{}):", event.step);
        user.push_str(&self.render_event(event));
        let _ = write!(
            user,
            "\n\n{ANSWER_MARKER} with exactly these keys: {}",
            self.template
        );
        vec![Message::system(self.system.clone()), Message::user(user)]
    }

    /// Reads an answer (see the [module docs](self)): the labels it gives, in proposition order.
    ///
    /// Errors: why the answer is malformed (no JSON object, an unknown or missing proposition, a
    /// value of the wrong type).
    pub fn parse_answer(&self, content: &str) -> Result<Vec<String>, AnswerError> {
        let obj = extract_object(content)?;
        let mut by_key: HashMap<&str, &Value> = HashMap::new();
        for (k, v) in &obj {
            let name = k.trim();
            let p = self
                .props
                .iter()
                .find(|p| {
                    p.name == name
                        || split_atom_name(name)
                            .is_some_and(|(b, a)| b == p.name && Some(a) == p.param.as_deref())
                })
                .ok_or_else(|| AnswerError::UnknownProposition {
                    name: name.to_string(),
                    known: self.props.iter().map(|p| p.name.clone()).collect(),
                })?;
            by_key.insert(p.name.as_str(), v);
        }
        let mut labels = Vec::new();
        for p in &self.props {
            let v = by_key
                .get(p.name.as_str())
                .ok_or_else(|| AnswerError::Missing(p.name.clone()))?;
            match &p.param {
                None => {
                    if read_bool(v).ok_or_else(|| AnswerError::NotBool {
                        proposition: p.name.clone(),
                        got: excerpt(&v.to_string(), 60),
                    })? {
                        labels.push(p.name.clone());
                    }
                }
                Some(param) => {
                    let arity = param_names(param).len().max(1);
                    let values = if arity > 1 {
                        read_tuples(v, arity).ok_or_else(|| AnswerError::NotTuples {
                            proposition: p.name.clone(),
                            params: param.clone(),
                            got: excerpt(&v.to_string(), 60),
                        })?
                    } else {
                        read_values(v).ok_or_else(|| AnswerError::NotValues {
                            proposition: p.name.clone(),
                            param: param.clone(),
                            got: excerpt(&v.to_string(), 60),
                        })?
                    };
                    let mut seen: Vec<String> = Vec::new();
                    for raw in values {
                        // A leading article is dropped, as a rule's capture skips it; an
                        // answer with the wrong number of values gives no label.
                        let Some(v) = label_value(&raw, arity, self.case_sensitive, true) else {
                            continue;
                        };
                        if !seen.contains(&v) {
                            seen.push(v);
                        }
                    }
                    labels.extend(seen.into_iter().map(|v| format!("{}({v})", p.name)));
                }
            }
        }
        Ok(labels)
    }

    /// The labels of `event` given its session's earlier steps (`history`, oldest first).
    ///
    /// Errors: the model failed (after its own retries), or every answer was malformed; the
    /// failure names the step.
    pub fn label_step(
        &self,
        event: &Event,
        history: &[Event],
    ) -> Result<Vec<String>, LabelFailure> {
        self.label_step_scored(event, history).map(|(l, _)| l)
    }

    /// [`LlmLabeler::label_step`], with the scores of a model that labels by scoring
    /// ([`ChatModel::can_score`]; see [`crate::scoring`]): one [`PropScore`] per proposition, in
    /// order; `None` for a model that answers in JSON (no confidence comes with its labels).
    ///
    /// Errors: as [`LlmLabeler::label_step`].
    pub fn label_step_scored(
        &self,
        event: &Event,
        history: &[Event],
    ) -> Result<(Vec<String>, Option<Vec<PropScore>>), LabelFailure> {
        let fail = |message: String| LabelFailure {
            step: event.step,
            line: event.line,
            message,
        };
        if self.props.is_empty() {
            return Ok((Vec::new(), None));
        }
        if self.model.can_score() {
            // A model with access to its logits labels by scoring yes/no answers.
            let config = self.scoring_config().map_err(|e| fail(e.to_string()))?;
            let context = self.scoring_context(event, history);
            let model = self.model.as_ref();
            let case = self.case_sensitive;
            return score_propositions(model, &self.props, case, &context, &config, event)
                .map(|s| (labels_of(&s), Some(s)));
        }
        let mut messages = self.messages(event, history);
        let mut last_error = String::new();
        for attempt in 0..=self.config.answer_retries {
            let req = ChatRequest {
                messages: messages.clone(),
                temperature: if attempt == 0 {
                    self.config.temperature
                } else {
                    self.config.temperature.max(self.config.retry_temperature)
                },
                seed: self.config.seed,
                max_tokens: Some(self.config.max_tokens),
                response_format: match self.config.answer_format {
                    AnswerFormat::Text => ResponseFormat::Text,
                    AnswerFormat::JsonObject => ResponseFormat::JsonObject,
                    AnswerFormat::JsonSchema => ResponseFormat::JsonSchema(self.schema.clone()),
                    AnswerFormat::JsonObjectSchema => {
                        ResponseFormat::JsonObjectSchema(self.schema.clone())
                    }
                },
                tag: Some(format!("labeling request {}", attempt + 1)),
                ..ChatRequest::default()
            };
            let resp = self.model.complete(&req).map_err(|e| fail(e.to_string()))?;
            let content = resp
                .choices
                .into_iter()
                .next()
                .map(|c| c.content)
                .unwrap_or_default();
            match self.parse_answer(&content) {
                Ok(labels) => return Ok((self.drop_leaked(labels, event), None)),
                Err(e) => {
                    last_error = format!("{e}; the answer was: {}", excerpt(content.trim(), 200));
                    messages.push(Message::assistant(content));
                    messages.push(Message::user(format!(
                        "That answer is invalid: {e}. {ANSWER_MARKER} with exactly these keys, and nothing else: {}",
                        self.template
                    )));
                }
            }
        }
        Err(fail(format!(
            "malformed labeling answer from model `{}` after {} attempt(s): {last_error}",
            self.model.name(),
            self.config.answer_retries + 1
        )))
    }

    /// `labels` without those whose value (any of its parameters' values) is absent from
    /// `event` but present in the proposition's spec examples: a value copied from an example
    /// is never the step's ([`leaked_from_examples`]).
    pub fn drop_leaked(&self, labels: Vec<String>, event: &Event) -> Vec<String> {
        labels
            .into_iter()
            .filter(|l| {
                let Some((base, args)) = split_atom_name(l) else {
                    return true;
                };
                let Some(p) = self.props.iter().find(|p| p.name == base) else {
                    return true;
                };
                !args
                    .split(',')
                    .any(|v| leaked_from_examples(p, v.trim(), event, self.case_sensitive))
            })
            .collect()
    }

    /// The scoring settings of this labeler: the default threshold, each proposition's own
    /// calibrated on its spec examples ([`LlmLabeler::calibrate`]) when
    /// [`LlmLabelerConfig::calibrate`] is set.
    ///
    /// Errors: the calibration's model calls failed.
    pub fn scoring_config(&self) -> Result<ScoringConfig, ScoringError> {
        let mut config = ScoringConfig::default();
        if self.config.calibrate {
            config.thresholds = self
                .calibrate()?
                .into_iter()
                .map(|c| (c.proposition, c.threshold))
                .collect();
        }
        Ok(config)
    }

    /// Each proposition's threshold on `P(yes)`, calibrated on its spec examples
    /// ([`crate::yes_no::calibrate_propositions`]: each example's text scored as a step without
    /// history) at the first call, then remembered. Needs a model that can score.
    ///
    /// Errors: the model's calls failed; a later call tries again.
    pub fn calibrate(&self) -> Result<Vec<Calibration>, ScoringError> {
        let mut done = self.calibration.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = done.as_ref() {
            return Ok(c.clone());
        }
        let context_of = |text: &str| {
            let ev = Event {
                step: 1,
                output: Some(text.to_string()),
                ..Event::default()
            };
            self.scoring_context(&ev, &[])
        };
        let c = calibrate_propositions(
            self.model.as_ref(),
            &self.props,
            &context_of,
            ScoringConfig::default().threshold,
        )?;
        *done = Some(c.clone());
        Ok(c)
    }

    /// The thresholds calibrated so far ([`LlmLabeler::calibrate`]); `None` before.
    pub fn calibration(&self) -> Option<Vec<Calibration>> {
        self.calibration
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Failures of [`Labeler::label`] calls so far (taken out).
    pub fn take_failures(&mut self) -> Vec<LabelFailure> {
        std::mem::take(&mut self.failures)
    }
}

impl Labeler for LlmLabeler {
    /// Prefer [`Labeler::try_label`]: `label` cannot report a failure, so a step it could not
    /// label gives no labels and the failure is kept for [`LlmLabeler::take_failures`].
    fn label(&mut self, event: &Event, history: &[Event]) -> Vec<String> {
        match self.label_step(event, history) {
            Ok(l) => l,
            Err(f) => {
                self.failures.push(f);
                Vec::new()
            }
        }
    }

    fn try_label(&mut self, event: &Event, history: &[Event]) -> Result<Vec<String>, LabelFailure> {
        self.label_step(event, history)
    }
}

fn extract_object(content: &str) -> Result<Map<String, Value>, AnswerError> {
    let (Some(a), Some(b)) = (content.find('{'), content.rfind('}')) else {
        return Err(AnswerError::NoObject);
    };
    if b < a {
        return Err(AnswerError::NoObject);
    }
    match serde_json::from_str::<Value>(&content[a..=b]) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(AnswerError::NotAnObject),
        Err(e) => Err(AnswerError::Json(e)),
    }
}

fn read_bool(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" => Some(true),
            "false" | "no" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// Values a JSON answer gives at most per parametric proposition (the schema's `maxItems`):
/// a grammar-constrained model cannot run on listing values to its token limit.
pub const MAX_VALUES: usize = 8;

/// The JSON schema of `p`'s answer: a boolean for a plain proposition; a list of at most
/// [`MAX_VALUES`] strings for one parameter; a list of at most [`MAX_VALUES`] lists of exactly
/// as many strings as parameters (`[["package3", "a1"]]`) for several.
fn value_schema(p: &PropositionDecl) -> Value {
    let arity = p.param.as_deref().map_or(0, |q| param_names(q).len());
    match arity {
        0 => serde_json::json!({"type": "boolean"}),
        1 => {
            serde_json::json!({"type": "array", "items": {"type": "string"}, "maxItems": MAX_VALUES})
        }
        k => serde_json::json!({
            "type": "array",
            "items": {"type": "array", "items": {"type": "string"}, "minItems": k, "maxItems": k},
            "maxItems": MAX_VALUES,
        }),
    }
}

/// A proposition of `arity` > 1 parameters: its tuples, each as `v1, v2` (`None`: not a list
/// of tuples). Read: `[["package3", "a1"]]`; a tuple written as one string `"package3, a1"`;
/// `null`, `false` or `[]` for none. A flat list of values (`["package3", "a1"]`) or a tuple of
/// another length is not read.
fn read_tuples(v: &Value, arity: usize) -> Option<Vec<String>> {
    let scalar = |x: &Value| match x {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let one = |x: &Value| match x {
        Value::Array(parts) if parts.len() == arity => parts
            .iter()
            .map(scalar)
            .collect::<Option<Vec<_>>>()
            .map(|p| p.join(", ")),
        Value::String(s) if s.split(',').count() == arity => Some(s.clone()),
        _ => None,
    };
    match v {
        Value::Null | Value::Bool(false) => Some(Vec::new()),
        Value::String(_) => one(v).map(|t| vec![t]),
        Value::Array(items) => items.iter().map(one).collect(),
        _ => None,
    }
}

fn read_values(v: &Value) -> Option<Vec<String>> {
    match v {
        Value::Null | Value::Bool(false) => Some(Vec::new()),
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(items) => items
            .iter()
            .map(|x| match x {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// How `trac audit --labeler` chooses the labeling function of each proposition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LabelerMode {
    /// Each proposition's `labeler` field in the spec (default `Rule`).
    #[default]
    Spec,
    /// Every proposition by its rule; no model is asked.
    Rules,
    /// Every proposition by the LLM.
    Llm,
    /// Propositions with a rule: the rule first, then the LLM (`Both`); without: the LLM.
    Hybrid,
}

impl LabelerMode {
    /// The labeling function `mode` gives proposition `p`.
    pub fn choice(self, p: &PropositionDecl) -> LabelerChoice {
        match self {
            LabelerMode::Spec => p.labeler,
            LabelerMode::Rules => LabelerChoice::Rule,
            LabelerMode::Llm => LabelerChoice::Llm,
            LabelerMode::Hybrid if p.rule.is_some() => LabelerChoice::Both,
            LabelerMode::Hybrid => LabelerChoice::Llm,
        }
    }

    /// Whether labeling `specs` in this mode asks a model.
    pub fn needs_model(self, specs: &[&Spec]) -> bool {
        specs.iter().any(|s| {
            s.propositions
                .iter()
                .any(|p| self.choice(p) != LabelerChoice::Rule)
        })
    }
}

/// Which labeling function gave a label.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LabelSource {
    /// A spec rule.
    Rule,
    /// The LLM (a chat model).
    Llm,
    /// The embeddings labeler (a model that embeds: [`crate::embed_labeler`]).
    Embed,
    /// The trace's own `labels`.
    Trace,
}

impl LabelSource {
    /// `rule`, `llm`, `embed` or `trace`.
    pub fn as_str(self) -> &'static str {
        match self {
            LabelSource::Rule => "rule",
            LabelSource::Llm => "llm",
            LabelSource::Embed => "embed",
            LabelSource::Trace => "trace",
        }
    }
}

/// One proposition's value at a step, and who decided it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PropValue {
    /// The proposition's name.
    pub proposition: String,
    /// Whether it holds (for a parametric proposition: for some value).
    pub holds: bool,
    /// For a parametric proposition, the values it holds for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
    /// The labeling function that decided it: the one that made it hold, else the last one asked.
    pub by: LabelSource,
    /// When an LLM labeling by scoring decided it ([`crate::scoring`]): the probability, in
    /// `[0, 1]`, the model gave to the value shown (`P(yes)/(P(yes)+P(no))` when it holds, one
    /// minus that when not; for a parametric proposition, of "holds for some value"). `None` for
    /// rules, trace labels and LLMs answering in JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// When an LLM labeling by scoring decided it: `P(yes)/(P(yes)+P(no))` of "it holds (for
    /// some value)", in `[0, 1]`, whatever was decided (label-eval's AUC ranks steps by it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_yes: Option<f64>,
}

/// The labels of one step, with their sources.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StepLabels {
    /// The labels that hold (`look`, `take(knife)`), each once, with the function that gave it.
    pub labels: Vec<(String, LabelSource)>,
    /// Every declared proposition's value (in spec order), for `--show-labels`.
    pub propositions: Vec<PropValue>,
}

impl StepLabels {
    /// The label names.
    pub fn names(&self) -> Vec<String> {
        self.labels.iter().map(|(l, _)| l.clone()).collect()
    }

    fn push(&mut self, label: String, source: LabelSource) {
        if !self.labels.iter().any(|(l, _)| *l == label) {
            self.labels.push((label, source));
        }
    }

    /// One line: `take=knife (llm 0.93), look=false (rule), ...` (the number: the scoring
    /// labeler's confidence in the value, [`PropValue::confidence`]), then labels of no declared
    /// proposition (`extra (trace)`).
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self
            .propositions
            .iter()
            .map(|p| {
                let value = match &p.values {
                    Some(v) if v.is_empty() => "-".to_string(),
                    Some(v) => v.join("|"),
                    None => p.holds.to_string(),
                };
                match p.confidence {
                    Some(c) => format!("{}={value} ({} {c:.2})", p.proposition, p.by.as_str()),
                    None => format!("{}={value} ({})", p.proposition, p.by.as_str()),
                }
            })
            .collect();
        for (l, s) in &self.labels {
            let base = split_atom_name(l).map_or(l.as_str(), |(b, _)| b);
            if !self.propositions.iter().any(|p| p.proposition == base) {
                parts.push(format!("{l} ({})", s.as_str()));
            }
        }
        parts.join(", ")
    }
}

/// The model-backed labeler of a spec's propositions: a chat model's, or an embeddings model's
/// (a model that [`ChatModel::can_embed`]).
enum ModelLabeler {
    Chat(LlmLabeler),
    Embed(crate::embed_labeler::EmbedLabeler),
}

impl ModelLabeler {
    /// The calibrated `P(yes)` thresholds of a chat model that scores; `None` for an embeddings
    /// labeler (its thresholds are on embedding margins, mapped to `P(yes)` = 0.5).
    fn calibration(&self) -> Option<Vec<Calibration>> {
        match self {
            ModelLabeler::Chat(l) => l.calibration(),
            ModelLabeler::Embed(_) => None,
        }
    }

    fn label_step_scored(
        &self,
        event: &Event,
        history: &[Event],
    ) -> Result<(Vec<String>, Option<Vec<PropScore>>), LabelFailure> {
        match self {
            ModelLabeler::Chat(l) => l.label_step_scored(event, history),
            ModelLabeler::Embed(l) => l
                .label_step_scored(event, history)
                .map(|(l, s)| (l, Some(s))),
        }
    }
}

struct SpecLabeler {
    rules: RuleLabeler,
    llm: Option<ModelLabeler>,
    props: Vec<(PropositionDecl, LabelerChoice)>,
}

/// The labeling function of an audit: each proposition of each spec decided by its rule, the
/// LLM, or both (rule first), as [`LabelerMode`] says, plus (optionally) the labels written in the
/// trace. One LLM request per step and spec, for that spec's LLM-labeled propositions.
///
/// [`HybridLabeler::label_step`] takes `&self`: steps can be labeled from several threads.
pub struct HybridLabeler {
    specs: Vec<SpecLabeler>,
    trace_labels: bool,
    failures: Vec<LabelFailure>,
}

impl std::fmt::Debug for HybridLabeler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HybridLabeler")
            .field("specs", &self.specs.len())
            .field("trace_labels", &self.trace_labels)
            .finish_non_exhaustive()
    }
}

impl HybridLabeler {
    /// A labeler for `specs` in `mode`, asking `model` (with `config`) for the propositions the
    /// LLM decides. `trace_labels`: add the labels written in the trace (an audit does; a
    /// labeler under evaluation against those labels must not).
    ///
    /// Errors: a labeling rule that does not compile, or propositions for the LLM and no model.
    pub fn new(
        specs: &[&Spec],
        mode: LabelerMode,
        model: Option<Arc<dyn ChatModel>>,
        config: &LlmLabelerConfig,
        trace_labels: bool,
    ) -> Result<HybridLabeler, HybridError> {
        let mut out = Vec::new();
        for spec in specs {
            let rules = RuleLabeler::new(spec)?;
            let props: Vec<(PropositionDecl, LabelerChoice)> = spec
                .propositions
                .iter()
                .map(|p| (p.clone(), mode.choice(p)))
                .collect();
            let for_llm: Vec<PropositionDecl> = props
                .iter()
                .filter(|(_, c)| *c != LabelerChoice::Rule)
                .map(|(p, _)| p.clone())
                .collect();
            let llm = if for_llm.is_empty() {
                None
            } else {
                let Some(model) = &model else {
                    return Err(HybridError::NoModel {
                        spec: spec.name.clone(),
                        propositions: for_llm.iter().map(|p| p.name.clone()).collect(),
                    });
                };
                Some(if model.can_embed() {
                    ModelLabeler::Embed(crate::embed_labeler::EmbedLabeler::new(
                        Arc::clone(model),
                        for_llm,
                        &spec.propositions,
                        spec.case_sensitive,
                        crate::embed_labeler::EmbedLabelerConfig::for_model(model.name()),
                    ))
                } else {
                    ModelLabeler::Chat(LlmLabeler::new(
                        Arc::clone(model),
                        for_llm,
                        spec.case_sensitive,
                        config.clone(),
                    ))
                })
            };
            out.push(SpecLabeler { rules, llm, props });
        }
        Ok(HybridLabeler {
            specs: out,
            trace_labels,
            failures: Vec::new(),
        })
    }

    /// The thresholds on `P(yes)` calibrated so far for the propositions an LLM labels by
    /// scoring ([`LlmLabeler::calibration`]), spec by spec; empty before the first scored step
    /// or for a model answering in JSON.
    pub fn calibrations(&self) -> Vec<Calibration> {
        self.specs
            .iter()
            .filter_map(|s| s.llm.as_ref()?.calibration())
            .flatten()
            .collect()
    }

    /// Whether any proposition is decided by an LLM.
    pub fn uses_model(&self) -> bool {
        self.specs.iter().any(|s| s.llm.is_some())
    }

    /// The labels of `event` given its session's earlier steps (`history`, oldest first).
    ///
    /// Errors: the LLM could not label the step (see [`LlmLabeler::label_step`]).
    pub fn label_step(&self, event: &Event, history: &[Event]) -> Result<StepLabels, LabelFailure> {
        let mut out = StepLabels::default();
        let given: Vec<String> = if self.trace_labels {
            event.labels.clone().unwrap_or_default()
        } else {
            Vec::new()
        };
        for s in &self.specs {
            // The whole event: structural rules (`Role`, `Tool`, `Arg`, `Field`) read more than
            // its text.
            let rule_labels = s.rules.label_event(event);
            // Who a model's label is from: the chat LLM or the embeddings labeler.
            let model = match &s.llm {
                Some(ModelLabeler::Embed(_)) => LabelSource::Embed,
                _ => LabelSource::Llm,
            };
            let (llm_labels, scores) = match &s.llm {
                Some(l) => l.label_step_scored(event, history)?,
                None => (Vec::new(), None),
            };
            // The scoring labeler's P(yes) of `p`.
            let p_yes_of = |p: &PropositionDecl| -> Option<f64> {
                let s = scores.as_ref()?.iter().find(|s| s.proposition == p.name)?;
                Some(s.p_yes)
            };
            let of = |labels: &[String], p: &PropositionDecl| -> Vec<String> {
                labels
                    .iter()
                    .filter(|l| base_of(l) == p.name)
                    .cloned()
                    .collect()
            };
            for (p, choice) in &s.props {
                let from_rule = if *choice == LabelerChoice::Llm {
                    Vec::new()
                } else {
                    of(&rule_labels, p)
                };
                let (mut chosen, mut by) = match choice {
                    LabelerChoice::Rule => (from_rule, LabelSource::Rule),
                    LabelerChoice::Llm => (of(&llm_labels, p), model),
                    LabelerChoice::Both if !from_rule.is_empty() => (from_rule, LabelSource::Rule),
                    LabelerChoice::Both => (of(&llm_labels, p), model),
                };
                let from_trace: Vec<String> = of(&given, p)
                    .into_iter()
                    .filter(|l| !chosen.contains(l))
                    .collect();
                for l in &chosen {
                    out.push(l.clone(), by);
                }
                if !from_trace.is_empty() {
                    if chosen.is_empty() {
                        by = LabelSource::Trace;
                    }
                    for l in from_trace {
                        out.push(l.clone(), LabelSource::Trace);
                        chosen.push(l);
                    }
                }
                let values = p.param.as_ref().map(|_| {
                    chosen
                        .iter()
                        .filter_map(|l| split_atom_name(l).map(|(_, v)| v.to_string()))
                        .collect::<Vec<_>>()
                });
                if !out.propositions.iter().any(|v| v.proposition == p.name) {
                    out.propositions.push(PropValue {
                        proposition: p.name.clone(),
                        holds: !chosen.is_empty(),
                        values,
                        by,
                        confidence: (by == model)
                            .then(|| {
                                p_yes_of(p).map(|y| if chosen.is_empty() { 1.0 - y } else { y })
                            })
                            .flatten(),
                        p_yes: (by == model).then(|| p_yes_of(p)).flatten(),
                    });
                }
            }
        }
        for l in given {
            out.push(l, LabelSource::Trace);
        }
        Ok(out)
    }

    /// Failures of [`Labeler::label`] calls so far (taken out).
    pub fn take_failures(&mut self) -> Vec<LabelFailure> {
        std::mem::take(&mut self.failures)
    }
}

impl Labeler for HybridLabeler {
    /// Prefer [`Labeler::try_label`]: `label` cannot report a failure, so a step it could not
    /// label gives no labels and the failure is kept for [`HybridLabeler::take_failures`].
    fn label(&mut self, event: &Event, history: &[Event]) -> Vec<String> {
        match self.label_step(event, history) {
            Ok(l) => l.names(),
            Err(f) => {
                self.failures.push(f);
                Vec::new()
            }
        }
    }

    fn try_label(&mut self, event: &Event, history: &[Event]) -> Result<Vec<String>, LabelFailure> {
        self.label_step(event, history).map(|l| l.names())
    }
}

fn base_of(label: &str) -> &str {
    split_atom_name(label).map_or(label, |(b, _)| b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ChatResponse, ConfigError, ModelError, Usage};
    use trac_spec::spec::LabelExample;

    struct Never;
    impl ChatModel for Never {
        fn name(&self) -> &str {
            "never"
        }
        fn complete(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
            Err(ModelError::Config(ConfigError::Other(Arc::new(
                std::io::Error::other(format!("not asked: {}", req.name())),
            ))))
        }
        fn usage(&self) -> Usage {
            Usage::default()
        }
    }

    fn labeler() -> LlmLabeler {
        let props = vec![
            PropositionDecl {
                name: "greet".into(),
                description: "the agent warmly greets".into(),
                examples: vec![
                    LabelExample {
                        text: "Hello!".into(),
                        holds: true,
                        values: vec![],
                    },
                    LabelExample {
                        text: "Go away.".into(),
                        holds: false,
                        values: vec![],
                    },
                ],
                ..Default::default()
            },
            PropositionDecl {
                name: "take".into(),
                param: Some("item".into()),
                examples: vec![LabelExample {
                    text: "take the knife".into(),
                    holds: true,
                    values: vec!["knife".into()],
                }],
                ..Default::default()
            },
        ];
        LlmLabeler::new(Arc::new(Never), props, false, LlmLabelerConfig::default())
    }

    #[test]
    fn the_prompt_lists_descriptions_examples_window_and_step() {
        let l = labeler();
        let ev = |step: usize, input: Option<&str>, output: &str| Event {
            step,
            input: input.map(Into::into),
            output: Some(output.into()),
            ..Event::default()
        };
        let m = l.messages(
            &ev(3, Some("You see a knife."), "take knife"),
            &[ev(1, None, "hi"), ev(2, None, "look")],
        );
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].role, crate::model::Role::System);
        assert_eq!(
            m[1].content,
            "Propositions:\n\
             - \"greet\": the agent warmly greets. Answer true or false.\n  \
             Examples: \"Hello!\" -> true; \"Go away.\" -> false\n\
             - \"take\": take. Answer the list of the values of {item} for which it holds (a short name each, [] if none).\n  \
             Examples: \"take the knife\" -> [\"knife\"]\n\
             \n\
             Earlier steps (oldest first, for context only):\n\
             step 1: hi\n\
             step 2: look\n\
             \n\
             Step to label (step 3):\n\
             Input: You see a knife.\n\
             Output: take knife\n\
             \n\
             Answer with one JSON object with exactly these keys: {\"greet\": true or false, \"take\": [values of item]}"
        );
    }

    #[test]
    fn a_model_error_fails_the_step_without_answer_retries() {
        let l = labeler();
        let ev = Event {
            step: 4,
            line: 9,
            output: Some("x".into()),
            ..Event::default()
        };
        let f = l.label_step(&ev, &[]).unwrap_err();
        assert_eq!(
            f.to_string(),
            "step 4 (line 9): not asked: labeling request 1"
        );
    }
}
