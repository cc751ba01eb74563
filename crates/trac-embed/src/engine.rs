//! The inference thread: owns the llama.cpp model and context, serves generation and scoring
//! requests one at a time.
//!
//! # Determinism
//! The logits of a position can differ in the last bits with how the tokens before it were
//! split into batches (llama.cpp picks different matrix kernels for different batch sizes), so
//! every request evaluates its tokens in a canonical way that does not depend on earlier
//! requests: a generation request evaluates its whole prompt from an empty KV cache, then one
//! token at a time; a scoring request evaluates the prefix its prompts share from an empty cache,
//! then each prompt's remaining tokens after that prefix (the prefix's KV entries are kept and
//! reused: the step's context is evaluated once for all its propositions). Sampling is done in
//! Rust ([`crate::sample`]) with a generator seeded by `seed + sample index`. So a request
//! gives the same answer whatever came before it, with any thread count of the same build.

use crate::sample;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::OnceLock;
use trac_llm::model::TokenLogprob;
use trac_llm::{
    ChatRequest, ChatResponse, Choice, Message, ModelError, ScoreRequest, ScoreResponse, Usage,
};

pub use crate::grammar::JSON_OBJECT_GBNF;

/// Settings of the inference thread.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineConfig {
    /// Context length in tokens (prompt + completion). Default 4096 (at most the model's
    /// training context).
    pub n_ctx: u32,
    /// Tokens evaluated per llama.cpp batch. Default 512.
    pub n_batch: u32,
    /// CPU threads. Default: `$TRAC_EMBED_THREADS` if set to a positive number, else the
    /// available parallelism, at most 4. On a machine shared with other busy processes, 1 can
    /// be much faster: llama.cpp's threads wait for each other by spinning, so a descheduled
    /// thread stalls the rest (BENCHMARKS.md).
    pub threads: i32,
    /// Completion token limit when a request gives none. Default 256.
    pub default_max_tokens: u32,
}

impl Default for EngineConfig {
    fn default() -> Self {
        let threads = std::env::var("TRAC_EMBED_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<i32>().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map(|n| n.get().min(4) as i32)
                    .unwrap_or(2)
            });
        EngineConfig {
            n_ctx: 4096,
            n_batch: 512,
            threads,
            default_max_tokens: 256,
        }
    }
}

/// What the model file says about itself.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelInfo {
    /// `general.name` from the GGUF metadata, else the file name.
    pub name: String,
    /// Parameters.
    pub n_params: u64,
    /// Size of the weights in bytes.
    pub size: u64,
    /// Vocabulary size.
    pub n_vocab: usize,
    /// The context length used.
    pub n_ctx: u32,
}

static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();

/// The process's llama.cpp backend (initialized once, its logging silenced unless
/// `TRAC_EMBED_LOG` is set).
fn backend() -> Result<&'static LlamaBackend, ModelError> {
    BACKEND
        .get_or_init(|| {
            let mut b = LlamaBackend::init().map_err(|e| e.to_string())?;
            if std::env::var_os("TRAC_EMBED_LOG").is_none() {
                b.void_logs();
            }
            Ok(b)
        })
        .as_ref()
        .map_err(|e| {
            ModelError::Config(trac_llm::model::ConfigError::Embedded(format!(
                "llama.cpp backend: {e}"
            )))
        })
}

/// The loaded model (shared by the inference thread's context).
pub struct Loaded {
    model: LlamaModel,
    template: LlamaChatTemplate,
    /// What the model says about itself.
    pub info: ModelInfo,
}

