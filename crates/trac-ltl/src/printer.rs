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

use crate::formula::{Arena, Formula};
use crate::parser::exists_parses_alone;
use crate::render;

/// Prints `f` in Spot syntax with minimal parentheses; see the [module docs](self).
pub fn print(arena: &Arena, f: Formula) -> String {
    render::print(arena, f, exists_parses_alone)
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
    render::atom_text(name, exists_parses_alone)
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
