//! Parser errors: messages, spans, caret rendering, and fuzzing (never panics).

use quickcheck::{Arbitrary, Gen, QuickCheck};
use trac_ltl::parser::{parse, parse_property, ParseError};
use trac_ltl::printer::print;
use trac_ltl::Arena;

fn err(src: &str) -> ParseError {
    let mut a = Arena::new();
    match parse(&mut a, src) {
        Ok(f) => panic!("`{src}` parsed as `{}`", print(&a, f)),
        Err(e) => e,
    }
}

#[track_caller]
fn check(src: &str, message: &str, span: std::ops::Range<usize>) {
    let e = err(src);
    assert_eq!(
        (e.message.as_str(), e.span.clone()),
        (message, span),
        "for `{src}`"
    );
}

#[test]
fn messages_and_spans() {
    check("G (a & )", "expected a formula after `&`", 7..8);
    check("a &", "expected a formula after `&`", 3..3);
    check("a && ", "expected a formula after `&&`", 4..4);
    check("G", "expected a formula after `G`", 1..1);
    check("X[!]", "expected a formula after `X[!]`", 4..4);
    check("a & & b", "expected a formula after `&`", 4..5);
    check("( & b)", "expected a formula after `(`", 2..3);
    check("& b", "expected a formula before `&`", 0..1);
    check("", "empty formula", 0..0);
    check("  /* only a comment */ ", "empty formula", 0..0);
    check("(a & b", "unclosed parenthesis", 0..1);
    check("G((a) & b", "unclosed parenthesis", 1..2);
    check("a & b)", "unexpected `)`", 5..6);
    check(")", "unexpected `)`", 0..1);
    check(
        "a = b",
        "a comparison is only allowed in a quantified property (not in an `exists` body), between its variables or a variable and a value (`forall a, b: G(sent_to(a) & owner(b) & a != b -> ...)`)",
        0..5,
    );
    check("a == b", "unknown operator `==`", 2..4);
    check("a == b", "unknown operator `==`", 2..4);
    check("a <= b", "unknown operator `<=`", 2..4);
    check("a - b", "unknown operator `-`", 2..3);
    check("{a} |-> b", "unknown operator `{`", 0..1);
    check("\"abc", "unterminated string", 0..4);
    check("a & \"x\\\"", "unterminated string", 4..8);
    check("take(\"abc) & b", "unterminated string", 5..14);
    check("a b", "missing binary operator before `b`", 2..3);
    check("a G b", "missing binary operator before `G`", 2..3);
    check(
        "take (item)",
        "missing binary operator before `(` (a parametric proposition is written without a \
         space: `take(...)`)",
        5..6,
    );
    check("take()", "expected an argument after `take(`", 5..6);
    check(
        "take(a b)",
        "expected `)` or `,` after an argument of `take(`",
        7..8,
    );
    check(
        "take(a",
        "expected `)` or `,` after an argument of `take(`",
        6..6,
    );
    check("caf\u{e9}", "unexpected character `\u{e9}` (atomic propositions with such characters must be written in double quotes)", 3..5);
    check("12", "`12` is not an atomic proposition: names cannot start with a digit (write it in double quotes: `\"12\"`)", 0..2);
    check("(a)=0", "`=0` can only follow an atomic proposition", 3..5);
    check("a /* b", "unclosed comment", 2..4);
    check(
        "F[2] a",
        "`F[n:m]` expects two bounds (`F[n:m]`, or `F[n:$]` for no upper bound)",
        0..4,
    );
    check(
        "G[4:2] a",
        "empty range `[4:2]`: the upper bound is below the lower",
        1..5,
    );
    check(
        "F[1:999] a",
        "a step bound too large: 999 (at most 256)",
        4..7,
    );
    check("F[1:x] a", "expected a number (a step bound)", 4..5);
    check(
        "F[1:2 a",
        "malformed bound: expected `[n]`, `[n:m]`, `[n:$]`, or one of them with `!]`",
        0..7,
    );
    check(
        "O[3] a",
        "`O[n:m]` expects two bounds (`O[n:m]`, or `O[n:$]` for no bound)",
        0..4,
    );
    check("Y[1:2] a", "`Y[n]` takes one bound", 0..6);
    check(
        "O[0:2!] a",
        "a past operator has no strong form (`!]`): `Y` is already false before the first step and `Z` true",
        0..7,
    );
    check(
        "count(a) >= 300",
        "a count too large: 300 (at most 256)",
        12..15,
    );
    // Past u64: shown as written, not as the saturated 18446744073709551615.
    check(
        "count[99999999999999999999](a) > 1",
        "a window too large: 99999999999999999999 (at most 256)",
        6..26,
    );
    check("count(a) >=", "expected a number (a count)", 11..11);
    check("count[0](a) >= 1", "a window of 0 steps", 5..7);
    check(
        "count[3](a)",
        "expected a comparison (`>=`, `>`, `<=`, `<`, `==`, `!=`) after `count[w](...)`",
        11..11,
    );
    check(
        "count(F a) >= 2",
        "what `count(...)` counts must be past-time (it counts the steps seen so far), but it has the future operator in `Fa`",
        6..9,
    );
    check("count(a & ) >= 2", "expected a formula after `&`", 9..9);
    let deep = format!("{}a{}", "count(".repeat(40), ") >= 1".repeat(40));
    let e = err(&deep);
    assert_eq!(
        e.message,
        "`count(...)` nested too deeply (more than 32 levels)"
    );
    let deep = format!("{}a{}", "count(".repeat(20), ") >= 30".repeat(20));
    assert_eq!(
        err(&deep).message,
        "formula is nested too deeply (more than 1000 levels)"
    );
    check(
        "X[a] b",
        "malformed `X[...]`: expected `X[!]`, `X[n]` or `X[n!]`",
        0..3,
    );
    check(
        "X[99999999999] b",
        "repetition count too large (at most 1000)",
        2..13,
    );
    check("Falsehood", "missing binary operator before `hood`", 5..9);
    check("U", "expected a formula before `U`", 0..1);
    check("a U", "expected a formula after `U`", 3..3);
}

