//! A scripted Trucks agent with a known violation probability, for tests and demos.
//!
//! [`ScriptedTrucks`] is a [`ChatModel`] that reads the step history in its prompt (the
//! `Step N: ACTION` lines of [`crate::agent::AgentPrompt`]), replays it on a [`Trucks`]
//! environment, and answers the next action of a compliant plan (deliver package3, 2, 1, 5, 4
//! in that order, one at a time, always in area a1), except that each `LOAD ... into area a1` is
//! replaced, with probability `p`, by the same load into area a2, which violates exactly one
//! property of `examples/specs/trucks-5.ron` (`only_a1`). It complies (p = 0) when its prompt
//! carries the inject intervention's safety warning or the switch intervention's safe-model
//! instructions. Asked for a direct prediction, it answers `p` for `only_a1` and 0 otherwise.
//!
//! Draws are deterministic functions of the request's seed plus the sample index, and of the
//! messages (without a seed, of a call counter). `trac-scripted-agent P` (a binary of the root package `trac`) serves it
//! as a command model (`--model "cmd:trac-scripted-agent 0.3"`).

use crate::agent::{SAFE_MODEL_MARKER, STEP_PREFIX, WARNING_MARKER};
use crate::env::Environment;
use crate::trucks::{Place, Trucks, AREAS};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use trac_llm::model::UsageCounter;
use trac_llm::{ChatModel, ChatRequest, ChatResponse, Choice, ModelError, Role, Usage};

/// The scripted agent (see the module docs).
#[derive(Debug)]
pub struct ScriptedTrucks {
    p: f64,
    name: String,
    usage: UsageCounter,
    counter: AtomicU64,
}

impl ScriptedTrucks {
    /// An agent that loads into a2 instead of a1 with probability `p` (clamped to [0, 1]).
    pub fn new(p: f64) -> ScriptedTrucks {
        let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
        ScriptedTrucks {
            p,
            name: format!("scripted-trucks(p={p})"),
            usage: UsageCounter::default(),
            counter: AtomicU64::new(0),
        }
    }

    /// The violation probability.
    pub fn p(&self) -> f64 {
        self.p
    }

    /// The answer to one prompt; its draw is a function of `key` (the request's seed plus the
    /// sample index, as an OpenAI-compatible server sees it: sample `s` of a request seeded `x`
    /// is seeded `x + s`) and of the messages.
    pub fn answer(&self, system: &str, user: &str, key: u64) -> String {
        if system.contains("predict whether") {
            // One `- ID: rule` line per rule.
            let ids: Vec<String> = user
                .lines()
                .filter_map(|l| l.strip_prefix("- ")?.split_once(": ").map(|(id, _)| id))
                .map(|id| {
                    let p = if id == "only_a1" { self.p } else { 0.0 };
                    format!("\"{id}\": {p}")
                })
                .collect();
            return format!("{{{}}}", ids.join(", "));
        }
        let comply = system.starts_with(SAFE_MODEL_MARKER) || user.contains(WARNING_MARKER);
        let mut env = Trucks::new();
        for line in user.lines() {
            let Some(rest) = line.strip_prefix(STEP_PREFIX) else {
                continue;
            };
            let Some((num, action)) = rest.split_once(": ") else {
                continue;
            };
            if num.chars().all(|c| c.is_ascii_digit()) {
                let _ = env.step(action);
            }
        }
        let mut action = next_action(&env);
        if !comply && action.contains("into area a1") {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (key, system, user).hash(&mut h);
            let u = (splitmix(h.finish()) >> 11) as f64 / (1u64 << 53) as f64;
            if u < self.p {
                action = action.replace("into area a1", "into area a2");
            }
        }
        format!("I will do this next.\n$ACTION: {action}$")
    }
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The compliant plan's next action in `env`'s state: packages in the order 3, 2, 1, 5, 4.
pub fn next_action(env: &Trucks) -> String {
    let truck = env.truck();
    let Some(p) = [2usize, 1, 0, 4, 3]
        .into_iter()
        .find(|&p| !matches!(env.package(p), Place::Delivered(_)))
    else {
        return "DONE".into();
    };
    let goal = env.goal(p);
    match env.package(p) {
        Place::In(a) => {
            if truck != goal {
                return format!("DRIVE truck1 from l{} to l{}", truck + 1, goal + 1);
            }
            // Unload whatever is closer to the exit first.
            let (a, q) = (0..a)
                .find_map(|b| env.area(b).map(|q| (b, q)))
                .unwrap_or((a, p));
            format!(
                "UNLOAD package{} from area a{} at location l{}",
                q + 1,
                a + 1,
                truck + 1
            )
        }
        Place::At(l) if l == goal => format!("DELIVER package{} at location l{}", p + 1, l + 1),
        Place::At(l) => {
            if truck != l {
                return format!("DRIVE truck1 from l{} to l{}", truck + 1, l + 1);
            }
            let a = (0..AREAS).find(|&a| env.area(a).is_none()).unwrap_or(0);
            format!(
                "LOAD package{} into area a{} at location l{}",
                p + 1,
                a + 1,
                l + 1
            )
        }
        Place::Delivered(_) => "DONE".into(),
    }
}

impl ChatModel for ScriptedTrucks {
    fn name(&self) -> &str {
        &self.name
    }

    fn complete(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let text = |r: Role| {
            req.messages
                .iter()
                .filter(|m| m.role == r)
                .map(|m| m.content.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        };
        let (system, user) = (text(Role::System), text(Role::User));
        let seed = req
            .seed
            .unwrap_or_else(|| self.counter.fetch_add(1, Ordering::Relaxed));
        let choices: Vec<Choice> = (0..req.n.max(1))
            .map(|i| Choice {
                content: self.answer(
                    &system,
                    &user,
                    seed.wrapping_add((req.sample_offset + i) as u64),
                ),
                finish_reason: Some("stop".into()),
                logprobs: None,
            })
            .collect();
        let usage = Usage {
            prompt_tokens: ((system.len() + user.len()) / 4) as u64,
            completion_tokens: choices.iter().map(|c| c.content.len() as u64 / 4).sum(),
            requests: 1,
            ..Usage::default()
        };
        self.usage.add(usage);
        Ok(ChatResponse { choices, usage })
    }

    fn usage(&self) -> Usage {
        self.usage.get()
    }
}
