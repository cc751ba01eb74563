//! Plain-English rendering of formulas (stub).
use crate::formula::{Arena, Formula};
use std::collections::HashMap;

/// Renders `f` in plain English, using `descriptions` (proposition name -> description).
pub fn render(arena: &Arena, f: Formula, _descriptions: &HashMap<String, String>) -> String {
    crate::printer::print(arena, f)
}
