//! The LTL formula parser (`trac_ltl::parse_property`, `parse`), with invariants:
//! - an error's span lies within the input and its rendering does not panic;
//! - printer round trip: `parse(print(f))` is `f` again (the same handle in the same arena);
//! - the English rendering, the past-operator check and a few progression steps do not panic.
#![no_main]
use std::collections::HashMap;
use trac_ltl::formula::{Arena, Formula};
use trac_ltl::printer::{print, print_with_quantifier};
use trac_ltl::progress::{progress, validate, PastState};
use trac_ltl::{english, parse, parse_property};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let mut arena = Arena::new();
    match parse_property(&mut arena, src) {
        Ok(prop) => {
            let printed = print_with_quantifier(&arena, prop.var.as_deref(), prop.body);
            let again = parse_property(&mut arena, &printed)
                .unwrap_or_else(|e| panic!("printed {printed:?} does not parse: {e}"));
            assert_eq!(again.var, prop.var, "printed {printed:?}");
            assert_eq!(again.body, prop.body, "printed {printed:?}");
            exercise(&mut arena, prop.body);
        }
        Err(e) => check_error(src, &e),
    }
    // The unquantified entry point agrees on formulas without `forall`.
    let mut arena = Arena::new();
    match parse(&mut arena, src) {
        Ok(f) => {
            let printed = print(&arena, f);
            let again = parse(&mut arena, &printed)
                .unwrap_or_else(|e| panic!("printed {printed:?} does not parse: {e}"));
            assert_eq!(again, f, "printed {printed:?}");
        }
        Err(e) => check_error(src, &e),
    }
});

fn check_error(src: &str, e: &trac_ltl::ParseError) {
    assert!(
        e.span.start <= e.span.end && e.span.end <= src.len(),
        "span {:?} outside a {}-byte input: {}",
        e.span,
        src.len(),
        e.message
    );
    assert!(!e.message.is_empty());
    let _ = e.render(src);
}

/// The English rendering, the past check, then four progression steps under a fixed valuation
/// (symbols of even index hold), stopping at a verdict.
fn exercise(arena: &mut Arena, f: Formula) {
    let _ = english::render(arena, f, &HashMap::new());
    if validate(arena, f).is_err() {
        return;
    }
    let mut past = PastState::new(arena, f);
    let holds = |s: trac_ltl::Sym| s.index().is_multiple_of(2);
    let mut g = f;
    for _ in 0..4 {
        past.step(arena, &holds);
        g = progress(arena, g, &holds, &past);
        if g == Formula::TRUE || g == Formula::FALSE {
            break;
        }
    }
}
