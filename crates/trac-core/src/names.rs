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
///
/// The argument may hold quoted values ([`format_value`]): `run("echo (a), b")` has base `run`
/// and argument `"echo (a), b"`; parentheses inside quotes do not count.
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
    let inner = &name[open + 1..name.len() - 1];
    if inner.as_bytes().contains(&b'"') {
        // Quoted values: every `(` / `)` must be inside one.
        if !outside_quotes(inner).all(|c| c != b'(' && c != b')') {
            return None;
        }
    } else if inner.bytes().any(|c| c == b'(' || c == b')') {
        return None;
    }
    Some((&name[..open], inner))
}

/// The bytes of an argument list that are outside its quoted values (a `"` that starts a
/// value, to its closing unescaped `"`); a `(` stands for a quoted value that is not closed,
/// so that callers refuse the list.
fn outside_quotes(list: &str) -> impl Iterator<Item = u8> + '_ {
    let b = list.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            let at_value_start = i == 0 || (i >= 2 && &b[i - 2..i] == b", ");
            if b[i] == b'"' && at_value_start {
                match quoted_end(b, i) {
                    Some(end) => {
                        i = end;
                        continue;
                    }
                    None => {
                        i = b.len();
                        return Some(b'(');
                    }
                }
            }
            i += 1;
            return Some(b[i - 1]);
        }
        None
    })
}

/// The end (one past the closing quote) of the quoted value starting at `b[start] == b'"'`;
/// `None` when it is not closed. A backslash escapes the next byte.
fn quoted_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// True when `value` is written as it is in a label: non-empty, none of `( ) , " \`, no
/// whitespace at either end. Any other value is quoted by [`format_value`].
pub fn is_bare_value(value: &str) -> bool {
    !value.is_empty()
        && !value
            .bytes()
            .any(|c| matches!(c, b'(' | b')' | b',' | b'"' | b'\\'))
        && !value.starts_with(char::is_whitespace)
        && !value.ends_with(char::is_whitespace)
}

/// A value as a label writes it, so that every string survives the round trip through a label
/// (`name(value)`) exactly: bare when [`is_bare_value`] (`knife`, `red hot pepper`), else in
/// double quotes with `\` and `"` escaped by a backslash (`"echo a,b"`, `"say \"hi\""`, `""`).
/// One value has one written form, so equal values give equal labels and different values
/// different labels. [`parse_value`] reads it back. O(length of the value).
pub fn format_value(value: &str) -> std::borrow::Cow<'_, str> {
    if is_bare_value(value) {
        return value.into();
    }
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out.into()
}

/// The value a label writes as `token` ([`format_value`]'s inverse): a quoted token unquoted
/// and unescaped, a bare one as it is. `None` for a malformed quoted token (not closed, text
/// after the closing quote, a `\` before anything but `"` or `\`).
pub fn parse_value(token: &str) -> Option<std::borrow::Cow<'_, str>> {
    let Some(body) = token.strip_prefix('"') else {
        return Some(token.into());
    };
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('"' | '\\')) => out.push(e),
                _ => return None,
            },
            '"' => return chars.as_str().is_empty().then_some(out.into()),
            _ => out.push(c),
        }
    }
    None
}

/// The label with every value in its one written form ([`format_value`]): `take("knife")`
/// becomes `take(knife)`, `say(a"b)` becomes `say("a\"b")`. Trace readers store labels so, so
/// that a label equals the proposition a formula names for the same value.
///
/// # Errors
/// A malformed label ([`check_label`]).
pub fn canonical_label(label: &str) -> Result<std::borrow::Cow<'_, str>, LabelSyntaxError> {
    check_label(label)?;
    let Some((base, args)) = split_atom_name(label) else {
        return Ok(label.into());
    };
    if !args.bytes().any(|c| c == b'"' || c == b'\\') {
        return Ok(label.into());
    }
    let vals: Vec<String> = split_list(args)
        .map(|t| match parse_value(t) {
            Some(v) => format_value(&v).into_owned(),
            None => t.to_string(),
        })
        .collect();
    let out = format!("{base}({})", vals.join(", "));
    Ok(if out == label {
        label.into()
    } else {
        out.into()
    })
}

