//! Issue 24's formula language in trac-ltl: Spot's bounded operators and their past
//! counterparts, `count(...)` and `end` expand to Spot's (and NuSMV's) core operators, print
//! back in their written form (a round trip), and read as English.

use std::collections::HashMap;
use trac_ltl::english::render;
use trac_ltl::parser::parse;
use trac_ltl::printer::print;
use trac_ltl::Arena;

fn same(sugar: &str, core: &str) {
    let mut a = Arena::new();
    let f = parse(&mut a, sugar).unwrap_or_else(|e| panic!("{}", e.render(sugar)));
    let g = parse(&mut a, core).unwrap_or_else(|e| panic!("{}", e.render(core)));
    assert_eq!(f, g, "`{sugar}` is `{}`, not `{core}`", print(&a, f));
}

#[test]
fn bounded_operators_expand_as_spot_does() {
    // Spot's `nested_unop_range`: `m - n` nested `X` under `n` more.
    same("F[1:3] a", "X(a | X(a | X a))");
    same("F[0:2] a", "a | X(a | X a)");
    same("F[2:2] a", "X X a");
    same("F[2..3] a", "X X(a | X a)");
    same("G[0:2] a", "a & X(a & X a)");
    same("G[1:2] a", "X(a & X a)");
    same("F[2:$] a", "X X F a");
    same("G[1:$] a", "X G a");
    same("F[0:$] a", "F a");
    same("F[1:2!] a", "X[!](a | X[!] a)");
    same("G[0:1!] a", "a & X[!] a");
    same("X[3] a", "X X X a");
    // Past counterparts: `Y` is false before the first step, `Z` true.
    same("Y[2] a", "Y Y a");
    same("Z[2] a", "Z Z a");
    same("O[0:2] a", "a | Y(a | Y a)");
    same("O[1:2] a", "Y(a | Y a)");
    same("H[0:2] a", "a & Z(a & Z a)");
    same("O[2:$] a", "Y Y O a");
    same("H[1:$] a", "Z H a");
    same("F[ 1 : 3 ] a", "F[1:3] a");
}

#[test]
fn counts_and_end_expand() {
    same("count(a) >= 1", "O a");
    same("count(a) >= 2", "O(a & Y O a)");
    same("count(a) >= 3", "O(a & Y O(a & Y O a))");
    same("count(a) > 1", "count(a) >= 2");
    same("count(a) <= 1", "!count(a) >= 2");
    same("count(a) < 2", "!count(a) >= 2");
    same("count(a) == 1", "count(a) >= 1 & count(a) <= 1");
    same("count(a) != 1", "!(count(a) >= 1 & count(a) <= 1)");
    same("count(a) >= 0", "true");
    same("count(a) < 0", "false");
    same("count(a & !b) >= 2", "O((a & !b) & Y O(a & !b))");
    // Window of 2 steps: at least 2 of them is `a` now and at the previous step.
    same("count[2](a) >= 2", "a & Y a");
    same("count[3](a) >= 1", "O[0:2] a");
    same("count[2](a) >= 3", "false");
    same("F(count[2](false) >= 3)", "false");
    same("end", "!X[!] true");
    same(
        "G(end -> count(x) <= 3)",
        "G(!X[!] true -> !O(x & Y O(x & Y O(x & Y O x))))",
    );
    // `count(x)` without a comparison stays a parametric proposition.
    let mut a = Arena::new();
    let f = parse(&mut a, "count(x) & G end_reached").unwrap();
    assert_eq!(print(&a, f), "count(x) & G end_reached");
    let f = parse(&mut a, "count(x) <--> \"end\" | F end").unwrap();
    assert_eq!(print(&a, f), "count(x) <-> \"end\" | F end");
}

#[test]
fn the_printer_writes_the_written_form_back() {
    for (src, printed) in [
        (
            "G(take(knife) -> F[1:4] cut)",
            "G(take(knife) -> F[1:4] cut)",
        ),
        ("F[2:5!] a", "F[2:5!] a"),
        ("G[0:3] !a", "G[0:3] !a"),
        ("G[2:$] a", "G[2:$] a"),
        ("X[3] a", "X[3] a"),
        ("X[2!] a", "X[2!] a"),
        ("Y[2] a", "Y[2] a"),
        ("Z[3] (a | b)", "Z[3](a | b)"),
        ("O[0:7] ack", "O[0:7] ack"),
        ("H[1:3] a", "H[1:3] a"),
        ("O[2:$] a", "O[2:$] a"),
        (
            "G(refund -> count(lookup) >= 2)",
            "G(refund -> count(lookup) >= 2)",
        ),
        ("G(count(send_email) <= 3)", "G(count(send_email) <= 3)"),
        ("G(count[5](search) < 3)", "G(count[5](search) <= 2)"),
        (
            "G(p -> count[4](a | b) >= 2)",
            "G(p -> count[4](a | b) >= 2)",
        ),
        ("F(end & count(a | b) >= 2)", "F(end & count(a | b) >= 2)"),
        // Single steps stay plain operators.
        ("X a | a", "a | Xa"),
        ("XFa", "XFa"),
        ("O a", "O a"),
    ] {
        let mut a = Arena::new();
        let f = parse(&mut a, src).unwrap_or_else(|e| panic!("{}", e.render(src)));
        let text = print(&a, f);
        assert_eq!(text, printed, "printing `{src}`");
        assert_eq!(parse(&mut a, &text).unwrap(), f, "`{text}` parses back");
    }
}

