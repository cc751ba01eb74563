//! Label syntax: the labels a trace gives (`take(knife)`, `loads(package1, a1)`), checked by
//! `check_label` and split by `split_atom_name`; the values rules and models produce
//! (`label_value`); name instantiation and the globs of `Tool` rules. Invariants:
//! - a well-formed label `base(values)` (no space or `:` in the base) splits into the two;
//! - an error's offset lies within the label;
//! - `label_value` gives values that make a well-formed label `p(value)` (as documented);
//! - `glob_match("*", t)` and `glob_match(t, t)` hold when `t` has no `?`/`*`.
#![no_main]
use trac_core::names::{
    check_label, glob_match, instantiate_name, instantiate_text, split_atom_name,
};
use trac_runtime::label::labeler::label_value;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    match check_label(s) {
        Ok(()) => {
            // `package 1(x)` and `exists p: load(p)` are plain names, not `base(value)`.
            let base_is_word = s
                .split_once('(')
                .is_some_and(|(b, _)| !b.contains([' ', ':']));
            if base_is_word {
                let (base, args) = split_atom_name(s)
                    .unwrap_or_else(|| panic!("well-formed {s:?} does not split"));
                assert!(!base.is_empty() && !args.is_empty(), "{s:?}");
            }
        }
        Err(e) => {
            assert!(e.offset <= s.len(), "offset {} in {s:?}", e.offset);
            assert!(!e.message.is_empty());
        }
    }
    for arity in 1..=3 {
        for (case_sensitive, drop_article) in [(false, false), (true, true)] {
            if let Some(v) = label_value(s, arity, case_sensitive, drop_article) {
                let label = format!("p({v})");
                if let Err(e) = check_label(&label) {
                    panic!("label_value({s:?}, {arity}) = {v:?} is not a label: {e}");
                }
            }
        }
    }
    let _ = instantiate_name(s, "x, y", "v, w");
    let _ = instantiate_text(s, "item", "knife");
    let (glob, text) = s.split_once('\n').unwrap_or((s, s));
    let _ = glob_match(glob, text);
    assert!(glob_match("*", text));
    if !text.contains(['?', '*']) {
        assert!(glob_match(text, text), "{text:?} does not match itself");
    }
});