#[test]
fn render_single_line() {
    let src = "G (a & )";
    assert_eq!(
        err(src).render(src),
        "error: expected a formula after `&`\n  |\n1 | G (a & )\n  |        ^"
    );
    let src = "a == b";
    assert_eq!(
        err(src).render(src),
        "error: unknown operator `==`\n  |\n1 | a == b\n  |   ^^"
    );
    let src = "";
    assert_eq!(
        err(src).render(src),
        "error: empty formula\n  |\n1 |\n  | ^"
    );
}

#[test]
fn render_multi_line() {
    let src = "G (a &\n   ) | b";
    assert_eq!(
        err(src).render(src),
        "error: expected a formula after `&`\n  |\n2 |    ) | b\n  |    ^"
    );
    // The end-of-input caret points just after the last token, not at a trailing newline.
    let src = "G (a &\n\n";
    assert_eq!(
        err(src).render(src),
        "error: expected a formula after `&`\n  |\n1 | G (a &\n  |       ^"
    );
    // A span running past its line is underlined to the end of the line; CRLF is trimmed (the
    // `\r` gets no caret).
    let src = "a & \"open\r\nstring";
    assert_eq!(
        err(src).render(src),
        "error: unterminated string\n  |\n1 | a & \"open\n  |     ^^^^^"
    );
    // Line numbers widen the gutter.
    let src = format!("{}a &&& b", "\n".repeat(11));
    assert_eq!(
        err(&src).render(&src),
        "error: expected a formula after `&&`\n   |\n12 | a &&& b\n   |     ^"
    );
}

#[test]
fn render_counts_chars_not_bytes() {
    let src = "\"π ≈ 3\" & (\"é\" | )";
    assert_eq!(
        err(src).render(src),
        "error: expected a formula after `|`\n  |\n1 | \"π ≈ 3\" & (\"é\" | )\n  |                  ^"
    );
    let src = "\"日本\" & ¬ == b";
    assert_eq!(
        err(src).render(src),
        "error: unknown operator `==`\n  |\n1 | \"日本\" & ¬ == b\n  |          ^^"
    );
    // Tabs before the caret are kept so the caret lines up.
    let src = "\ta\t& )";
    assert_eq!(
        err(src).render(src),
        "error: expected a formula after `&`\n  |\n1 | \ta\t& )\n  | \t \t  ^"
    );
}

