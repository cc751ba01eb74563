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
    // One pass over the bytes (the parentheses, `:` and space are ASCII, so every cut is at a
    // character boundary): this runs for every label of every step of every parametric property.
    let b = name.as_bytes();
    if b.last() != Some(&b')') {
        return None;
    }
    let open = b.iter().position(|&c| c == b'(')?;
    // `exists p: load(p)` (a quantifier atom) is not `base(arg)`.
    if open == 0 || b[..open].iter().any(|&c| c == b':' || c == b' ') {
        return None;
    }
    let inner = &b[open + 1..b.len() - 1];
    if inner.iter().any(|&c| c == b'(' || c == b')') {
        return None;
    }
    Some((&name[..open], &name[open + 1..name.len() - 1]))
}

/// The variables of a quantifier as the property stores them: one name (`item`), or several
/// joined by `, ` (`tool, rid` for `forall tool, rid: ...`); a value tuple is written the same
/// way (`update_flight, ZFA04Y`: values never contain `,`, see [`check_label`]).
pub fn split_list(list: &str) -> impl Iterator<Item = &str> {
    list.split(", ")
}

/// The argument list `args` of an atom (`p, a1`) with every argument equal to one of `vars`
/// (a list as [`split_list`] reads it) replaced by the matching part of `values`; `None` when
/// no argument is a variable. A name with a `(` or `)` in an argument is left alone.
fn instantiate_args(args: &str, vars: &str, values: &str) -> Option<String> {
    let vars: Vec<&str> = split_list(vars).collect();
    let values: Vec<&str> = split_list(values).collect();
    let mut changed = false;
    let out: Vec<&str> = split_list(args)
        .map(|a| match vars.iter().position(|v| *v == a) {
            Some(i) if i < values.len() => {
                changed = true;
                values[i]
            }
            _ => a,
        })
        .collect();
    changed.then(|| out.join(", "))
}

/// `base(var)` becomes `base(value)`; any other name is returned unchanged. The name-level
/// counterpart of `trac_ltl::formula::Arena::instantiate`.
///
/// Several parameters and several variables: every argument of `base(a1, ..., an)` equal to
/// a variable of `var` (`x`, or a list `x, y` as [`split_list`] reads it) becomes the value at
/// the same place of `value` (`v`, or `v, w`): `load(p, a1)` for `p := package1` is
/// `load(package1, a1)`, `edge(x, y)` for `x, y := a, b` is `edge(a, b)`. The names of
/// `exists` atoms are not changed here (their bodies are formulas: see
/// `trac_ltl::formula::Arena::instantiate`). O(length of the name).
pub fn instantiate_name(name: &str, var: &str, value: &str) -> String {
    match split_atom_name(name) {
        Some((base, arg)) => match instantiate_args(arg, var, value) {
            Some(args) => format!("{base}({args})"),
            None => name.to_string(),
        },
        _ => name.to_string(),
    }
}

/// [`instantiate_name`] on every atom `base(args)` written in a formula's text (Spot syntax,
/// as trac's printer writes it): for trac-core, which has no parser, to show a residual of a
/// parametric instance. Quoted names are left alone. O(length of the text).
pub fn instantiate_text(text: &str, var: &str, value: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        match b[i] {
            b'"' => {
                // A quoted name: skip to its closing quote.
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'(' => {
                // The base starts after the last character that cannot be in one; that
                // character may be several bytes long (`takeؘ(b)`), so skip its whole length.
                let base_start = text[..i]
                    .char_indices()
                    .rev()
                    .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                    .map_or(0, |(k, c)| k + c.len_utf8());
                let base = &text[base_start..i];
                let is_operator = base.len() == 1 && "FGXUWRMYZOHSV".contains(base);
                let close = text[i + 1..].find([')', '(']).map(|c| i + 1 + c);
                match close {
                    Some(c) if !base.is_empty() && !is_operator && b[c] == b')' => {
                        if let Some(args) = instantiate_args(&text[i + 1..c], var, value) {
                            out.push_str(&text[copied..=i]);
                            out.push_str(&args);
                            copied = c;
                        }
                        i = c + 1;
                    }
                    _ => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[copied.min(text.len())..]);
    out
}

/// Whether `text` matches the glob `glob` (`*` any run of characters, `?` one character),
/// the whole text. O(|glob| · |text|) worst case, no allocation beyond two char vectors.
pub fn glob_match(glob: &str, text: &str) -> bool {
    let g: Vec<char> = glob.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut gi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        // A `*` of the glob is a wildcard even where the text has a `*` too: tested first, so
        // that it is never consumed as a literal (which lost the backtracking point).
        if gi < g.len() && g[gi] == '*' {
            star = Some(gi);
            mark = ti;
            gi += 1;
        } else if gi < g.len() && (g[gi] == '?' || g[gi] == t[ti]) {
            gi += 1;
            ti += 1;
        } else if let Some(s) = star {
            gi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while gi < g.len() && g[gi] == '*' {
        gi += 1;
    }
    gi == g.len()
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
    fn names_instantiate_per_argument_and_per_variable() {
        assert_eq!(
            instantiate_name("take(item)", "item", "knife"),
            "take(knife)"
        );
        assert_eq!(
            instantiate_name("load(p, a1)", "p", "package1"),
            "load(package1, a1)"
        );
        assert_eq!(instantiate_name("edge(x, y)", "x, y", "a, b"), "edge(a, b)");
        assert_eq!(instantiate_name("edge(y, x)", "x, y", "a, b"), "edge(b, a)");
        assert_eq!(
            instantiate_name("call(tool)", "tool, rid", "f, R1"),
            "call(f)"
        );
        assert_eq!(instantiate_name("look", "x", "a"), "look");
        assert_eq!(instantiate_name("take(fork)", "x", "a"), "take(fork)");
        assert_eq!(
            instantiate_text(
                "G(load(p, a1) -> F unload(p, a1)) & \"q(p)\" & X(p)",
                "p",
                "v"
            ),
            "G(load(v, a1) -> F unload(v, a1)) & \"q(p)\" & X(p)"
        );
        assert_eq!(
            instantiate_text("modify(rid) & call(tool)", "tool, rid", "t, r"),
            "modify(r) & call(t)"
        );
    }

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

    /// The byte-level split equals the former `str`-pattern one on every name built from a
    /// small alphabet of the characters that matter (all strings up to 5 of them).
    #[test]
    fn split_atom_name_equals_the_reference() {
        fn reference(name: &str) -> Option<(&str, &str)> {
            let open = name.find('(')?;
            let inner = name.strip_suffix(')')?.get(open + 1..)?;
            if open == 0 || inner.contains(['(', ')']) || name[..open].contains([':', ' ']) {
                return None;
            }
            Some((&name[..open], inner))
        }
        let alphabet = ['a', '(', ')', ':', ' ', ',', 'é'];
        let mut names = vec![String::new()];
        let mut frontier = vec![String::new()];
        for _ in 0..5 {
            let mut next = Vec::new();
            for n in &frontier {
                for c in alphabet {
                    let mut m = n.clone();
                    m.push(c);
                    next.push(m);
                }
            }
            names.extend(next.iter().cloned());
            frontier = next;
        }
        for n in &names {
            assert_eq!(split_atom_name(n), reference(n), "{n:?}");
        }
        assert!(names.len() > 19_000);
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
