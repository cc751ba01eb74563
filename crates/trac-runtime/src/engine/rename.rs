//! Residuals of parametric instances shown with their value ([`rename_residual`]): shared by
//! the table monitors and the past-time citations.

use trac_core::table::rename_residual_text;
use trac_ltl::formula::Arena;

/// A residual formula (Spot syntax) with `var` instantiated by `value`: parsed, instantiated
/// ([`Arena::instantiate`], which normalizes) and printed; when the string does not parse,
/// every `(var)` of the text becomes `(value)`. The [`trac_core::table::RenameResidual`] of the
/// runtime's table monitors.
pub fn rename_residual(r: &str, var: &str, value: &str) -> String {
    let mut arena = Arena::new();
    match trac_ltl::parse(&mut arena, r) {
        Ok(f) => {
            let g = arena.instantiate(f, var, value);
            trac_ltl::print(&arena, g)
        }
        Err(_) => rename_residual_text(r, var, value),
    }
}
