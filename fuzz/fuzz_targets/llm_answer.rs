//! LLM answers: the labeler's answer parser (`LlmLabeler::parse_answer`, the labels of a
//! model's JSON answer, for the propositions of airline.ron and textworld.ron) and the reader of
//! a server's chat-completion object (`ChatResponse::from_openai_json`). Invariant: every label
//! an answer gives is well-formed (`check_label`).
#![no_main]
use std::sync::{Arc, OnceLock};
use trac_core::names::check_label;
use trac_llm::model::{ChatModel, ChatRequest, ChatResponse, ModelError, Usage};
use trac_llm::{LlmLabeler, LlmLabelerConfig};
use trac_spec::spec::Spec;

/// A model that is never asked: only the answer parser runs.
struct Never;

impl ChatModel for Never {
    fn name(&self) -> &str {
        "never"
    }
    fn complete(&self, _: &ChatRequest) -> Result<ChatResponse, ModelError> {
        unreachable!("the fuzz target only parses answers")
    }
    fn usage(&self) -> Usage {
        Usage::default()
    }
}

fn labelers() -> &'static [LlmLabeler] {
    static CELL: OnceLock<Vec<LlmLabeler>> = OnceLock::new();
    CELL.get_or_init(|| {
        [
            include_str!("../../examples/specs/airline.ron"),
            include_str!("../../examples/specs/trucks.ron"),
        ]
        .iter()
        .map(|src| {
            let spec = Spec::from_str(src, "spec.ron").expect("the example spec parses");
            LlmLabeler::new(
                Arc::new(Never),
                spec.propositions.clone(),
                spec.case_sensitive,
                LlmLabelerConfig::default(),
            )
        })
        .collect()
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    for labeler in labelers() {
        if let Ok(labels) = labeler.parse_answer(s) {
            for l in &labels {
                if let Err(e) = check_label(l) {
                    panic!("answer {s:?} gives the malformed label {l:?}: {e}");
                }
            }
        }
    }
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(s) {
        let _ = ChatResponse::from_openai_json(&v);
    }
});