/// Loads the GGUF model at `path`.
///
/// Errors: the file is missing or llama.cpp cannot load it ([`ModelError::Config`] naming it).
pub fn load(path: &Path) -> Result<Loaded, ModelError> {
    let backend = backend()?;
    if !path.is_file() {
        return Err(ModelError::Config(trac_llm::model::ConfigError::Embedded(
            format!("{}: no such model file", path.display()),
        )));
    }
    let model =
        LlamaModel::load_from_file(backend, path, &LlamaModelParams::default()).map_err(|e| {
            ModelError::Config(trac_llm::model::ConfigError::Embedded(format!(
                "{}: llama.cpp cannot load this model (is it a GGUF file?): {e}",
                path.display()
            )))
        })?;
    // The model's own template, else ChatML (which llama.cpp knows by name), said on stderr.
    let template = match model.chat_template(None) {
        Ok(t) => Ok(t),
        Err(_) => {
            eprintln!("{}", crate::chat_template::chatml_fallback_warning(path));
            LlamaChatTemplate::new("chatml")
        }
    }
    .map_err(|e| {
        ModelError::Config(trac_llm::model::ConfigError::Embedded(format!(
            "{}: chat template: {e}",
            path.display()
        )))
    })?;
    let name = model
        .meta_val_str("general.name")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "gguf".into())
        });
    let info = ModelInfo {
        name,
        n_params: model.n_params(),
        size: model.size(),
        n_vocab: model.n_vocab().max(0) as usize,
        n_ctx: model.n_ctx_train(),
    };
    Ok(Loaded {
        model,
        template,
        info,
    })
}

/// A context over a loaded model: the KV cache and the batch buffer.
pub struct Engine<'m> {
    loaded: &'m Loaded,
    ctx: LlamaContext<'m>,
    batch: LlamaBatch<'static>,
    n_batch: usize,
    n_ctx: usize,
    default_max_tokens: u32,
    /// Tokens whose KV entries are in the cache, in order.
    cached: Vec<LlamaToken>,
}

fn err(request: &str, message: impl std::fmt::Display) -> ModelError {
    ModelError::BadResponse {
        request: request.to_string(),
        message: message.to_string(),
    }
}