#[test]
fn render_is_robust_to_bad_spans() {
    let e = ParseError {
        message: "m".into(),
        span: 7..100,
    };
    assert_eq!(e.render("ab"), "error: m\n  |\n1 | ab\n  |   ^");
    let e = ParseError {
        message: "m".into(),
        span: std::ops::Range { start: 2, end: 1 },
    };
    assert_eq!(e.render("é"), "error: m\n  |\n1 | é\n  |  ^");
    assert_eq!(e.to_string(), "m at 2..1");
}

/// Checks the invariants of one parse attempt: no panic, spans inside the input and on char
/// boundaries, rendering works, and successful parses survive a print/parse round trip.
fn parse_is_total(src: &str) -> bool {
    let mut a = Arena::new();
    for quantified in [false, true] {
        let r = if quantified {
            parse_property(&mut a, src).map(|p| p.body)
        } else {
            parse(&mut a, src)
        };
        match r {
            Ok(f) => {
                let printed = print(&a, f);
                match parse(&mut a, &printed) {
                    Ok(g) if g == f => {}
                    other => panic!("`{src}` printed as `{printed}` reparsed as {other:?}"),
                }
            }
            Err(e) => {
                let s = &e.span;
                assert!(s.start <= s.end && s.end <= src.len(), "{e:?} for {src:?}");
                assert!(src.is_char_boundary(s.start) && src.is_char_boundary(s.end));
                let r = e.render(src);
                assert!(r.starts_with("error: ") && r.contains('^'));
            }
        }
    }
    true
}

/// Strings made of the formula language's tokens, so the fuzzer reaches deep parser states.
#[derive(Clone, Debug)]
struct Soup(String);

const PIECES: &[&str] = &[
    "a",
    "b",
    "take(x)",
    "take(",
    "\"q q\"",
    "\"",
    "\\",
    "(",
    ")",
    "()",
    " ",
    "\n",
    "!",
    "&",
    "&&",
    "|",
    "->",
    "<->",
    "<>",
    "[]",
    "xor",
    "^",
    "X",
    "X[!]",
    "X[",
    "]",
    "F",
    "G",
    "U",
    "W",
    "R",
    "V",
    "M",
    "S",
    "Y",
    "Z",
    "O",
    "H",
    "true",
    "False",
    "0",
    "1",
    "=0",
    "=",
    "<",
    "-",
    "/*",
    "*/",
    "forall x:",
    "forall",
    ":",
    "é",
    "日",
    "\t",
    "Fa",
    "GFa",
    "aUb",
    "X0",
    "2",
    ".",
    "_",
];

