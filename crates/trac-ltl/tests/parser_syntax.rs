//! Parser: precedence, Spot's lexing rules, parametric and quoted atoms, quantifiers.

use trac_ltl::parser::{parse, parse_property, MAX_DEPTH};
use trac_ltl::{Arena, Formula, Node};

fn p(a: &mut Arena, src: &str) -> Formula {
    parse(a, src).unwrap_or_else(|e| panic!("{}", e.render(src)))
}

/// Asserts that `x` and `y` parse to the same formula, and `x` differs from each of `not`.
#[track_caller]
fn same(x: &str, y: &str) {
    let mut a = Arena::new();
    let fx = p(&mut a, x);
    let fy = p(&mut a, y);
    assert_eq!(fx, fy, "`{x}` should parse as `{y}`");
}

#[track_caller]
fn differ(x: &str, y: &str) {
    let mut a = Arena::new();
    let fx = p(&mut a, x);
    let fy = p(&mut a, y);
    assert_ne!(fx, fy, "`{x}` should not parse as `{y}`");
}

fn atom_names(a: &Arena, f: Formula) -> Vec<String> {
    a.atoms(f)
        .into_iter()
        .map(|s| a.sym_name(s).to_string())
        .collect()
}

#[test]
fn binary_precedence_and_associativity() {
    same("a U b U c", "a U (b U c)");
    differ("a U b U c", "(a U b) U c");
    same("a -> b -> c", "a -> (b -> c)");
    differ("a -> b -> c", "(a -> b) -> c");
    same("a <-> b -> c", "a <-> (b -> c)");
    same("a -> b <-> c", "a -> (b <-> c)");
    same("a & b | c", "(a & b) | c");
    same("a | b & c", "a | (b & c)");
    // Spot: `%left OP_OR` then `%left OP_XOR`: xor binds tighter than `|`, looser than `&`.
    same("a xor b | c", "(a xor b) | c");
    differ("a xor b | c", "a xor (b | c)");
    same("a | b xor c", "a | (b xor c)");
    same("a xor b & c", "a xor (b & c)");
    same("a xor b xor c", "(a xor b) xor c");
    same("a & b U c", "a & (b U c)");
    same("a U b & c", "(a U b) & c");
    same("a W b R c M d S e", "a W (b R (c M (d S e)))");
    same("a S b U c", "a S (b U c)");
    same("a | b -> c & d", "(a | b) -> (c & d)");
}

#[test]
fn prefix_operators_bind_tightest() {
    same("!a U b", "(!a) U b");
    same("X a U b", "(X a) U b");
    same("G a & b", "(G a) & b");
    same("F p & G !p", "(F p) & (G (!p))");
    same("! G a", "!(G a)");
    same("Y a S b", "(Y a) S b");
    same("H a -> O b", "(H a) -> (O b)");
    differ("!a U b", "!(a U b)");
}

#[test]
fn glued_operator_letters_follow_spot() {
    same("GFa", "G(F(a))");
    same("Xb", "X(b)");
    same("FOO", "F(OO)");
    same("GXFoo", "G(X(F(oo)))");
    same("F!a", "F(!a)");
    same("G(a -> Xb)", "G(a -> X b)");
    same("X[]a", "X G a");
    same("F[]a", "F G a");
    let mut a = Arena::new();
    // Letters followed by a digit start an identifier.
    for name in ["X0", "F1", "G2x"] {
        let f = p(&mut a, name);
        assert_eq!(atom_names(&a, f), [name]);
    }
    // Other identifiers are read greedily.
    for name in [
        "aUb",
        "Ua",
        "xorb",
        "Ya",
        "Hello",
        "Ok",
        "T",
        "falsehood",
        "trueish",
        "a.b_c",
    ] {
        let f = p(&mut a, name);
        assert_eq!(atom_names(&a, f), [name], "{name}");
    }
    // After an operand, binary operator letters split (Spot's `not_prop`).
    same("a Ub", "a U b");
    same("(a)Ub", "a U b");
    same("(a)Sb", "a S b");
}

#[test]
fn constants() {
    let mut a = Arena::new();
    for t in ["true", "TRUE", "True", "1"] {
        assert_eq!(p(&mut a, t), Formula::TRUE, "{t}");
    }
    for t in ["false", "FALSE", "False", "0"] {
        assert_eq!(p(&mut a, t), Formula::FALSE, "{t}");
    }
    same("X 0", "X false");
    same("Xfalse", "X false");
}

