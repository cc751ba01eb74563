//! The chat template of an embedded model: a GGUF file without one is prompted in ChatML, and
//! trac says so.

use std::path::Path;

/// The line printed on stderr when the GGUF file at `path` has no chat template, so that its
/// prompts are rendered in ChatML: a base (not instruction-tuned) model, such as PyPI's
/// Gemma-3-270M GGUF, was never trained on it, and its labels are then likely poor.
pub fn chatml_fallback_warning(path: &Path) -> String {
    format!(
        "warning: {}: the model has no chat template; its prompts use ChatML, which a base (not instruction-tuned) model was not trained on, so its labels may be poor (label-eval measures them)",
        path.display()
    )
}
