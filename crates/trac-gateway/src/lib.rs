//! `trac gateway`: the monitors of trac in front of any agent that talks to a model through the
//! OpenAI Chat Completions API, by changing one base URL.
//!
//! An HTTP server ([`http::Server`], on 127.0.0.1 unless told otherwise) that forwards
//! `POST /v1/chat/completions` (streamed or not) and `GET /v1/models` to an upstream
//! OpenAI-compatible server ([`upstream`]), with the client's credentials, never logged. Each
//! conversation ([`conversation`], its session id from the `X-Trac-Session` header, the `user`
//! field, or a hash of its first messages: [`gateway::session_id`]) is one session of the
//! library's audit driver, through [`trac_agent::supervisor::Supervisor`]: the messages a
//! request adds and the response's assistant message are steps, labeled by the specs' rules
//! exactly as `trac audit` labels them, so the gateway's verdicts are the audit's. Under
//! `--intervene shield`, a response that would lead a property to ⊥ never reaches the agent:
//! it is replaced by the first compliant of `--samples N` more answers of the upstream (the
//! same request asked again), else by a refusal stating the rule, or an error ([`shield`]). Under
//! `--intervene resample|inject|switch`, a response whose predicted risk (the library's estimator:
//! exact look-ahead, then continuations sampled from the upstream) is above the threshold is
//! replaced by another answer of the upstream ([`predictive`]). The [`log`] is JSON
//! Lines of OpenAI messages with a `session` field, which `trac audit --spec SPEC FILE`
//! re-audits to the same verdicts; interventions go beside it. `GET /trac/sessions` shows each
//! conversation's verdicts.
//!
//! ```no_run
//! # let specs: Vec<trac_spec::spec::CheckedSpec> = vec![];
//! use trac_gateway::{Gateway, GatewayOptions, Intervene, Server};
//! let mut opts = GatewayOptions::new("http://127.0.0.1:8080/v1");
//! opts.intervene = Intervene::Shield;
//! let server = Server::bind(Gateway::new(&specs, opts).unwrap()).unwrap();
//! println!("base_url: http://{}/v1", server.addr());
//! server.run();
//! ```
#![deny(missing_docs)]

pub mod anthropic;
pub mod api;
pub mod conversation;
pub mod gateway;
pub mod http;
pub mod log;
pub mod messages;
pub mod monitors;
pub mod options;
pub mod predictive;
pub mod shield;
pub mod stream;
pub mod upstream;

pub use gateway::Gateway;
pub use http::{Running, Server};
pub use options::{GatewayError, GatewayOptions, Intervene, OnBlock, Predict};
