//! The Spot-syntax printing engine behind [`crate::printer`] (layout, precedence, quoting).
//!
//! The parser prints too (it names an `exists` atom by the printed normal form of its body),
//! and the printer asks the parser whether an `exists` name parses back alone; so this engine
//! takes that question as a function ([`ExistsParses`]) and depends on neither: `parser` and
//! `printer` both sit above it, and `printer` above `parser`.

use crate::formula::{Arena, AtomName, Formula, Node};
use crate::lexical::{is_plain_ident, is_plain_value, split_exists};
use crate::sugar::{recognize, Step, Sugar};

/// Whether the name of an `exists` atom, parenthesized, parses back alone as that atom (the
/// parser's answer, passed in so that this module does not depend on the parser).
pub(crate) type ExistsParses = fn(&str) -> bool;

/// Prints `f` in Spot syntax with minimal parentheses (see [`crate::printer`]), asking
/// `exists_parses` whether an `exists` atom can be written parenthesized.
pub(crate) fn print(arena: &Arena, f: Formula, exists_parses: ExistsParses) -> String {
    fmt(arena, f, exists_parses).0
}

/// How an atomic proposition named `name` is written in a formula (see
/// [`crate::printer::atom_text`]): bare (`take_1`), parametric (`take(item)`,
/// `delivered("red hot pepper")`) or double-quoted (`"package 1"`).
pub(crate) fn atom_text(name: &str, exists_parses: ExistsParses) -> String {
    if let Some((l, r)) = trac_core::names::comparison_sides(name) {
        return format!("{l} = {r}");
    }
    if is_plain_ident(name) {
        return name.to_string();
    }
    if split_exists(name).is_some() && exists_parses(name) {
        // `exists p: body`, a past-time quantifier: parenthesized so it parses back alone, if
        // it does (a quoted name such as `"exists p: !q(p,"` does not: it stays quoted).
        return format!("({name})");
    }
    let parts = AtomName::parse(name);
    if let Some(arg) = &parts.arg {
        if is_plain_ident(&parts.base) {
            // One argument, or several separated by `, ` (`load(p, a1)`), each written so
            // that the parser gives it back: a value as labels write it
            // (`trac_core::names::format_value`) parses back to itself; any other (`take()`,
            // `q( x )`) makes the whole name quoted.
            let args: Option<Vec<String>> = trac_core::names::split_list(arg)
                .map(|a| {
                    if is_plain_value(a) {
                        Some(a.to_string())
                    } else if trac_core::names::is_bare_value(a) {
                        Some(quote(a))
                    } else {
                        // A quoted value (`"echo a,b"`) in its one written form stays as it is.
                        trac_core::names::parse_value(a)
                            .filter(|v| trac_core::names::format_value(v) == a)
                            .map(|_| a.to_string())
                    }
                })
                .collect();
            if let Some(args) = args {
                return format!("{}({})", parts.base, args.join(", "));
            }
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
fn fmt(arena: &Arena, f: Formula, ex: ExistsParses) -> (String, u8) {
    use Node::*;
    if let Some(s) = recognize(arena, f) {
        return sugar(arena, s, ex);
    }
    match arena.node(f) {
        True => ("true".into(), P_PRIMARY),
        False => ("false".into(), P_PRIMARY),
        Atom(s) => (atom_text(arena.sym_name(*s), ex), P_PRIMARY),
        Not(a) => match arena.node(*a) {
            // `a != b`, the negation of the comparison atom `=(a, b)`: one token to the parser.
            Atom(s) => match trac_core::names::comparison_sides(arena.sym_name(*s)) {
                Some((l, r)) => (format!("{l} != {r}"), P_PRIMARY),
                None => prefix(arena, "!", *a, ex),
            },
            _ => prefix(arena, "!", *a, ex),
        },
        Next(a) => prefix(arena, "X", *a, ex),
        StrongNext(a) => prefix(arena, "X[!]", *a, ex),
        Finally(a) => prefix(arena, "F", *a, ex),
        Globally(a) => prefix(arena, "G", *a, ex),
        Yesterday(a) => prefix(arena, "Y", *a, ex),
        WeakYesterday(a) => prefix(arena, "Z", *a, ex),
        Once(a) => prefix(arena, "O", *a, ex),
        Historically(a) => prefix(arena, "H", *a, ex),
        And(v) => nary(arena, " & ", P_AND, v, ex),
        Or(v) => nary(arena, " | ", P_OR, v, ex),
        Xor(a, b) => binary(arena, "xor", P_XOR, false, *a, *b, ex),
        Implies(a, b) => binary(arena, "->", P_IMPLIES, true, *a, *b, ex),
        Equiv(a, b) => binary(arena, "<->", P_IMPLIES, true, *a, *b, ex),
        Until(a, b) => binary(arena, "U", P_UNTIL, true, *a, *b, ex),
        WeakUntil(a, b) => binary(arena, "W", P_UNTIL, true, *a, *b, ex),
        Release(a, b) => binary(arena, "R", P_UNTIL, true, *a, *b, ex),
        StrongRelease(a, b) => binary(arena, "M", P_UNTIL, true, *a, *b, ex),
        Since(a, b) => binary(arena, "S", P_UNTIL, true, *a, *b, ex),
    }
}

/// An abbreviation in its written form (`F[1:4] a`, `X[3] a`, `count(a) <= 3`, `end`).
fn sugar(arena: &Arena, s: Sugar, ex: ExistsParses) -> (String, u8) {
    match s {
        Sugar::End => ("end".into(), P_PRIMARY),
        Sugar::Repeat { step, n, body } => {
            let op = match step {
                Step::Next => format!("X[{n}]"),
                Step::StrongNext => format!("X[{n}!]"),
                Step::Yesterday => format!("Y[{n}]"),
                Step::WeakYesterday => format!("Z[{n}]"),
            };
            bracketed(arena, &op, body, ex)
        }
        Sugar::Range {
            op,
            strong,
            lo,
            hi,
            body,
        } => {
            let hi = hi.map_or("$".to_string(), |m| m.to_string());
            let bang = if strong { "!" } else { "" };
            bracketed(
                arena,
                &format!("{}[{lo}:{hi}{bang}]", op.letter()),
                body,
                ex,
            )
        }
        Sugar::Count {
            body,
            window,
            cmp,
            k,
        } => {
            let inner = fmt(arena, body, ex).0;
            let w = window.map_or(String::new(), |w| format!("[{w}]"));
            // A comparison: parenthesized under a prefix operator (`G(count(a) <= 3)`).
            (format!("count{w}({inner}) {} {k}", cmp.text()), P_UNTIL)
        }
    }
}

/// A bracketed prefix operator: a space before the operand unless it is parenthesized.
fn bracketed(arena: &Arena, op: &str, a: Formula, ex: ExistsParses) -> (String, u8) {
    let inner = fmt(arena, a, ex);
    let level = inner.1;
    let body = paren(inner, level < P_PREFIX);
    let sep = if body.starts_with('(') { "" } else { " " };
    (format!("{op}{sep}{body}"), P_PREFIX)
}

/// Whether `f` is a comparison atom `=(l, r)` (`trac_core::names::COMPARISON_BASE`).
fn is_comparison(arena: &Arena, f: Formula) -> bool {
    matches!(arena.node(f), Node::Atom(s) if trac_core::names::comparison_sides(arena.sym_name(*s)).is_some())
}

fn prefix(arena: &Arena, op: &str, a: Formula, ex: ExistsParses) -> (String, u8) {
    let inner = fmt(arena, a, ex);
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
                // `G a != b`, not `Ga != b`: a comparison reads as one unit after a space.
                Node::Not(b) if is_comparison(arena, *b) => false,
                Node::True | Node::False => false,
                _ => body != "end",
            };
            let alse = op == "F" && body.to_ascii_lowercase().starts_with("alse");
            (short || first == '(' || first == '!') && !alse && !first.is_ascii_digit()
        }
    };
    let sep = if glue { "" } else { " " };
    (format!("{op}{sep}{body}"), P_PREFIX)
}

fn nary(arena: &Arena, sep: &str, level: u8, ops: &[Formula], ex: ExistsParses) -> (String, u8) {
    let parts: Vec<String> = ops
        .iter()
        .map(|&c| {
            let s = fmt(arena, c, ex);
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
    ex: ExistsParses,
) -> (String, u8) {
    let l = fmt(arena, a, ex);
    let r = fmt(arena, b, ex);
    let (ll, rl) = (l.1, r.1);
    let l = paren(l, if right_assoc { ll <= level } else { ll < level });
    let r = paren(r, if right_assoc { rl < level } else { rl <= level });
    (format!("{l} {op} {r}"), level)
}
