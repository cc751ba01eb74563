//! Parser for Spot's LTL syntax (stub; replaced by the real parser).
use crate::formula::{Arena, Formula};
use std::ops::Range;

/// A parse error: a message and the byte span of the offending input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// What went wrong.
    pub message: String,
    /// Byte range in the source string.
    pub span: Range<usize>,
}

impl ParseError {
    /// The error rendered with the source line and a caret under the span.
    pub fn render(&self, src: &str) -> String {
        format!("{}\n{}\n{}^", self.message, src, " ".repeat(self.span.start))
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at {}..{}", self.message, self.span.start, self.span.end)
    }
}

impl std::error::Error for ParseError {}

/// A property formula with an optional universally quantified parameter:
/// `forall item: G(take(item) -> X examine(item))`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Property {
    /// The quantified variable, if any.
    pub var: Option<String>,
    /// The body.
    pub body: Formula,
}

/// Parses one LTL formula in Spot syntax.
pub fn parse(_arena: &mut Arena, src: &str) -> Result<Formula, ParseError> {
    Err(ParseError { message: "parser not implemented".into(), span: 0..src.len() })
}

/// Parses `[forall VAR:] FORMULA`.
pub fn parse_property(arena: &mut Arena, src: &str) -> Result<Property, ParseError> {
    Ok(Property { var: None, body: parse(arena, src)? })
}
