//! The threads that run the monitors. A monitor of the library is not `Send` (complete
//! progression's satisfiability sessions share memo tables by `Rc`), so each conversation lives
//! on one monitor thread for its whole life, and the threads that serve HTTP requests send it
//! work ([`Monitors::run`]): a conversation's steps are checked and committed on its thread,
//! in order. Conversations are spread over the threads by a hash of their session id; each
//! thread has its own [`Supervisor`] built from the specs on that thread (the compiled tables
//! come from the compiler's cache, so nothing is compiled twice), forked per conversation.
//! Work on the monitors takes microseconds per step; no monitor thread ever waits on the
//! upstream.

use crate::conversation::{Conversation, Stats};
use crate::options::GatewayError;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::mpsc::{channel, sync_channel, Sender};
use std::sync::{Arc, Mutex};
use trac_agent::supervisor::{PropertyMeta, Supervisor, SupervisorOptions};
use trac_spec::spec::CheckedSpec;

/// Work for a monitor thread.
type Job = Box<dyn FnOnce(&mut Shard) + Send>;

/// What one monitor thread owns.
struct Shard {
    template: Supervisor,
    specs: Arc<[CheckedSpec]>,
    conversations: HashMap<String, Conversation>,
}

/// A monitor thread stopped (it panicked): the conversations it held are lost.
#[derive(Debug, thiserror::Error)]
#[error("the monitor thread of session `{session}` stopped")]
pub struct MonitorGone {
    /// The session whose work could not be done.
    pub session: String,
}

/// The monitor threads (they end when this is dropped).
pub struct Monitors {
    shards: Vec<Sender<Job>>,
    properties: Vec<PropertyMeta>,
    fallbacks: Vec<trac_runtime::audit::Fallback>,
}

fn supervisor(specs: &[CheckedSpec]) -> Result<Supervisor, GatewayError> {
    Ok(Supervisor::new(
        specs,
        &SupervisorOptions {
            reset: true,
            session: Some("template".into()),
        },
    )?)
}

impl Monitors {
    /// `threads` monitor threads (at least one) for every property of `specs` (compiled
    /// monitors, TRAC_R, as `trac audit` runs them by default).
    ///
    /// # Errors
    /// The specs cannot be monitored.
    pub fn start(specs: &[CheckedSpec], threads: usize) -> Result<Monitors, GatewayError> {
        let template = supervisor(specs)?;
        let properties = template.properties().to_vec();
        let fallbacks = template.fallbacks().to_vec();
        let specs: Arc<[CheckedSpec]> = specs.to_vec().into();
        let mut shards = Vec::new();
        for _ in 0..threads.max(1) {
            let (tx, rx) = channel::<Job>();
            let (ready_tx, ready_rx) = sync_channel::<Result<(), GatewayError>>(1);
            let specs = specs.clone();
            std::thread::spawn(move || {
                let mut shard = match supervisor(&specs) {
                    Ok(template) => Shard {
                        template,
                        specs: specs.clone(),
                        conversations: HashMap::new(),
                    },
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok(()));
                for job in rx {
                    job(&mut shard);
                }
            });
            match ready_rx.recv() {
                Ok(r) => r?,
                Err(_) => {
                    return Err(GatewayError::Monitors(
                        "a monitor thread stopped while starting".into(),
                    ))
                }
            }
            shards.push(tx);
        }
        Ok(Monitors {
            shards,
            properties,
            fallbacks,
        })
    }

    /// The monitored properties, in spec order.
    pub fn properties(&self) -> &[PropertyMeta] {
        &self.properties
    }

    /// The properties run by progression because their table is over the state budget
    /// ([`Supervisor::fallbacks`]).
    pub fn fallbacks(&self) -> &[trac_runtime::audit::Fallback] {
        &self.fallbacks
    }

    /// Runs `f` on conversation `session` (created on first use, its stats kept in `stats`) on
    /// its monitor thread, and returns what it returned.
    ///
    /// # Errors
    /// [`MonitorGone`]: that thread stopped.
    pub fn run<R: Send + 'static>(
        &self,
        session: &str,
        stats: &Arc<Mutex<Stats>>,
        f: impl FnOnce(&mut Conversation) -> R + Send + 'static,
    ) -> Result<R, MonitorGone> {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        session.hash(&mut h);
        let shard = &self.shards[(h.finish() % self.shards.len() as u64) as usize];
        let (tx, rx) = sync_channel::<R>(1);
        let id = session.to_string();
        let stats = stats.clone();
        let job: Job = Box::new(move |s: &mut Shard| {
            let (template, specs) = (&s.template, &s.specs);
            let c = s
                .conversations
                .entry(id.clone())
                .or_insert_with(|| Conversation::new(&id, template, specs.clone(), stats));
            let _ = tx.send(f(c));
        });
        let gone = || MonitorGone {
            session: session.to_string(),
        };
        shard.send(job).map_err(|_| gone())?;
        rx.recv().map_err(|_| gone())
    }
}
