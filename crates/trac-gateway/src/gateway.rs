//! The gateway's state: the monitor threads ([`Monitors`]), the conversations by session id
//! (each with a lock that orders its requests, and its stats), the upstream and the log.

use crate::conversation::{Conversation, Stats};
use crate::log::Log;
use crate::monitors::{MonitorGone, Monitors};
use crate::options::{GatewayError, GatewayOptions, Intervene, OnBlock};
use crate::upstream::Upstream;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use trac_agent::supervisor::PropertyMeta;
use trac_spec::spec::CheckedSpec;

/// The header naming a request's conversation.
pub const SESSION_HEADER: &str = "x-trac-session";

/// A conversation as the request threads see it.
#[derive(Clone, Debug)]
pub struct Handle {
    /// Its session id.
    pub id: String,
    /// Held for the whole of a request: the requests of one conversation are taken in turn
    /// (those of other conversations run meanwhile).
    pub turn: Arc<Mutex<()>>,
    /// Its stats.
    pub stats: Arc<Mutex<Stats>>,
}

/// The conversations, in order of first appearance.
#[derive(Default)]
struct Registry {
    index: HashMap<String, usize>,
    list: Vec<Handle>,
}

/// The gateway's state, shared by the threads that serve requests.
pub struct Gateway {
    monitors: Monitors,
    opts: GatewayOptions,
    upstream: Upstream,
    log: Option<Arc<Log>>,
    registry: Mutex<Registry>,
}

impl Gateway {
    /// A gateway monitoring every property of `specs` (compiled once, TRAC_R, as `trac audit`
    /// does by default), in front of `opts.upstream`; creates the log if asked.
    ///
    /// # Errors
    /// Specs that cannot be monitored, a bad upstream URL, a log that cannot be created.
    pub fn new(specs: &[CheckedSpec], opts: GatewayOptions) -> Result<Gateway, GatewayError> {
        let upstream = Upstream::new(&opts)?;
        let monitors = Monitors::start(specs, opts.monitor_threads)?;
        let log = opts
            .log
            .as_deref()
            .map(Log::create)
            .transpose()?
            .map(Arc::new);
        Ok(Gateway {
            monitors,
            opts,
            upstream,
            log,
            registry: Mutex::new(Registry::default()),
        })
    }

    /// Its options.
    pub fn options(&self) -> &GatewayOptions {
        &self.opts
    }

    /// The upstream.
    pub fn upstream(&self) -> &Upstream {
        &self.upstream
    }

    /// The log, if any.
    pub fn log(&self) -> Option<Arc<Log>> {
        self.log.clone()
    }

    /// The monitored properties.
    pub fn properties(&self) -> &[PropertyMeta] {
        self.monitors.properties()
    }

    /// The properties run by progression with bounded satisfiability checks because their
    /// table is over the compiler's state budget (`trac_runtime::audit::AuditPlan::fallbacks`).
    pub fn fallbacks(&self) -> &[trac_runtime::audit::Fallback] {
        self.monitors.fallbacks()
    }

    /// What replaces a blocked response, under `shield`; `None` when monitoring only.
    pub fn shield(&self) -> Option<OnBlock> {
        (self.opts.intervene == Intervene::Shield).then_some(self.opts.on_block)
    }

    /// Whether a response is read whole before it reaches the client (shield, resample,
    /// inject, switch): a stream is then buffered, decided on, and sent as chosen.
    pub fn buffers(&self) -> bool {
        self.opts.intervene != Intervene::None
    }

    /// Conversation `id`, registered on first use.
    pub fn conversation(&self, id: &str) -> Handle {
        let mut r = self.registry.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&i) = r.index.get(id) {
            return r.list[i].clone();
        }
        let h = Handle {
            id: id.to_string(),
            turn: Arc::new(Mutex::new(())),
            stats: Arc::new(Mutex::new(Stats {
                session: id.to_string(),
                ..Stats::default()
            })),
        };
        let i = r.list.len();
        r.list.push(h.clone());
        r.index.insert(id.to_string(), i);
        h
    }

    /// Runs `f` on conversation `h` on its monitor thread (see [`Monitors::run`]).
    ///
    /// # Errors
    /// [`MonitorGone`]: its monitor thread stopped.
    pub fn with<R: Send + 'static>(
        &self,
        h: &Handle,
        f: impl FnOnce(&mut Conversation) -> R + Send + 'static,
    ) -> Result<R, MonitorGone> {
        self.monitors.run(&h.id, &h.stats, f)
    }

    /// Every conversation's stats, in order of first appearance (`GET /trac/sessions`).
    pub fn sessions(&self) -> Vec<Stats> {
        let stats: Vec<Arc<Mutex<Stats>>> = {
            let r = self.registry.lock().unwrap_or_else(|e| e.into_inner());
            r.list.iter().map(|h| h.stats.clone()).collect()
        };
        stats
            .iter()
            .map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).clone())
            .collect()
    }

    /// The body of `GET /trac/sessions`: the properties, and each conversation's steps,
    /// violations and verdicts so far.
    pub fn sessions_json(&self) -> Value {
        json!({
            "intervene": self.opts.intervene.as_str(),
            "on_block": self.opts.on_block.as_str(),
            "samples": self.opts.samples,
            "predict": {"k": self.opts.predict.k, "n": self.opts.predict.n},
            "threshold": self.opts.threshold,
            "substitute_model": self.opts.substitute_model,
            "properties": self.properties(),
            "sessions": self.sessions(),
        })
    }
}

/// The session id of a chat request: header `X-Trac-Session` (`header`), else the request's
/// `user` field, else `conv-` and a hash (SHA-256, 16 hex digits) of the conversation's first
/// messages: the content of its first system (or developer) message and of its first user
/// message, which every later request of the conversation repeats. (Two conversations that
/// open with the same words share a session: give them a header.)
pub fn session_id(header: Option<&str>, request: &Value) -> String {
    if let Some(h) = header.map(str::trim).filter(|h| !h.is_empty()) {
        return h.to_string();
    }
    if let Some(u) = request
        .get("user")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|u| !u.is_empty())
    {
        return u.to_string();
    }
    let messages = request
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let first = |roles: &[&str]| {
        messages
            .iter()
            .find(|m| {
                m.get("role")
                    .and_then(Value::as_str)
                    .is_some_and(|r| roles.contains(&r))
            })
            .and_then(|m| m.get("content"))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let key = json!([first(&["system", "developer"]), first(&["user"])]).to_string();
    let digest = Sha256::digest(key.as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("conv-{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_the_header_else_the_user_else_a_hash_of_the_first_messages() {
        let first = json!({"user": "", "messages": [
            {"role": "system", "content": "be nice"},
            {"role": "user", "content": "hi"},
        ]});
        let later = json!({"messages": [
            {"role": "system", "content": "be nice"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": "book it"},
        ]});
        let other = json!({"messages": [
            {"role": "system", "content": "be nice"},
            {"role": "user", "content": "hello"},
        ]});
        let h = session_id(None, &first);
        assert!(h.starts_with("conv-") && h.len() == 5 + 16, "{h}");
        assert_eq!(session_id(None, &later), h);
        assert_ne!(session_id(None, &other), h);
        assert_eq!(session_id(Some(" s-1 "), &first), "s-1");
        assert_eq!(
            session_id(Some(""), &json!({"user": "u7", "messages": []})),
            "u7"
        );
        assert_eq!(session_id(Some("s-1"), &json!({"user": "u7"})), "s-1");
    }
}
