//! Printer in Spot's LTL syntax (stub; replaced by the real printer).
use crate::formula::{Arena, Formula};

/// Prints `f` in Spot syntax with minimal parentheses.
pub fn print(arena: &Arena, f: Formula) -> String {
    format!("{:?}", arena.node(f))
}
