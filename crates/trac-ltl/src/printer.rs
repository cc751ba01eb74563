//! Printer in Spot's LTL syntax, with minimal parentheses.
//!
//! [`print()`] writes `!`, `&`, `|`, `->`, `<->`, `xor`, `X`, `X[!]`, `F`, `G`, `U`, `W`, `R`, `M`,
//! and the past operators `Y`, `Z`, `O`, `H`, `S`, with the constants `true` and `false`. It is
//! the inverse of [`crate::parser::parse`]: for every formula `f` of an arena,
//! `parse(print(f)) == f` (the same handle in the same arena).
//!
//! # Layout
//! - Binary operators are surrounded by spaces; parentheses are added only where the parser's
//!   precedence and associativity require them (`a -> b -> c`, `a U b U c` and `a xor b xor c`
//!   print without parentheses; `(a -> b) -> c` keeps them).
//! - Like Spot, `F`, `G`, `X` and `X[!]` are glued to an operand that is a one-character atom,
//!   a prefix formula or parenthesized: `GFa`, `G(a -> Xb)`, `F!a`, `X(a | b)`. Before longer
//!   names and constants a space keeps things readable and unambiguous: `X examine(item)`,
//!   `F "a b"`, `X false`. The past operators `Y`, `Z`, `O`, `H` are words to
//!   the lexer, so they are separated by a space unless followed by `(` or `!`: `Y a`, `H(a | b)`,
//!   `O!a`, `H Y a`.
//! - Atomic propositions print bare when they lex back as themselves (`a`, `take_1`, `X0`),
//!   parametric propositions as `take(item)`, or `delivered("red hot pepper")` when the argument
//!   is not a plain value. Any other name is double-quoted, with `"` and `\` escaped: `"Fa"`,
//!   `"package 1 loaded"`, `"U"`, `"true"`.

use crate::formula::{Arena, Formula, Node};
use crate::parser::{is_plain_ident, is_plain_value};

/// Prints `f` in Spot syntax with minimal parentheses; see the [module docs](self).
pub fn print(arena: &Arena, f: Formula) -> String {
    fmt(arena, f).0
}

/// Prints a property: `forall item: G(take(item) -> X examine(item))` when `var` is given, else
/// just the formula. The result parses back with [`crate::parser::parse_property`].
pub fn print_with_quantifier(arena: &Arena, var: Option<&str>, f: Formula) -> String {
    match var {
        Some(v) => format!("forall {v}: {}", print(arena, f)),
        None => print(arena, f),
    }
}

/// How an atomic proposition named `name` is written in a formula: bare (`take_1`),
/// parametric (`take(item)`, `delivered("red hot pepper")`) or double-quoted (`"package 1"`).
pub fn atom_text(name: &str) -> String {
    if is_plain_ident(name) {
        return name.to_string();
    }
    if crate::parser::split_exists(name).is_some() {
        // `exists p: body`, a past-time quantifier: parenthesized so it parses back alone, if
        // it does (a quoted name such as `"exists p: !q(p,"` does not: it stays quoted).
        let text = format!("({name})");
        let mut arena = crate::formula::Arena::new();
        if let Ok(f) = crate::parser::parse(&mut arena, &text) {
            if matches!(arena.node(f), crate::formula::Node::Atom(s) if arena.sym_name(*s) == name)
            {
                return text;
            }
        }
    }
    let parts = crate::formula::AtomName::parse(name);
    if let Some(arg) = &parts.arg {
        if is_plain_ident(&parts.base) {
            // One argument, or several separated by `, ` (`load(p, a1)`).
            let args: Vec<String> = arg
                .split(", ")
                .map(|a| {
                    if is_plain_value(a) {
                        a.to_string()
                    } else {
                        quote(a)
                    }
                })
                .collect();
            return format!("{}({})", parts.base, args.join(", "));
        }
    }
    quote(name)
}

fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

// Precedence levels, loosest first (see the parser).
const P_IMPLIES: u8 = 1;
const P_OR: u8 = 2;
const P_XOR: u8 = 3;
const P_AND: u8 = 4;
const P_UNTIL: u8 = 5;
const P_PREFIX: u8 = 6;
const P_PRIMARY: u8 = 7;

fn paren(s: (String, u8), needed: bool) -> String {
    if needed {
        format!("({})", s.0)
    } else {
        s.0
    }
}

