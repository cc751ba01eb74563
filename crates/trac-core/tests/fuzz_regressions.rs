//! Inputs found by the fuzz targets (`fuzz/`, issue 21) that crashed trac-core, kept as
//! regression tests: each once panicked.

use trac_core::names::{glob_match, instantiate_text};

/// fuzz target `label`: a multi-byte character right before an atom's base (`\u{618}` is two
/// bytes) made `instantiate_text` slice inside it ("byte index 5 is not a char boundary").
#[test]
fn instantiate_text_after_a_multibyte_character() {
    assert_eq!(
        instantiate_text("take\u{618}(b))", "b", "knife"),
        "take\u{618}(b))"
    );
    // The base is what follows the last character that cannot be in one (`x` here).
    assert_eq!(
        instantiate_text("G(é(item) -> Xéx(item))", "item", "knife"),
        "G(é(item) -> Xéx(knife))"
    );
}

/// fuzz target `label` (input `*\0\0\0\0\0\0\0\x0c\0\0\0\0\0\0\0q`): a `*` of the glob facing a
/// `*` of the text was consumed as a literal, so `*` did not match `*...q` and `update_*` did not
/// match the tool name `update_*x`.
#[test]
fn glob_star_facing_a_star_of_the_text() {
    let text = "*\0\0\0\0\0\0\0\x0c\0\0\0\0\0\0\0q";
    assert!(glob_match("*", text));
    assert!(glob_match(text, text));
    assert!(glob_match("update_*", "update_*x"));
    assert!(glob_match("*b", "*ab"));
    assert!(!glob_match("*b", "*ba"));
}
