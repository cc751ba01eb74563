//! Inputs found by the fuzz targets (`fuzz/`, issue 21) that crashed trac-core, kept as
//! regression tests: each once panicked.

use trac_core::names::instantiate_text;

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
