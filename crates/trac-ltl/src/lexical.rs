//! The lexical rules that the parser, the printer and the English rendering share: which names
//! are plain identifiers or plain argument values, and how an `exists` atom's name splits.
//!
//! Below every other module of the crate (it depends on none of them).

/// The one-letter words that are operators to the lexer (`U`, `W`, `R`, `V`, `M`, `S`, `Y`,
/// `Z`, `O`, `H`); the parser's `word_operator` names the operator of each.
pub(crate) const OPERATOR_WORDS: [&str; 10] = ["U", "W", "R", "V", "M", "S", "Y", "Z", "O", "H"];

/// Length of the identifier-character run `[A-Za-z0-9_.]*` at the start of `s`.
pub(crate) fn ident_len(s: &str) -> usize {
    s.bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.')
        .count()
}

/// True if `s` lexes, where a formula is expected, as exactly one atomic proposition named `s`
/// (used by the printer to decide whether a name needs quotes).
pub(crate) fn is_plain_ident(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(&c) = b.first() else { return false };
    if !(c.is_ascii_alphabetic() || c == b'_' || c == b'.') || ident_len(s) != s.len() {
        return false;
    }
    if matches!(c, b'F' | b'G' | b'X') && !b.get(1).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    !(s.eq_ignore_ascii_case("true")
        || s.eq_ignore_ascii_case("false")
        || s == "xor"
        || s == "end"
        || OPERATOR_WORDS.contains(&s))
}

/// True if `s` can be written unquoted as the argument of a parametric proposition.
pub(crate) fn is_plain_value(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_value_byte)
}

pub(crate) fn is_value_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'*' | b'?' | b'|')
}

/// Splits the name of an `exists VAR: BODY` atom (as the parser names it) into the variable
/// and the body's text; `None` for any other name.
pub fn split_exists(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix("exists ")?;
    let (var, body) = rest.split_once(':')?;
    is_plain_ident(var).then_some((var, body.trim_start()))
}