/// The variables of a quantifier as the property stores them: one name (`item`), or several
/// joined by `, ` (`tool, rid` for `forall tool, rid: ...`); a value tuple is written the same
/// way (`update_flight, ZFA04Y`), each value as [`format_value`] writes it, so that a `, `
/// inside a quoted value (`"a, b"`) does not separate.
pub fn split_list(list: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(list);
    std::iter::from_fn(move || {
        let r = rest?;
        let b = r.as_bytes();
        let i = if b.first() == Some(&b'"') {
            quoted_end(b, 0).unwrap_or(b.len())
        } else {
            0
        };
        match r[i..].find(", ") {
            Some(k) => {
                rest = Some(&r[i + k + 2..]);
                Some(&r[..i + k])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
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
    if let Some(sides) = comparison_sides(name) {
        return instantiate_comparison(sides, var, value);
    }
    match split_atom_name(name) {
        Some((base, arg)) => match instantiate_args(arg, var, value) {
            Some(args) => format!("{base}({args})"),
            None => name.to_string(),
        },
        _ => name.to_string(),
    }
}

/// The base of the name of a comparison atom: `a = b` in a formula is the atom `=(a, b)`,
/// `a = "x"` the atom `=(a, "x")` (`a != b` is its negation). A side is a quantified variable
/// (bare) or a value, always in double quotes ([`quote_value`]), so that a value never reads as
/// a variable, also after [`instantiate_name`] gave a variable its value. No label has this
/// base (labels are identifiers with arguments), so trace slicing never reads one.
pub const COMPARISON_BASE: &str = "=";

/// A value in double quotes with `\` and `"` escaped by a backslash, whatever the value (where
/// [`format_value`] writes a bare value bare): the form of values in comparison atoms. O(length).
pub fn quote_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// The two sides of a comparison atom `=(l, r)` ([`COMPARISON_BASE`]), as written in its name
/// (a variable bare, a value quoted); `None` for any other name.
pub fn comparison_sides(name: &str) -> Option<(&str, &str)> {
    if !name.starts_with("=(") {
        return None;
    }
    let (base, args) = split_atom_name(name)?;
    if base != COMPARISON_BASE {
        return None;
    }
    let mut it = split_list(args);
    let (l, r) = (it.next()?, it.next()?);
    it.next().is_none().then_some((l, r))
}

/// Whether the comparison atom `name` (`=(l, r)`) holds, when that is decided: `Some(true)` for
/// one variable compared with itself or two equal values, `Some(false)` for two different
/// values, `None` while a side is a variable without a value (a comparison with a value not
/// seen yet: it does not hold, see `docs/reference/formulas.md`) or for a name that is no
/// comparison. Values are compared exactly (case and spaces kept). O(length of the name).
pub fn comparison_value(name: &str) -> Option<bool> {
    let (l, r) = comparison_sides(name)?;
    if l == r {
        return Some(true);
    }
    if l.starts_with('"') && r.starts_with('"') {
        return Some(parse_value(l)? == parse_value(r)?);
    }
    None
}

/// [`instantiate_name`] for a comparison: each side that is a variable of `var` becomes its
/// value of `value`, quoted ([`quote_value`]).
fn instantiate_comparison((l, r): (&str, &str), var: &str, value: &str) -> String {
    let side = |s: &str| -> String {
        if s.starts_with('"') {
            return s.to_string();
        }
        let pos = split_list(var).position(|v| v == s);
        match pos.and_then(|i| split_list(value).nth(i)) {
            Some(v) => quote_value(&parse_value(v).unwrap_or(v.into())),
            None => s.to_string(),
        }
    };
    format!("{COMPARISON_BASE}({}, {})", side(l), side(r))
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
    instantiate_comparisons(&out, var, value)
}

/// The comparisons `l = r` / `l != r` of a printed formula (as trac's printer writes them, one
/// space around the operator) with each side that is a variable of `var` replaced by its value
/// of `value`, quoted ([`quote_value`]): part of [`instantiate_text`]. Quoted names are left
/// alone. O(length of the text).
fn instantiate_comparisons(text: &str, var: &str, value: &str) -> String {
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'.';
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut copied) = (0, 0);
    let replace = |word: &str| -> Option<String> {
        let k = split_list(var).position(|v| v == word)?;
        let v = split_list(value).nth(k)?;
        Some(quote_value(&parse_value(v).unwrap_or(v.into())))
    };
    while i < b.len() {
        if b[i] == b'"' {
            i = quoted_end(b, i).unwrap_or(b.len());
            continue;
        }
        let op = if b[i..].starts_with(b" = ") {
            3
        } else if b[i..].starts_with(b" != ") {
            4
        } else {
            i += 1;
            continue;
        };
        let left = text[..i].bytes().rev().take_while(|&c| is_ident(c)).count();
        let right = text[i + op..].bytes().take_while(|&c| is_ident(c)).count();
        // A left side already replaced as the right side of the previous comparison
        // (`item = item = item`) is not replaced again.
        let left_done = i - left < copied;
        if let Some(r) = (!left_done).then(|| replace(&text[i - left..i])).flatten() {
            out.push_str(&text[copied..i - left]);
            out.push_str(&r);
            copied = i;
        }
        let rs = i + op;
        if let Some(r) = replace(&text[rs..rs + right]) {
            out.push_str(&text[copied..rs]);
            out.push_str(&r);
            copied = rs + right;
        }
        i = rs + right;
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
/// whitespace at its ends, or quoted as [`format_value`] writes it (`run("echo a,b")`, `""`).
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
    if let Some(o) = open.filter(|&o| o > 0 && label[o..].contains('"')) {
        if label[..o].ends_with(char::is_whitespace) {
            return err(label[..o].trim_end().len(), "whitespace before `(`");
        }
        return check_quoted_values(label, o).or_else(|(k, what)| err(k, &what));
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

/// [`check_label`] for a label whose value list (from `open`, its `(`) has a `"`: values bare
/// (as without quotes) or quoted ([`format_value`]), separated by `, `, the list closed by the
/// label's last byte `)`. The error is `(offset, what)`.
fn check_quoted_values(label: &str, open: usize) -> Result<(), (usize, String)> {
    let b = label.as_bytes();
    let mut i = open + 1;
    loop {
        let start = i;
        if b.get(i) == Some(&b'"') {
            let end = quoted_end(b, i).ok_or((i, "unclosed `\"` in a value".to_string()))?;
            if parse_value(&label[i..end]).is_none() {
                let bad = label[i + 1..end].find('\\').map_or(i, |k| i + 1 + k);
                return Err((
                    bad,
                    "a `\\` in a quoted value escapes only `\"` or `\\`".into(),
                ));
            }
            i = end;
        } else {
            let len = label[i..]
                .find([',', ')', '(', '"'])
                .unwrap_or(label.len() - i);
            let v = &label[i..i + len];
            if v.trim().is_empty() {
                return Err((i, "empty value (write `\"\"` for the empty value)".into()));
            }
            if v.starts_with(char::is_whitespace) || v.ends_with(char::is_whitespace) {
                return Err((i, "whitespace around a value (quote it: `\" v \"`)".into()));
            }
            i += len;
        }
        match b.get(i) {
            Some(b',') if b.get(i + 1) == Some(&b' ') => i += 2,
            Some(b',') => {
                return Err((i + 1, "expected one space after `,` between values".into()))
            }
            Some(b')') if i + 1 == b.len() => return Ok(()),
            Some(b')') => return Err((i + 1, "text after `)`: a label ends at its `)`".into())),
            Some(b'(') => {
                return Err((i, "a second `(`: quote a value holding parentheses".into()))
            }
            Some(_) => return Err((i, "expected `, ` or `)` after a quoted value".into())),
            None => {
                return Err((
                    start,
                    "unclosed `(`: expected `)` at the end of the label".into(),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {

    /// Found by the `label` fuzz target: in a chain `item = item = item` the middle word is
    /// the right side of one comparison and the left of the next; it was replaced twice
    /// (slicing out of order: a panic).
    #[test]
    fn chained_comparisons_instantiate_each_side_once() {
        assert_eq!(
            instantiate_text("item = item = item", "item", "knife"),
            "\"knife\" = \"knife\" = \"knife\""
        );
        let fuzz = "=\0 = item = item-\0\u{16}q\u{1}= , !=  s\0(z, =x\" -\0\u{16}q\u{1}= , !=  s\0(z, =x\" y\0)";
        let _ = instantiate_text(fuzz, "item", "knife");
    }
    use super::*;

    #[test]
    fn comparisons_in_names_and_texts_take_quoted_values() {
        assert_eq!(instantiate_name("=(a, b)", "a", "x y"), "=(\"x y\", b)");
        let both = instantiate_name("=(\"x y\", b)", "b", "w");
        assert_eq!(both, "=(\"x y\", \"w\")");
        assert_eq!(comparison_value(&both), Some(false));
        assert_eq!(comparison_value("=(a, \"w\")"), None);
        assert_eq!(comparison_value("=(\"w\", \"w\")"), Some(true));
        assert_eq!(comparison_value("take(w)"), None);
        assert_eq!(
            instantiate_text(
                "G(p(a) & a != b -> a = \"k\" | \"a = b\")",
                "a, b",
                "x, \"y,z\""
            ),
            "G(p(x) & \"x\" != \"y,z\" -> \"x\" = \"k\" | \"a = b\")"
        );
    }

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

#[cfg(test)]
mod value_tests {
    use super::*;

    /// Every string survives format → label → check → split → parse, alone and beside
    /// another value; equal labels only for equal values.
    #[test]
    fn any_value_survives_the_label_round_trip() {
        fn prop(a: String, b: String) -> bool {
            let (fa, fb) = (format_value(&a), format_value(&b));
            let one = format!("f({fa})");
            let two = format!("f({fa}, {fb})");
            let ok1 = check_label(&one).is_ok()
                && canonical_label(&one).unwrap() == one
                && split_atom_name(&one) == Some(("f", &*fa))
                && parse_value(&fa).as_deref() == Some(a.as_str());
            let (_, args) = split_atom_name(&two).unwrap();
            let back: Vec<String> = split_list(args)
                .map(|t| parse_value(t).unwrap().into_owned())
                .collect();
            let ok2 = check_label(&two).is_ok() && back == vec![a.clone(), b.clone()];
            // Different values, different labels.
            ok1 && ok2 && ((fa == fb) == (a == b))
        }
        quickcheck::QuickCheck::new()
            .tests(3000)
            .quickcheck(prop as fn(String, String) -> bool);
        // Strings made of the characters that matter.
        let alphabet = ["a", ",", " ", "(", ")", "\"", "\\", ", ", "  ", "é"];
        let mut n = 0;
        for i in 0..alphabet.len().pow(4) {
            let mut v = String::new();
            let mut k = i;
            for _ in 0..4 {
                v.push_str(alphabet[k % alphabet.len()]);
                k /= alphabet.len();
            }
            assert!(prop(v.clone(), "x, \"y\"".into()), "{v:?}");
            n += 1;
        }
        assert_eq!(n, 10_000);
    }

    #[test]
    fn values_are_written_bare_or_quoted() {
        assert_eq!(format_value("knife"), "knife");
        assert_eq!(format_value("red hot pepper"), "red hot pepper");
        assert_eq!(format_value("cut -d, -f1 a.csv"), "\"cut -d, -f1 a.csv\"");
        assert_eq!(format_value("cut -d -f1 a.csv"), "cut -d -f1 a.csv");
        assert_eq!(format_value("a  b"), "a  b");
        assert_eq!(format_value(" a"), "\" a\"");
        assert_eq!(format_value(""), "\"\"");
        assert_eq!(format_value(r#"say "hi" \o/"#), r#""say \"hi\" \\o/""#);
        assert_eq!(
            split_list(r#""a, b", c, "d\", e""#).collect::<Vec<_>>(),
            vec![r#""a, b""#, "c", r#""d\", e""#]
        );
        assert_eq!(
            split_atom_name(r#"run("echo (a), b")"#),
            Some(("run", r#""echo (a), b""#))
        );
        assert_eq!(canonical_label(r#"take("knife")"#).unwrap(), "take(knife)");
        assert_eq!(
            instantiate_name("run(c)", "c", r#""ls -l (x)""#),
            r#"run("ls -l (x)")"#
        );
    }

    #[test]
    fn malformed_quoted_values_are_errors_at_the_problem() {
        let cases: [(&str, usize, &str); 6] = [
            (r#"run("echo"#, 4, "unclosed `\"`"),
            (r#"run("a\nb")"#, 6, "escapes only"),
            (r#"run("a" x)"#, 7, "expected `, ` or `)`"),
            (r#"run("a")x"#, 8, "text after `)`"),
            (r#"run("a",b)"#, 8, "one space after `,`"),
            (r#"run("a", )"#, 9, "empty value"),
        ];
        for (l, offset, what) in cases {
            let e = check_label(l).expect_err(l);
            assert_eq!(e.offset, offset, "{l}: {}", e.message);
            assert!(e.message.contains(what), "{l}: {}", e.message);
        }
    }
}
