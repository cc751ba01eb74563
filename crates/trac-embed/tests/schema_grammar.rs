//! `local-json` answers follow the labeler's own answer schema: the schemas the bundled specs
//! give become grammars (without the feature `embed`: the translation is a pure function).

use std::path::Path;
use std::sync::Arc;
use trac_embed::grammar::{grammar_for, json_schema_to_gbnf};
use trac_llm::labeler::{AnswerFormat, LlmLabeler, LlmLabelerConfig};
use trac_llm::model::{ChatModel, ChatRequest, ChatResponse, ModelError, ResponseFormat, Usage};
use trac_spec::spec::Spec;

/// Never asked: the labeler is only built, for its schema.
struct Unused;

impl ChatModel for Unused {
    fn name(&self) -> &str {
        "unused"
    }
    fn complete(&self, _req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        unreachable!("only the schema is read")
    }
    fn usage(&self) -> Usage {
        Usage::default()
    }
}

fn schema_of(spec: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/specs")
        .join(spec);
    let spec = Spec::from_path(&path).unwrap();
    let config = LlmLabelerConfig {
        answer_format: AnswerFormat::JsonSchema,
        ..LlmLabelerConfig::default()
    };
    LlmLabeler::new(Arc::new(Unused), spec.propositions, false, config)
        .answer_schema()
        .clone()
}

#[test]
fn the_bundled_specs_answer_schemas_become_grammars() {
    // Trucks: every proposition a required key, in spec order (rule names: `_` made `-`, as
    // llama.cpp names them); `loads(pkg, area)` a list of at
    // most 8 pairs.
    let g = json_schema_to_gbnf(&schema_of("trucks.ron")).unwrap();
    let root = g.lines().next().unwrap();
    assert!(root.starts_with("root ::= \"{\" space "), "{root}");
    let keys: Vec<&str> = root
        .split_whitespace()
        .filter(|w| w.ends_with("-kv"))
        .collect();
    let spec = Spec::from_path(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/specs/trucks.ron"),
    )
    .unwrap();
    let want: Vec<String> = spec
        .propositions
        .iter()
        .map(|p| format!("{}-kv", p.name.replace('_', "-")))
        .collect();
    assert_eq!(keys, want);
    assert!(
        g.lines()
            .any(|l| l == r#"loads-item ::= "[" space string ("," space string){1} "]" space"#),
        "{g}"
    );
    assert!(
        g.lines()
            .any(|l| l
                == r#"loads ::= "[" space (loads-item ("," space loads-item){0,7})? "]" space"#),
        "{g}"
    );
    // TextWorld, through the request's answer format as the engine reads it.
    let s = schema_of("textworld.ron");
    let g = grammar_for(&ResponseFormat::JsonSchema(s))
        .unwrap()
        .unwrap();
    assert!(
        g.starts_with(
            "root ::= \"{\" space take-kv \",\" space examine-kv \",\" space cut-kv \",\" space drop-kv \",\" space go-kv \"}\" space\n"
        ),
        "{g}"
    );
}
