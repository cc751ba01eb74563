//! Budgets: `compile_within` gives up past a number of states, and a `SatChecker` with a
//! check budget answers "pending" (sound) past its work, giving up after `GIVE_UP_AFTER`
//! such checks; within the budgets, the answers are those of the unbounded procedures.

use trac_compile::sat::{SatChecker, GIVE_UP_AFTER};
use trac_compile::{compile, compile_within, CompileError, CompileOptions};
use trac_ltl::formula::Arena;

fn parse(arena: &mut Arena, src: &str) -> trac_ltl::formula::Formula {
    trac_ltl::parse_property(arena, src).unwrap().body
}

#[test]
fn a_table_over_the_budget_is_refused_with_the_numbers() {
    let mut arena = Arena::new();
    let f = parse(&mut arena, "G(a -> Y[40] b)");
    let e = compile_within(&mut arena, f, &CompileOptions::default(), 100).unwrap_err();
    match e {
        CompileError::TooLarge { limit, explored } => {
            assert_eq!(limit, 100);
            assert!(explored > 100, "{explored}");
        }
        other => panic!("{other}"),
    }
    assert!(e
        .to_string()
        .starts_with("the monitor automaton has more than 100 states"));
}

#[test]
fn within_the_budget_the_table_is_the_unbounded_one() {
    for src in [
        "G(count[4](a) <= 2)",
        "G(a -> X[3] b)",
        "F a & G !a",
        "G(b -> O[1:3] a)",
    ] {
        let mut a1 = Arena::new();
        let f1 = parse(&mut a1, src);
        let full = compile(&mut a1, f1, &CompileOptions::default()).unwrap();
        let mut a2 = Arena::new();
        let f2 = parse(&mut a2, src);
        let n = full.stats.explored.max(full.stats.explored_aux);
        let bounded = compile_within(&mut a2, f2, &CompileOptions::default(), n).unwrap();
        assert_eq!(full.table.to_json(), bounded.table.to_json(), "{src}");
        // One state fewer is refused.
        let mut a3 = Arena::new();
        let f3 = parse(&mut a3, src);
        assert!(
            compile_within(&mut a3, f3, &CompileOptions::default(), n - 1).is_err(),
            "{src}"
        );
    }
}

#[test]
fn a_check_over_its_budget_is_pending_and_the_checker_gives_up_after_three() {
    let mut arena = Arena::new();
    let big = parse(&mut arena, "G(a -> Y[40] b)");
    // Unsatisfiable, but only a search shows it (no lasso word decides it).
    let unsat = parse(&mut arena, "F c & G !c");
    let mut unbounded = SatChecker::new(&arena, big);
    let none = unbounded.initial_bits();
    assert_eq!(unbounded.verdict(&mut arena, unsat, &none), Some(false));

    let mut c = SatChecker::new(&arena, big).with_check_budget(1_000);
    let bits = c.initial_bits();
    assert_eq!(c.verdict(&mut arena, big, &bits), None);
    assert!(c.gave_up());
    // Within budget: decided as unbounded.
    assert_eq!(c.verdict(&mut arena, unsat, &none), Some(false));
    // Two more exhausted checks (other past bits), then none is tried: pending at once.
    let mut n = 1;
    let mut bits = bits.to_vec();
    for i in 0..bits.len() {
        if n == GIVE_UP_AFTER {
            break;
        }
        bits[i] = !bits[i];
        let before = c.explored();
        if c.verdict(&mut arena, big, &bits).is_none() && c.explored() > before {
            n += 1;
        }
    }
    assert_eq!(n, GIVE_UP_AFTER);
    let mut arena2 = arena.clone();
    let unsat2 = parse(&mut arena2, "F d & G !d");
    let before = c.explored();
    assert_eq!(c.verdict(&mut arena2, unsat2, &none), None);
    assert_eq!(c.explored(), before);
}

#[test]
fn clones_share_the_give_up_count() {
    let mut arena = Arena::new();
    let big = parse(&mut arena, "G(a -> Y[40] b)");
    let unsat = parse(&mut arena, "F c & G !c");
    let template = SatChecker::new(&arena, big).with_check_budget(1_000);
    // Cloned before any check, as each session of an audit plan clones its template.
    let mut first = template.clone();
    let mut second = template.clone();
    assert!(!second.gave_up());
    let mut bits = first.initial_bits().to_vec();
    let mut n = 0;
    for i in 0..bits.len() {
        if n == GIVE_UP_AFTER {
            break;
        }
        bits[i] = !bits[i];
        if first.verdict(&mut arena, big, &bits).is_none() {
            n += 1;
        }
    }
    assert_eq!(n, GIVE_UP_AFTER);
    // The other clone has given up too: pending at once, with no search.
    assert!(second.gave_up());
    let none = second.initial_bits();
    assert_eq!(second.verdict(&mut arena, unsat, &none), None);
    assert_eq!(second.explored(), 0);
    // An unrelated checker has not.
    let mut other = SatChecker::new(&arena, big).with_check_budget(1_000);
    assert_eq!(other.verdict(&mut arena, unsat, &none), Some(false));
}

#[test]
fn clones_and_fresh_checkers_of_the_same_property_share_their_verdicts() {
    use trac_ltl::compiler::VerdictSession;
    let mut arena = Arena::new();
    let p = parse(&mut arena, "G(a -> Y b)");
    // Unsatisfiable (`c` must hold and never hold): only a search shows it.
    let unsat = parse(&mut arena, "F c & G !c");
    let template = SatChecker::new(&arena, p);
    let mut first = template.clone();
    let none = first.initial_bits();
    assert_eq!(first.verdict(&mut arena, unsat, &none), Some(false));
    assert!(first.explored() > 0);
    // Another clone, in an arena of its own where the same residual has another handle.
    let mut arena2 = Arena::new();
    let _shift = parse(&mut arena2, "x & y & z");
    let p2 = parse(&mut arena2, "G(a -> Y b)");
    let unsat2 = parse(&mut arena2, "F c & G !c");
    assert_ne!(unsat, unsat2);
    let mut second = template.clone();
    assert_eq!(second.verdict(&mut arena2, unsat2, &none), Some(false));
    assert_eq!(
        second.explored(),
        0,
        "found in the shared verdicts, not searched"
    );
    // A restart of the same property (`fresh`) answers the same; a checker of its own searches.
    let mut again = VerdictSession::fresh(&template, &arena2, p2);
    assert_eq!(again.ltl3(&mut arena2, unsat2, &none), Some(false));
    let q = parse(&mut arena2, "G(a -> Y d)");
    let mut other = SatChecker::new(&arena2, q);
    assert_eq!(other.verdict(&mut arena2, unsat2, &none), Some(false));
    assert!(other.explored() > 0);
}
