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

/// Why a label string (an atomic proposition said to hold at a step, as a trace's `labels`
/// give it) is malformed; see [`check_label`].
///
/// Displays as its message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelSyntaxError {
    /// Byte offset of the problem in the label (at most its length).
    pub offset: usize,
    /// What is wrong, naming the label.
    pub message: String,
}

impl std::fmt::Display for LabelSyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LabelSyntaxError {}

/// Checks the syntax of a label given by a trace: `name` (`look`, `package 1 loaded`) or
/// `name(value)` (`take(knife)`, `take(yellow potato)`), the forms [`split_atom_name`] reads.
///
/// A label that is not of these forms would never equal a proposition of a formula and so
/// would silently never hold; it is an error instead. O(length of the label).
///
/// # Errors
/// With the byte offset of the problem: an empty label; whitespace at either end, before `(`,
/// or around the value; a `(` without a name before it, without a `)` at the end, or twice
/// (`take(knife`, `(knife)`, `take(a(b))`); a `)` without its `(` or followed by text
/// (`take)`, `take(knife) now`); an empty value (`take()`, `take(knife,)`); a `,` outside the
/// parentheses. A proposition with several parameters has its values separated by `, `
/// (`loads(package1, a1)`, as formulas print them); each value is non-empty, without
/// whitespace at its ends.
pub fn check_label(label: &str) -> Result<(), LabelSyntaxError> {
    // The common case, a plain name: one pass over the bytes.
    if !label.bytes().any(|b| matches!(b, b'(' | b')' | b','))
        && !label.starts_with(char::is_whitespace)
        && !label.ends_with(char::is_whitespace)
        && !label.is_empty()
    {
        return Ok(());
    }
    let err = |offset: usize, what: &str| {
        Err(LabelSyntaxError {
            offset,
            message: format!("malformed label {label:?}: {what}"),
        })
    };
    if label.trim().is_empty() {
        return err(0, "empty label");
    }
    let lead = label.len() - label.trim_start().len();
    if lead > 0 {
        return err(0, "whitespace before the name");
    }
    if label.trim_end().len() < label.len() {
        return err(label.trim_end().len(), "whitespace after the label");
    }
    let open = label.find('(');
    if let Some(k) = label.find(',').filter(|&k| open.is_none_or(|o| k < o)) {
        return err(
            k,
            "unexpected `,` outside `(...)`: a label is `name` or `name(value, ...)`",
        );
    }
    let close = label.find(')');
    match (open, close) {
        (None, None) => Ok(()),
        (None, Some(c)) => err(c, "`)` without `(`"),
        (Some(0), _) => err(0, "no name before `(`"),
        (Some(o), _) if label[..o].ends_with(char::is_whitespace) => {
            err(label[..o].trim_end().len(), "whitespace before `(`")
        }
        (Some(o), None) => err(o, "unclosed `(`: expected `)` at the end of the label"),
        (Some(o), Some(c)) if c < o => err(c, "`)` before `(`"),
        (Some(o), Some(c)) => {
            if let Some(k) = label[o + 1..c].find('(') {
                return err(
                    o + 1 + k,
                    "a second `(`: a label is `name(value)`, the value without parentheses",
                );
            }
            if c + 1 < label.len() {
                return err(c + 1, "text after `)`: a label ends at its `)`");
            }
            let value = &label[o + 1..c];
            if value.trim().is_empty() {
                return err(
                    o + 1,
                    "empty value in `()` (a proposition without parameter is written without parentheses)",
                );
            }
            if value.trim_start().len() < value.len() {
                return err(o + 1, "whitespace after `(`");
            }
            if value.trim_end().len() < value.len() {
                return err(o + 1 + value.trim_end().len(), "whitespace before `)`");
            }
            // Several values: `v1, v2`, each non-empty, separated by `, `.
            let mut start = o + 1;
            for (i, part) in value.split(',').enumerate() {
                if part.is_empty() {
                    return err(start, "empty value after `,`");
                }
                let v = if i == 0 {
                    part
                } else {
                    let Some(v) = part.strip_prefix(' ') else {
                        return err(start, "expected one space after `,` between values");
                    };
                    if v.is_empty() {
                        return err(start + 1, "empty value after `,`");
                    }
                    v
                };
                if v.starts_with(char::is_whitespace) || v.ends_with(char::is_whitespace) {
                    return err(
                        start,
                        "whitespace around a value (values are separated by `, `)",
                    );
                }
                start += part.len() + 1;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_formed_labels_pass_and_split_as_written() {
        for l in [
            "look",
            "package 1 loaded",
            "take(knife)",
            "take(yellow potato)",
            "free(a1)",
            "loads(package1, a1)",
            "between(living room, hallway)",
        ] {
            assert_eq!(check_label(l), Ok(()), "{l}");
        }
        assert_eq!(
            split_atom_name("take(yellow potato)"),
            Some(("take", "yellow potato"))
        );
    }

    #[test]
    fn malformed_labels_are_errors_at_the_problem() {
        let at = |l: &str| check_label(l).map_err(|e| (e.offset, e.message));
        let cases: [(&str, usize, &str); 17] = [
            ("take(knife", 4, "unclosed `(`"),
            ("take)", 4, "`)` without `(`"),
            ("take)(knife", 4, "`)` before `(`"),
            ("(knife)", 0, "no name before `(`"),
            ("take(a(b))", 6, "a second `(`"),
            ("take(knife) now", 11, "text after `)`"),
            ("take()", 5, "empty value"),
            ("take(  )", 5, "empty value"),
            ("take(knife,)", 11, "empty value after `,`"),
            ("take(knife,fork)", 11, "expected one space after `,`"),
            ("take(a,,b)", 7, "empty value after `,`"),
            ("look,", 4, "unexpected `,`"),
            ("", 0, "empty label"),
            (" look", 0, "whitespace before the name"),
            ("look ", 4, "whitespace after the label"),
            ("take (knife)", 4, "whitespace before `(`"),
            ("take( knife)", 5, "whitespace after `(`"),
        ];
        for (l, offset, what) in cases {
            let (o, m) = at(l).expect_err(l);
            assert_eq!(o, offset, "{l}: {m}");
            assert!(m.contains(what), "{l}: {m}");
            assert!(m.contains(&format!("{l:?}")), "{l}: {m}");
        }
        assert!(at("take(knife )")
            .unwrap_err()
            .1
            .contains("whitespace before `)`"));
    }
}