/// The text of `f` and its precedence level.
fn fmt(arena: &Arena, f: Formula) -> (String, u8) {
    use Node::*;
    match arena.node(f) {
        True => ("true".into(), P_PRIMARY),
        False => ("false".into(), P_PRIMARY),
        Atom(s) => (atom_text(arena.sym_name(*s)), P_PRIMARY),
        Not(a) => prefix(arena, "!", *a),
        Next(a) => prefix(arena, "X", *a),
        StrongNext(a) => prefix(arena, "X[!]", *a),
        Finally(a) => prefix(arena, "F", *a),
        Globally(a) => prefix(arena, "G", *a),
        Yesterday(a) => prefix(arena, "Y", *a),
        WeakYesterday(a) => prefix(arena, "Z", *a),
        Once(a) => prefix(arena, "O", *a),
        Historically(a) => prefix(arena, "H", *a),
        And(v) => nary(arena, " & ", P_AND, v),
        Or(v) => nary(arena, " | ", P_OR, v),
        Xor(a, b) => binary(arena, "xor", P_XOR, false, *a, *b),
        Implies(a, b) => binary(arena, "->", P_IMPLIES, true, *a, *b),
        Equiv(a, b) => binary(arena, "<->", P_IMPLIES, true, *a, *b),
        Until(a, b) => binary(arena, "U", P_UNTIL, true, *a, *b),
        WeakUntil(a, b) => binary(arena, "W", P_UNTIL, true, *a, *b),
        Release(a, b) => binary(arena, "R", P_UNTIL, true, *a, *b),
        StrongRelease(a, b) => binary(arena, "M", P_UNTIL, true, *a, *b),
        Since(a, b) => binary(arena, "S", P_UNTIL, true, *a, *b),
    }
}

fn prefix(arena: &Arena, op: &str, a: Formula) -> (String, u8) {
    let inner = fmt(arena, a);
    let level = inner.1;
    let body = paren(inner, level < P_PREFIX);
    let first = body.chars().next().unwrap_or(' ');
    let glue = match op {
        "!" => true,
        "Y" | "Z" | "O" | "H" => first == '(' || first == '!',
        _ => {
            // `F`, `G`, `X`, `X[!]`: glued like Spot (`GFa`, `Xb`, `F!a`, `X(a | b)`), but a
            // space before longer names and constants keeps `X examine(item)` readable.
            let short = match arena.node(a) {
                Node::Atom(_) => body.chars().count() == 1,
                Node::True | Node::False => false,
                _ => true,
            };
            let alse = op == "F" && body.to_ascii_lowercase().starts_with("alse");
            (short || first == '(' || first == '!') && !alse && !first.is_ascii_digit()
        }
    };
    let sep = if glue { "" } else { " " };
    (format!("{op}{sep}{body}"), P_PREFIX)
}

fn nary(arena: &Arena, sep: &str, level: u8, ops: &[Formula]) -> (String, u8) {
    let parts: Vec<String> = ops
        .iter()
        .map(|&c| {
            let s = fmt(arena, c);
            let lvl = s.1;
            paren(s, lvl <= level)
        })
        .collect();
    (parts.join(sep), level)
}

fn binary(
    arena: &Arena,
    op: &str,
    level: u8,
    right_assoc: bool,
    a: Formula,
    b: Formula,
) -> (String, u8) {
    let l = fmt(arena, a);
    let r = fmt(arena, b);
    let (ll, rl) = (l.1, r.1);
    let l = paren(l, if right_assoc { ll <= level } else { ll < level });
    let r = paren(r, if right_assoc { rl < level } else { rl <= level });
    (format!("{l} {op} {r}"), level)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(atom_text("a"), "a");
        assert_eq!(atom_text("X0"), "X0");
        assert_eq!(atom_text("Fa"), "\"Fa\"");
        assert_eq!(atom_text("U"), "\"U\"");
        assert_eq!(atom_text("True"), "\"True\"");
        assert_eq!(atom_text("take(item)"), "take(item)");
        assert_eq!(
            atom_text("delivered(red hot pepper)"),
            "delivered(\"red hot pepper\")"
        );
        assert_eq!(atom_text("F(x)"), "\"F(x)\"");
        assert_eq!(atom_text("a\"b\\c"), "\"a\\\"b\\\\c\"");
    }
}
