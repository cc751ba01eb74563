//! `trac-scripted-agent [P]`: the scripted Trucks agent of `trac_agent::scripted` (loads into
//! area a2 instead of a1 with probability P, default 0.3) as a command model: one
//! chat-completions request per line on stdin, one chat-completion object per line on stdout.
//! For tests and demos: `trac run --env trucks --model "cmd:trac-scripted-agent 0.3" ...`.
//!
//! `trac-scripted-agent --serve-env` instead serves the Trucks environment over the JSON-lines
//! environment protocol of `trac_agent::env` (`trac run --env-cmd "trac-scripted-agent
//! --serve-env"`): a reference implementation of that protocol.

use serde_json::json;
use std::io::{BufRead, Write};
use trac_agent::env::Environment;
use trac_agent::scripted::ScriptedTrucks;
use trac_agent::trucks::Trucks;
use trac_llm::{ChatModel, ChatRequest, Message, Role};

fn labels_map(env: &Trucks) -> serde_json::Value {
    let m: serde_json::Map<String, serde_json::Value> = env
        .state_labels()
        .into_iter()
        .map(|(k, v)| (k, json!(v)))
        .collect();
    serde_json::Value::Object(m)
}

fn serve_env() -> std::process::ExitCode {
    let mut env = Trucks::new();
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        let answer = match v["op"].as_str() {
            Some("reset") => {
                let obs = env
                    .reset(v["seed"].as_u64().unwrap_or(0))
                    .unwrap_or_default();
                json!({"observation": obs, "instructions": env.instructions(), "task": env.task(),
                       "noop": env.noop(), "state_labels": labels_map(&env)})
            }
            Some("step") => {
                let o = env
                    .step(v["action"].as_str().unwrap_or(""))
                    .unwrap_or_default();
                json!({"observation": o.observation, "reward": o.reward, "done": o.done,
                       "labels": o.labels, "state_labels": labels_map(&env)})
            }
            _ => json!({"error": format!("unknown request: {line}")}),
        };
        if writeln!(out, "{answer}").and_then(|_| out.flush()).is_err() {
            break;
        }
    }
    std::process::ExitCode::SUCCESS
}

/// Runs `trac-scripted-agent [P]` / `trac-scripted-agent --serve-env` (see the module docs)
/// with the process's arguments, stdin and stdout. Exit code 2 on bad arguments.
pub fn main() -> std::process::ExitCode {
    if std::env::args().nth(1).as_deref() == Some("--serve-env") {
        return serve_env();
    }
    let p = match std::env::args().nth(1).map(|a| a.parse::<f64>()) {
        None => 0.3,
        Some(Ok(p)) if (0.0..=1.0).contains(&p) => p,
        Some(_) => {
            eprintln!("usage: trac-scripted-agent [P]   (P: violation probability in [0, 1])");
            return std::process::ExitCode::from(2);
        }
    };
    let agent = ScriptedTrucks::new(p);
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("trac-scripted-agent: bad request: {e}");
                return std::process::ExitCode::from(2);
            }
        };
        let messages: Vec<Message> = v["messages"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|m| {
                        let role = match m["role"].as_str()? {
                            "system" => Role::System,
                            "assistant" => Role::Assistant,
                            _ => Role::User,
                        };
                        Some(Message {
                            role,
                            content: m["content"].as_str()?.to_string(),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        // The request's seed is already offset by its first sample's index.
        let req = ChatRequest {
            messages,
            n: v["n"].as_u64().unwrap_or(1).max(1) as usize,
            seed: v["seed"].as_u64(),
            ..ChatRequest::default()
        };
        let resp = match agent.complete(&req) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("trac-scripted-agent: {e}");
                return std::process::ExitCode::from(2);
            }
        };
        if writeln!(out, "{}", resp.to_openai_json(agent.name()))
            .and_then(|_| out.flush())
            .is_err()
        {
            break;
        }
    }
    std::process::ExitCode::SUCCESS
}