#[test]
fn operator_spellings() {
    same("!a", "~a");
    same("a & b", "a && b");
    same("a & b", "a /\\ b");
    same("a & b", "a * b");
    same("a | b", "a || b");
    same("a | b", "a \\/ b");
    same("a | b", "a + b");
    same("a -> b", "a => b");
    same("a -> b", "a --> b");
    same("a <-> b", "a <=> b");
    same("a <-> b", "a <--> b");
    same("a xor b", "a ^ b");
    same("F a", "<> a");
    same("G a", "[] a");
    same("X a", "() a");
    same("a R b", "a V b");
    same("¬a ∧ b ∨ c", "!a & b | c");
    same("□◇a → ○b", "G F a -> X b");
    same("a ↔ b ⊕ c", "a <-> (b xor c)");
    same("Ⓧa", "X[!]a");
    same("X[!] a", "X [ ! ] a");
    same("X[3] a", "X X X a");
    same("X[2!] a", "X[!] X[!] a");
    same("X[0] a", "a");
    same("a=0 & b=1", "!a & b");
    same("a /* comment */ & /* nested /* comment */ */ b", "a & b");
    same("G\n(a\t&\r\nb)", "G(a & b)");
}

#[test]
fn quoted_and_parametric_atoms() {
    let mut a = Arena::new();
    let cases = [
        ("\"package 1 loaded\"", "package 1 loaded"),
        ("\"say \\\"hi\\\"\"", "say \"hi\""),
        ("\"back\\\\slash\"", "back\\slash"),
        ("\"G\"", "G"),
        ("take(item)", "take(item)"),
        ("load(package1)", "load(package1)"),
        ("delivered(\"red hot pepper\")", "delivered(red hot pepper)"),
        ("take( item )", "take(item)"),
        ("at(-1.5)", "at(-1.5)"),
        ("X0(a)", "X0(a)"),
        ("Ya(b)", "Ya(b)"),
    ];
    for (src, name) in cases {
        let f = p(&mut a, src);
        assert_eq!(atom_names(&a, f), [name], "{src}");
    }
    // Operators are not identifiers: `F(a)` applies F.
    same("F(a)", "F a");
    same("X(a)", "X a");
    same("Y(a)", "Y a");
    same("G(take(x) -> Fdrop(x))", "G(take(x) -> F drop(x))");
    same("take(item)", "\"take(item)\"");
    let f = p(&mut a, "take(item)");
    let Node::Atom(s) = a.node(f) else { panic!() };
    let parts = a.sym_parts(*s);
    assert_eq!(
        (parts.base.as_str(), parts.arg.as_deref()),
        ("take", Some("item"))
    );
}

#[test]
fn properties() {
    let mut a = Arena::new();
    let prop = parse_property(&mut a, "forall item: G(take(item) -> X examine(item))").unwrap();
    assert_eq!(prop.var.as_deref(), Some("item"));
    let body = p(&mut a, "G(take(item) -> X examine(item))");
    assert_eq!(prop.body, body);

    let prop = parse_property(&mut a, "  forall x :F p(x)").unwrap();
    assert_eq!(prop.var.as_deref(), Some("x"));

    let prop = parse_property(&mut a, "G a").unwrap();
    assert_eq!(prop.var, None);

    // `forall` is an ordinary atom unless a quantifier follows.
    for src in ["forall U b", "forall & b", "forall_x", "forall(x) | b"] {
        let prop = parse_property(&mut a, src).unwrap_or_else(|e| panic!("{}", e.render(src)));
        assert_eq!(prop.var, None, "{src}");
    }

    // Spans in the body are relative to the whole source.
    let e = parse_property(&mut a, "forall x: a &").unwrap_err();
    assert_eq!(e.message, "expected a formula after `&`");
    assert_eq!(e.span, 13..13);

    let e = parse_property(&mut a, "forall x G a").unwrap_err();
    assert_eq!(e.message, "expected `:` after `forall x`");
    assert_eq!(e.span, 9..10);

    let e = parse(&mut a, "forall x: G a").unwrap_err();
    assert_eq!(
        e.message,
        "a `forall` quantifier is only allowed in a property"
    );
    assert_eq!(e.span, 0..9);
}

#[test]
fn formulas_are_normalized_through_the_arena() {
    same("a & b & a", "b & a");
    same("!!a", "a");
    same("true U a", "F a");
    same("a W false", "G a");
    same("(a & b) & (c & d)", "a & (b & (c & d))");
}

#[test]
fn long_chains_and_deep_nesting() {
    let mut a = Arena::new();
    let chain = (0..20_000)
        .map(|i| format!("p{i}"))
        .collect::<Vec<_>>()
        .join(" & ");
    let f = p(&mut a, &chain);
    assert_eq!(a.node(f).operands().len(), 20_000);
    let parens = format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000));
    assert_eq!(p(&mut a, &parens), p(&mut a, "a"));

    let ok = format!("{}a", "X ".repeat(MAX_DEPTH - 1));
    assert!(parse(&mut a, &ok).is_ok());
    let deep = format!("{}a", "X ".repeat(MAX_DEPTH));
    let e = parse(&mut a, &deep).unwrap_err();
    assert!(e.message.contains("nested too deeply"), "{}", e.message);
    let until = (0..5000)
        .map(|i| format!("p{i}"))
        .collect::<Vec<_>>()
        .join(" U ");
    assert!(parse(&mut a, &until).is_err());
    let nots = format!("{}a", "!".repeat(1_000_000));
    assert!(parse(&mut a, &nots).is_err());
}