impl<'m> Engine<'m> {
    /// A context over `loaded` with `config`'s sizes and threads.
    ///
    /// Errors: llama.cpp cannot allocate the context.
    pub fn new(loaded: &'m Loaded, config: &EngineConfig) -> Result<Engine<'m>, ModelError> {
        let backend = backend()?;
        let n_ctx = config.n_ctx.min(loaded.info.n_ctx.max(1)).max(64);
        let n_batch = config.n_batch.clamp(1, n_ctx);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(n_batch)
            .with_n_ubatch(n_batch)
            .with_n_threads(config.threads.max(1))
            .with_n_threads_batch(config.threads.max(1));
        let ctx = loaded.model.new_context(backend, params).map_err(|e| {
            ModelError::Config(trac_llm::model::ConfigError::Embedded(format!(
                "llama.cpp context: {e}"
            )))
        })?;
        Ok(Engine {
            loaded,
            ctx,
            batch: LlamaBatch::new(n_batch as usize, 1),
            n_batch: n_batch as usize,
            n_ctx: n_ctx as usize,
            default_max_tokens: config.default_max_tokens,
            cached: Vec::new(),
        })
    }

    /// The prompt text of `messages` under the model's chat template, ending with the opening
    /// of the assistant's turn.
    ///
    /// Errors: a message holds a NUL byte, or llama.cpp rejects the template.
    pub fn render(&self, messages: &[Message], request: &str) -> Result<String, ModelError> {
        let chat = messages
            .iter()
            .map(|m| LlamaChatMessage::new(m.role.to_string(), m.content.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| err(request, format!("a message cannot be sent: {e}")))?;
        self.loaded
            .model
            .apply_chat_template(&self.loaded.template, &chat, true)
            .map_err(|e| err(request, format!("chat template: {e}")))
    }

    /// The tokens of `text` (special tokens such as `<|im_start|>` parsed; a BOS token added
    /// where the model wants one).
    pub fn tokenize(&self, text: &str, add_bos: bool) -> Vec<LlamaToken> {
        self.loaded
            .model
            .vocab()
            .tokenize(text.as_bytes(), add_bos, true)
    }

    fn piece(&self, t: LlamaToken) -> Vec<u8> {
        self.loaded.model.vocab().token_to_piece(t, false, None)
    }

    /// Keeps the first `keep` cached tokens (which must equal `tokens[..keep]`), evaluates
    /// `tokens[keep..]` in batches of at most `n_batch`, and returns the logits after the last
    /// token. Needs `keep < tokens.len() <= n_ctx`.
    fn eval(
        &mut self,
        tokens: &[LlamaToken],
        keep: usize,
        request: &str,
    ) -> Result<Vec<f32>, ModelError> {
        debug_assert!(keep < tokens.len() && self.cached.len() >= keep);
        if tokens.len() > self.n_ctx {
            return Err(err(
                request,
                format!(
                    "{} tokens exceed the context of {} tokens",
                    tokens.len(),
                    self.n_ctx
                ),
            ));
        }
        if keep == 0 {
            self.ctx.clear_kv_cache();
        } else {
            let _ = self
                .ctx
                .clear_kv_cache_seq(Some(0), Some(keep as u32), None);
        }
        self.cached.truncate(keep);
        let mut pos = keep;
        while pos < tokens.len() {
            let end = (pos + self.n_batch).min(tokens.len());
            self.batch.clear();
            for (i, t) in tokens[pos..end].iter().enumerate() {
                let p = pos + i;
                self.batch
                    .add(*t, p as i32, &[0], p + 1 == tokens.len())
                    .map_err(|e| err(request, e))?;
            }
            if let Err(e) = self.ctx.decode(&mut self.batch) {
                // The cache state is unknown: start over next time.
                self.ctx.clear_kv_cache();
                self.cached.clear();
                return Err(err(request, format!("llama.cpp decode: {e}")));
            }
            self.cached.extend_from_slice(&tokens[pos..end]);
            pos = end;
        }
        Ok(self.ctx.get_logits_ith(self.batch.n_tokens() - 1).to_vec())
    }

    /// `n` completions of `req` (see [`trac_llm::ChatModel::complete`]); samples are drawn with
    /// seed `seed + sample index` (`seed` random when not given), greedy at temperature 0. A
    /// `json_object` request is constrained by [`JSON_OBJECT_GBNF`], a request with a JSON
    /// schema by the schema's grammar ([`crate::grammar::grammar_for`]). Stop sequences end a
    /// completion (not included). Log-probabilities (of the model's distribution, before
    /// temperature) when asked.
    ///
    /// Errors: the prompt does not fit the context, a template or decoding failure.
    pub fn complete(&mut self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let name = req.name();
        let text = self.render(&req.messages, &name)?;
        let prompt = self.tokenize(&text, true);
        if prompt.is_empty() {
            return Err(err(&name, "empty prompt"));
        }
        let max_tokens = req.max_tokens.unwrap_or(self.default_max_tokens) as usize;
        let room = self.n_ctx.saturating_sub(prompt.len());
        if room == 0 {
            return Err(err(
                &name,
                format!(
                    "the prompt has {} tokens, the context {}",
                    prompt.len(),
                    self.n_ctx
                ),
            ));
        }
        let max_tokens = max_tokens.min(room);
        let prompt_logits = self.eval(&prompt, 0, &name)?;
        let mut usage = Usage {
            prompt_tokens: prompt.len() as u64,
            requests: 1,
            ..Usage::default()
        };
        let gbnf = crate::grammar::grammar_for(&req.response_format).map_err(|e| err(&name, e))?;
        let base_seed = req.seed.unwrap_or_else(|| fastrand::u64(..));
        let mut choices = Vec::with_capacity(req.n.max(1));
        for i in 0..req.n.max(1) {
            let sample_index = (req.sample_offset + i) as u64;
            let mut rng = fastrand::Rng::with_seed(base_seed.wrapping_add(sample_index));
            let mut grammar = match &gbnf {
                Some(g) => Some(
                    LlamaSampler::grammar(&self.loaded.model, g, "root")
                        .map_err(|e| err(&name, format!("JSON grammar: {e}")))?,
                ),
                None => None,
            };
            let mut logits = prompt_logits.clone();
            let mut bytes: Vec<u8> = Vec::new();
            let mut seq = prompt.clone();
            let mut lps: Vec<TokenLogprob> = Vec::new();
            let mut finish = "length";
            let mut generated = 0usize;
            while generated < max_tokens {
                if let Some(g) = grammar.as_mut() {
                    let mut arr = LlamaTokenDataArray::from_iter(
                        logits.iter().enumerate().map(|(i, &l)| {
                            llama_cpp_2::token::data::LlamaTokenData::new(
                                LlamaToken(i as i32),
                                l,
                                0.0,
                            )
                        }),
                        false,
                    );
                    arr.apply_sampler(g);
                    for d in arr.data.iter() {
                        logits[d.id().0 as usize] = d.logit();
                    }
                }
                let Some(t) = sample::choose(&logits, req.temperature, req.top_p, &mut rng) else {
                    finish = "stop";
                    break;
                };
                let tok = LlamaToken(t as i32);
                if let Some(k) = req.logprobs {
                    let lp = sample::log_softmax(&logits);
                    let top = sample::top_k(&lp, k as usize);
                    lps.push(TokenLogprob {
                        token: String::from_utf8_lossy(&self.piece(tok)).into_owned(),
                        logprob: lp[t],
                        top: top
                            .into_iter()
                            .map(|(i, l)| {
                                (
                                    String::from_utf8_lossy(&self.piece(LlamaToken(i as i32)))
                                        .into_owned(),
                                    l,
                                )
                            })
                            .collect(),
                    });
                }
                generated += 1;
                if self.loaded.model.vocab().is_eog(tok) {
                    finish = "stop";
                    break;
                }
                if let Some(g) = grammar.as_mut() {
                    g.accept(tok);
                }
                bytes.extend(self.piece(tok));
                let text = String::from_utf8_lossy(&bytes);
                if let Some(cut) = req
                    .stop
                    .iter()
                    .filter(|s| !s.is_empty())
                    .filter_map(|s| text.find(s.as_str()))
                    .min()
                {
                    bytes.truncate(cut);
                    finish = "stop";
                    break;
                }
                if generated == max_tokens {
                    break;
                }
                seq.push(tok);
                let keep = seq.len() - 1;
                logits = self.eval(&seq, keep, &name)?;
            }
            usage.completion_tokens += generated as u64;
            choices.push(Choice {
                content: String::from_utf8_lossy(&bytes).into_owned(),
                finish_reason: Some(finish.to_string()),
                logprobs: req.logprobs.map(|_| lps),
            });
        }
        Ok(ChatResponse { choices, usage })
    }

    /// The log-probability of each choice after each prompt (see
    /// [`trac_llm::ChatModel::score`]): the prompts' common token prefix is evaluated once,
    /// then each prompt's rest; a choice of several tokens is evaluated token by token.
    ///
    /// Errors: a prompt does not fit the context, an empty choice, a decoding failure.
    pub fn score(&mut self, req: &ScoreRequest) -> Result<ScoreResponse, ModelError> {
        let name = req.name();
        let mut prompts = Vec::with_capacity(req.prompts.len());
        for p in &req.prompts {
            let text = self.render(p, &name)?;
            let toks = self.tokenize(&text, true);
            if toks.is_empty() {
                return Err(err(&name, "empty prompt"));
            }
            prompts.push(toks);
        }
        let choices: Vec<Vec<LlamaToken>> = req
            .choices
            .iter()
            .map(|c| self.tokenize(c, false))
            .collect();
        if let Some(i) = choices.iter().position(Vec::is_empty) {
            return Err(err(&name, format!("choice {i} is empty")));
        }
        let mut usage = Usage {
            requests: 1,
            ..Usage::default()
        };
        let mut out = Vec::with_capacity(prompts.len());
        if prompts.is_empty() {
            return Ok(ScoreResponse {
                logprobs: out,
                usage,
            });
        }
        // The shared prefix, at least one token short of the shortest prompt.
        let shortest = prompts.iter().map(Vec::len).min().unwrap_or(0);
        let mut common = 0;
        while common + 1 < shortest && prompts.iter().all(|p| p[common] == prompts[0][common]) {
            common += 1;
        }
        if common > 0 {
            self.eval(&prompts[0][..common], 0, &name)?;
            usage.prompt_tokens += common as u64;
        }
        for p in &prompts {
            let logits = self.eval(p, common, &name)?;
            usage.prompt_tokens += (p.len() - common) as u64;
            let first = sample::log_softmax(&logits);
            let mut row = Vec::with_capacity(choices.len());
            for c in &choices {
                let mut lp = first[c[0].0 as usize];
                if c.len() > 1 {
                    let mut seq = p.clone();
                    for w in c.windows(2) {
                        seq.push(w[0]);
                        let l = self.eval(&seq, seq.len() - 1, &name)?;
                        usage.prompt_tokens += 1;
                        lp += sample::log_softmax(&l)[w[1].0 as usize];
                    }
                }
                row.push(lp);
            }
            out.push(row);
        }
        Ok(ScoreResponse {
            logprobs: out,
            usage,
        })
    }
}