impl Arbitrary for Soup {
    fn arbitrary(g: &mut Gen) -> Soup {
        let n = usize::arbitrary(g) % 16;
        Soup((0..n).map(|_| *g.choose(PIECES).unwrap_or(&"a")).collect())
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Soup>> {
        Box::new(self.0.shrink().map(Soup))
    }
}

#[test]
fn fuzz_arbitrary_strings_never_panic() {
    fn owned(s: String) -> bool {
        parse_is_total(&s)
    }
    QuickCheck::new()
        .tests(5000)
        .quickcheck(owned as fn(String) -> bool);
}

#[test]
fn fuzz_token_soup_never_panics() {
    fn soup(s: Soup) -> bool {
        parse_is_total(&s.0)
    }
    QuickCheck::new()
        .tests(20_000)
        .quickcheck(soup as fn(Soup) -> bool);
}

/// Found by the `formula` fuzz target: an error at the end of an unfinished `count[w` pointed
/// one byte past the input.
#[test]
fn an_unfinished_count_window_points_inside_the_input() {
    for src in ["count[ 1", "count[1]", "count[1", "count[2]x", "count[ 1 é"] {
        let mut a = trac_ltl::Arena::new();
        let e = trac_ltl::parse(&mut a, src).unwrap_err();
        assert!(
            e.span.end <= src.len(),
            "{src:?}: {:?} {}",
            e.span,
            e.message
        );
        assert!(src.is_char_boundary(e.span.start) && src.is_char_boundary(e.span.end));
        let _ = e.render(src);
    }
}

/// Found by the `formula` fuzz target: nested abbreviations whose steps add up past the largest
/// bound printed as one abbreviation (`Y[260] Y2`) that does not parse back.
#[test]
fn nested_bounds_past_the_largest_print_back_as_parsable_formulas() {
    for src in [
        "Y[238] Y[22] Y2",
        "X[200] X[100] a",
        "X[256] F[0:3] a",
        "Z[256] Z[256] Z b",
        "F[250:256] F[0:9] a",
        // The `formula` fuzz target: printed `X[256] X[256] X[256] G[227:$](...)`, which
        // counted deeper than the formula it came from.
        "X[995]G(look_around -> X !lookb_around)",
    ] {
        let mut a = trac_ltl::Arena::new();
        let f = trac_ltl::parse(&mut a, src).unwrap();
        let printed = trac_ltl::printer::print(&a, f);
        let again = trac_ltl::parse(&mut a, &printed)
            .unwrap_or_else(|e| panic!("{src}: printed {printed:?} does not parse: {e}"));
        assert_eq!(again, f, "{src}: printed {printed:?}");
    }
}

/// Found by the `formula` fuzz target: a count of a conjunction (`count(a & b)`, whose
/// expansion flattens the body into the `&` beside `Y O(...)`) printed expanded, and with a
/// large count and bounds the expansion was too deep to parse back.
#[test]
fn counts_of_conjunctions_print_back_as_counts() {
    for (src, printed) in [
        ("count(a & b) >= 3", "count(a & b) >= 3"),
        ("G(count(a & b) < 3)", "G(count(a & b) <= 2)"),
        ("count(a*b*c) >= 3", "count(a & b & c) >= 3"),
        ("count(a & Y b) >= 2", "count(a & Y b) >= 2"),
        (
            "FX[255]G(count(sec*_e*mnaoili) <242)",
            "FG[255:$](count(sec & _e & mnaoili) <= 241)",
        ),
    ] {
        let mut a = trac_ltl::Arena::new();
        let f = trac_ltl::parse(&mut a, src).unwrap();
        assert_eq!(trac_ltl::printer::print(&a, f), printed, "{src}");
        assert_eq!(trac_ltl::parse(&mut a, printed).unwrap(), f, "{src}");
    }
}

/// Found by the `formula` fuzz target: a quoted atom named like a comparison (`"=(a, b)"`)
/// printed back as the comparison `a = b`, which does not parse outside a quantifier.
#[test]
fn a_quoted_atom_named_like_a_comparison_is_refused() {
    for src in ["\"=(a, b)\"", "G(\"=(666all -, uf)\" -> p)"] {
        let mut a = trac_ltl::Arena::new();
        let e = trac_ltl::parse(&mut a, src).unwrap_err();
        assert!(
            e.message.contains("internal name of a comparison"),
            "{}",
            e.message
        );
        assert!(e.span.end <= src.len() && src[e.span.clone()].starts_with('"'));
    }
    // Other quoted names with `=` stay atoms.
    let mut a = trac_ltl::Arena::new();
    assert!(trac_ltl::parse(&mut a, "\"a = b\" & \"=x\" & \"=(a)\"").is_ok());
}

/// Found by the `formula` fuzz target: printing an `exists` body re-parsed the `exists` atoms
/// nested in it, and so on down, so nested quantifiers took exponential time (a dozen levels:
/// 27 s). Thirty levels finish only with the memo (without it, a run of this test would not
/// end); both a formula that parses and one with an error after the quantifiers.
#[test]
fn nested_exists_quantifiers_parse_in_polynomial_time() {
    let mut nested = String::from("q(a)");
    for _ in 0..30 {
        nested = format!("(exists p: !l(p) -> !Y({nested}) | Y l(p))");
    }
    let mut a = trac_ltl::Arena::new();
    let f = trac_ltl::parse(&mut a, &format!("G({nested})"));
    assert!(f.is_ok(), "{:?}", f.err().map(|e| e.message));
    let e = trac_ltl::parse(&mut a, &format!("G(({nested})")).unwrap_err();
    assert!(e.message.contains("unclosed"), "{}", e.message);
}