#[test]
fn bounded_operators_in_english() {
    let en = |src: &str| {
        let mut a = Arena::new();
        let f = parse(&mut a, src).unwrap();
        render(&a, f, &HashMap::new())
    };
    assert_eq!(
        en("G(take -> F[1:4] cut)"),
        "always, if `take` holds, then within 1 to 4 steps `cut` holds"
    );
    assert_eq!(
        en("F[1:4!] cut"),
        "within 1 to 4 steps (which must exist) `cut` holds"
    );
    assert_eq!(en("G[0:2] a"), "at every step 0 to 2 steps ahead `a` holds");
    assert_eq!(
        en("O[0:7] ack"),
        "at some step 0 to 7 steps back `ack` holds"
    );
    assert_eq!(
        en("H[2:$] a"),
        "at every step 2 or more steps back (if any) `a` holds"
    );
    assert_eq!(en("Y[2] a"), "2 steps ago `a` holds");
    assert_eq!(
        en("G(count[5](search) < 3)"),
        "always, at most 2 of the last 5 steps at which `search` holds"
    );
    assert_eq!(
        en("G(count(send) <= 3)"),
        "always, at most 3 steps so far at which `send` holds"
    );
    assert_eq!(
        en("G(end -> count(lookup) >= 2)"),
        "always, if this is the last step, then at least 2 steps so far at which `lookup` holds"
    );
}

/// Random nestings of the abbreviations and plain operators print and parse back to the same
/// formula.
#[test]
fn random_abbreviations_round_trip() {
    use quickcheck::{Gen, QuickCheck, TestResult};
    fn text(g: &mut Gen, depth: u8) -> String {
        let n = |g: &mut Gen| u32::from(u8::arbitrary(g) % 4);
        use quickcheck::Arbitrary;
        if depth == 0 {
            return ["a", "b", "end", "true"][usize::from(u8::arbitrary(g) % 4)].into();
        }
        let inner = text(g, depth - 1);
        let (lo, len) = (n(g), n(g));
        let past = !inner.contains('F') && !inner.contains('G') && !inner.contains('X');
        let past = past && !inner.contains("end");
        match u8::arbitrary(g) % 12 {
            0 => format!("F[{lo}:{}] ({inner})", lo + len),
            1 => format!("G[{lo}:{}!] ({inner})", lo + len),
            2 => format!("F[{lo}:$] ({inner})"),
            3 => format!("X[{lo}] ({inner})"),
            4 => format!("O[{lo}:{}] ({inner})", lo + len),
            5 => format!("H[{lo}:$] ({inner})"),
            6 => format!("Y[{lo}] ({inner})"),
            7 if past => format!("count[{}]({inner}) >= {lo}", len + 1),
            8 if past => format!("count({inner}) <= {lo}"),
            9 => format!("({inner}) & {}", text(g, depth - 1)),
            10 => format!("({inner}) | X {}", text(g, depth - 1)),
            _ => format!("!({inner})"),
        }
    }
    fn prop(seed: u64) -> TestResult {
        let mut g = Gen::new(8);
        let _ = seed; // quickcheck needs an argument; the text is drawn from a fresh `Gen`
        let src = text(&mut g, 3);
        let mut a = Arena::new();
        let f = match parse(&mut a, &src) {
            Ok(f) => f,
            Err(e) => return TestResult::error(e.render(&src)),
        };
        let printed = print(&a, f);
        match parse(&mut a, &printed) {
            Ok(g) if g == f => TestResult::passed(),
            Ok(g) => TestResult::error(format!(
                "`{src}` printed `{printed}`, which is `{}`",
                print(&a, g)
            )),
            Err(e) => TestResult::error(e.render(&printed)),
        }
    }
    QuickCheck::new()
        .tests(500)
        .quickcheck(prop as fn(u64) -> TestResult);
}
