//! Measures the embedded model: load time, prompt evaluation and generation in tokens per
//! second, and scoring (labeling) throughput. `cargo run --release -p trac-embed --example
//! embed_speed [MODEL.gguf] [THREADS]` (default: the fetched model, 2 threads).

use std::time::Instant;
use trac_embed::engine::EngineConfig;
use trac_embed::EmbeddedModel;
use trac_llm::{ChatModel, ChatRequest, Message, ScoreRequest};

fn main() {
    let path = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| trac_embed::fetch::find_model(None).expect("the model"));
    let threads: i32 = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    let t = Instant::now();
    let cfg = EngineConfig {
        threads,
        ..EngineConfig::default()
    };
    let m = EmbeddedModel::load(&path, true, cfg).expect("load");
    println!("load: {:.2} s ({:?})", t.elapsed().as_secs_f64(), m.info());
    let long_user = "Agent log:\n".to_string()
        + &(1..=40)
            .map(|i| format!("Step: {i} Action: take item number {i} from the fridge\n"))
            .collect::<String>()
        + "Write a short story about this agent.";
    let req = ChatRequest {
        messages: vec![
            Message::system("You are a helpful assistant."),
            Message::user(long_user),
        ],
        max_tokens: Some(1),
        ..ChatRequest::default()
    };
    // Prompt evaluation: one token generated after a long prompt.
    let t = Instant::now();
    let r = m.complete(&req).expect("complete");
    let s = t.elapsed().as_secs_f64();
    println!(
        "prompt: {} tokens in {:.2} s = {:.0} tokens/s",
        r.usage.prompt_tokens,
        s,
        r.usage.prompt_tokens as f64 / s
    );
    // Generation: 128 tokens sampled.
    let req = ChatRequest {
        messages: vec![Message::user("Tell me a long story about a robot cook.")],
        max_tokens: Some(128),
        temperature: 0.8,
        seed: Some(1),
        logprobs: std::env::var("LP").ok().map(|_| 2),
        ..ChatRequest::default()
    };
    let t = Instant::now();
    let r = m.complete(&req).expect("complete");
    let s = t.elapsed().as_secs_f64();
    println!(
        "generation: {} tokens in {:.2} s = {:.1} tokens/s (prompt {} tokens included)",
        r.usage.completion_tokens,
        s,
        r.usage.completion_tokens as f64 / s,
        r.usage.prompt_tokens
    );
    // Scoring: 5 propositions on a shared context, 20 steps.
    let t = Instant::now();
    let mut tokens = 0;
    for step in 0..20 {
        let ctx = format!("Earlier steps: step {step}: take knife\nStep to label (step {}):\nchop purple potato with knife", step + 1);
        let prompts = [
            "the agent takes an item",
            "the agent examines an item",
            "the agent cuts something",
            "the agent drops something",
            "the agent goes somewhere",
        ]
        .iter()
        .map(|q| {
            vec![
                Message::system("Answer yes or no."),
                Message::user(format!(
                    "{ctx}\n\nQuestion: at the step to label, {q}? Answer yes or no."
                )),
            ]
        })
        .collect();
        let r = m
            .score(&ScoreRequest {
                prompts,
                choices: vec!["Yes".into(), "yes".into(), "No".into(), "no".into()],
                tag: None,
            })
            .expect("score");
        tokens += r.usage.prompt_tokens;
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "scoring: 20 steps x 5 propositions in {:.2} s = {:.2} steps/s ({} tokens evaluated, {:.0} tokens/s)",
        s,
        20.0 / s,
        tokens,
        tokens as f64 / s
    );
}
