//! Names of atomic propositions: `look`, or parametric `take(item)` (base `take`, argument
//! `item`), and their instantiation for one value of a quantified variable (trace slicing).
//! Shared by the formula arena (`trac_ltl::formula`), the table monitors and generated code.

/// An atomic proposition's name, split into its base and optional parameter: `take(item)` has
/// base `take` and argument `item`; `look` has no argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AtomName {
    /// The full name as written (`take(item)`, `"package 1 loaded"` without the quotes).
    pub name: String,
    /// The name before the parenthesis.
    pub base: String,
    /// The single parameter or value inside the parentheses, if any.
    pub arg: Option<String>,
}

impl AtomName {
    /// Splits `base(arg)` into base and argument; any other name has no argument.
    pub fn parse(name: &str) -> AtomName {
        match split_atom_name(name) {
            Some((base, arg)) => AtomName {
                name: name.to_string(),
                base: base.to_string(),
                arg: Some(arg.to_string()),
            },
            None => AtomName {
                name: name.to_string(),
                base: name.to_string(),
                arg: None,
            },
        }
    }
}

/// Splits a name `base(arg)` into `(base, arg)` without allocating, as [`AtomName::parse`] does;
/// `None` for a name without a parameter. Cheap enough for every label at every step.
pub fn split_atom_name(name: &str) -> Option<(&str, &str)> {
    let open = name.find('(')?;
    let inner = name.strip_suffix(')')?.get(open + 1..)?;
    // `exists p: load(p)` (a quantifier atom) is not `base(arg)`.
    if open == 0 || inner.contains(['(', ')']) || name[..open].contains([':', ' ']) {
        return None;
    }
    Some((&name[..open], inner))
}

/// `base(var)` becomes `base(value)`; any other name is returned unchanged. The name-level
/// counterpart of `trac_ltl::formula::Arena::instantiate`.
pub fn instantiate_name(name: &str, var: &str, value: &str) -> String {
    match split_atom_name(name) {
        Some((base, arg)) if arg == var => format!("{base}({value})"),
        _ => name.to_string(),
    }
}
