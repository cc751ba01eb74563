//! The RON source map: a lenient scanner of a spec's text, run after ron accepted it, that
//! finds where the fields of each proposition and property are written (byte offsets, and
//! line and column).

use std::collections::HashMap;

/// True when `src` holds only whitespace and RON comments (`// ...`, `/* ... */`).
pub(super) fn is_blank_ron(src: &str) -> bool {
    let mut rest = src.trim_start();
    loop {
        if rest.is_empty() {
            return true;
        }
        if let Some(r) = rest.strip_prefix("//") {
            rest = r
                .split_once('\n')
                .map_or("", |(_, after)| after)
                .trim_start();
        } else if let Some(r) = rest.strip_prefix("/*") {
            match r.split_once("*/") {
                Some((_, after)) => rest = after.trim_start(),
                None => return false,
            }
        } else {
            return false;
        }
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub(super) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |k| k + 1);
    (line, text[line_start..offset].chars().count() + 1)
}

// ---------------------------------------------------------------------------------------------
// A lenient scanner of the RON text, run after ron accepted it, that finds where the fields of
// each proposition and property are written.

/// A string literal in the RON source.
#[derive(Clone, Debug)]
pub(super) struct Lit {
    /// Offset of the literal's first byte (`"` or `r`).
    pub(super) start: usize,
    /// Offset of the first byte of the content.
    pub(super) content: usize,
    /// Offset just past the content (before the closing quote).
    pub(super) content_end: usize,
    pub(super) raw: bool,
}

impl Lit {
    /// The source offset of byte `off` of the decoded string.
    pub(super) fn source_offset(&self, text: &str, off: usize) -> usize {
        if self.raw {
            return (self.content + off).min(self.content_end);
        }
        let body = &text[self.content..self.content_end];
        let mut decoded = 0usize;
        let mut it = body.char_indices().peekable();
        while let Some((i, c)) = it.next() {
            if decoded >= off {
                return self.content + i;
            }
            if c != '\\' {
                decoded += c.len_utf8();
                continue;
            }
            let esc = it.next().map(|(_, e)| e);
            let ch = match esc {
                Some('x') => {
                    let h: String = (0..2).filter_map(|_| it.next().map(|(_, d)| d)).collect();
                    u8::from_str_radix(&h, 16).map_or('?', char::from)
                }
                Some('u') => {
                    let mut h = String::new();
                    for (_, d) in it.by_ref() {
                        if d == '}' {
                            break;
                        }
                        if d != '{' {
                            h.push(d);
                        }
                    }
                    u32::from_str_radix(&h, 16)
                        .ok()
                        .and_then(char::from_u32)
                        .unwrap_or('?')
                }
                _ => 'x',
            };
            decoded += ch.len_utf8();
        }
        self.content_end
    }
}

#[derive(Clone, Debug, Default)]
pub(super) struct Field {
    /// Offset of the field's value.
    pub(super) value: usize,
    /// The string literals inside the value, in order.
    pub(super) strings: Vec<Lit>,
}

/// One struct in a list (a proposition or a property).
#[derive(Clone, Debug, Default)]
pub(super) struct Item {
    pub(super) start: usize,
    pub(super) fields: HashMap<String, Field>,
    /// The structs of its `examples` list, in order: where each starts and the fields it
    /// writes (what the defaults of serde hide: an example without `holds`).
    pub(super) examples: Vec<(usize, Vec<String>)>,
}

impl Item {
    /// Where the field's value is written, else where the struct starts.
    pub(super) fn value_start(&self, field: &str) -> usize {
        self.fields.get(field).map_or(self.start, |f| f.value)
    }
}

#[derive(Default)]
pub(super) struct SourceMap {
    pub(super) propositions: Vec<Item>,
    pub(super) properties: Vec<Item>,
}

#[derive(Clone, Debug)]
pub(super) enum Tok {
    Open(u8, usize),
    Close(usize),
    Ident(String, usize),
    Colon,
    Comma,
    Str(Lit),
    Other(usize),
}

pub(super) fn lex(text: &str) -> Vec<Tok> {
    let b = text.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if b[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'#' => {
                // `#![enable(...)]` attributes: skip to the closing bracket.
                let mut depth = 0;
                while i < b.len() {
                    match b[i] {
                        b'[' => depth += 1,
                        b']' => {
                            depth -= 1;
                            if depth == 0 {
                                i += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            b'(' | b'[' | b'{' => {
                toks.push(Tok::Open(c, i));
                i += 1;
            }
            b')' | b']' | b'}' => {
                toks.push(Tok::Close(i));
                i += 1;
            }
            b':' => {
                toks.push(Tok::Colon);
                i += 1;
            }
            b',' => {
                toks.push(Tok::Comma);
                i += 1;
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                let end = i.min(b.len());
                toks.push(Tok::Str(Lit {
                    start,
                    content: start + 1,
                    content_end: end,
                    raw: false,
                }));
                i = end + 1;
            }
            b'r' if matches!(b.get(i + 1), Some(b'"') | Some(b'#')) => {
                let start = i;
                let mut j = i + 1;
                let hashes = b[j..].iter().take_while(|&&x| x == b'#').count();
                j += hashes;
                if b.get(j) != Some(&b'"') {
                    toks.push(Tok::Ident("r".into(), i));
                    i += 1;
                    continue;
                }
                let content = j + 1;
                let mut closing = "\"".to_string();
                closing.push_str(&"#".repeat(hashes));
                let end = text[content..]
                    .find(&closing)
                    .map_or(b.len(), |k| content + k);
                toks.push(Tok::Str(Lit {
                    start,
                    content,
                    content_end: end,
                    raw: true,
                }));
                i = (end + closing.len()).min(b.len());
            }
            b'\'' => {
                let start = i;
                i += 1;
                if b.get(i) == Some(&b'\\') {
                    i += 2;
                }
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
                toks.push(Tok::Other(start));
            }
            _ if c == b'_' || c.is_ascii_alphabetic() => {
                let start = i;
                while i < b.len() && (b[i] == b'_' || b[i].is_ascii_alphanumeric()) {
                    i += 1;
                }
                toks.push(Tok::Ident(text[start..i].to_string(), start));
            }
            _ => {
                toks.push(Tok::Other(i));
                i += 1;
            }
        }
    }
    toks
}

impl SourceMap {
    pub(super) fn build(text: &str) -> SourceMap {
        let toks = lex(text);
        let mut map = SourceMap::default();
        // The top-level struct: the first `(`.
        let Some(open) = toks.iter().position(|t| matches!(t, Tok::Open(b'(', _))) else {
            return map;
        };
        for (key, _, value) in struct_fields(&toks, open) {
            let list = match key.as_str() {
                "propositions" => &mut map.propositions,
                "properties" => &mut map.properties,
                _ => continue,
            };
            // value: `[` item, item, ... `]`
            if let Some(Tok::Open(b'[', _)) = toks.get(value) {
                for elem in elements(&toks, value) {
                    let mut k = elem;
                    if let Some(Tok::Ident(_, _)) = toks.get(k) {
                        k += 1;
                    }
                    let Some(Tok::Open(b'(', start)) = toks.get(k) else {
                        list.push(Item::default());
                        continue;
                    };
                    let mut item = Item {
                        start: *start,
                        fields: HashMap::new(),
                        examples: Vec::new(),
                    };
                    for (fk, _, fv) in struct_fields(&toks, k) {
                        if fk == "examples" {
                            item.examples = structs_of(&toks, fv);
                        }
                        let end = value_end(&toks, fv);
                        let strings = toks[fv..end]
                            .iter()
                            .filter_map(|t| match t {
                                Tok::Str(l) => Some(l.clone()),
                                _ => None,
                            })
                            .collect();
                        item.fields.insert(
                            fk,
                            Field {
                                value: tok_offset(&toks[fv]),
                                strings,
                            },
                        );
                    }
                    list.push(item);
                }
            }
        }
        map
    }
}

/// The structs of the list whose value starts at token `value` (`[(..), ..]`): per element,
/// where it starts and the names of its fields.
fn structs_of(toks: &[Tok], value: usize) -> Vec<(usize, Vec<String>)> {
    if !matches!(toks.get(value), Some(Tok::Open(b'[', _))) {
        return Vec::new();
    }
    elements(toks, value)
        .into_iter()
        .map(|e| {
            let k = if matches!(toks.get(e), Some(Tok::Ident(..))) {
                e + 1
            } else {
                e
            };
            let fields = match toks.get(k) {
                Some(Tok::Open(b'(', _)) => {
                    struct_fields(toks, k).into_iter().map(|f| f.0).collect()
                }
                _ => Vec::new(),
            };
            (tok_offset(&toks[e]), fields)
        })
        .collect()
}

pub(super) fn tok_offset(t: &Tok) -> usize {
    match t {
        Tok::Open(_, o) | Tok::Close(o) | Tok::Ident(_, o) | Tok::Other(o) => *o,
        Tok::Str(l) => l.start,
        Tok::Colon | Tok::Comma => 0,
    }
}

/// Index just past the value starting at token `i` (up to the next `,` or closing bracket at the
/// same depth).
pub(super) fn value_end(toks: &[Tok], mut i: usize) -> usize {
    let mut depth = 0i32;
    while i < toks.len() {
        match toks[i] {
            Tok::Open(..) => depth += 1,
            Tok::Close(_) => {
                if depth == 0 {
                    return i;
                }
                depth -= 1;
            }
            Tok::Comma if depth == 0 => return i,
            _ => {}
        }
        i += 1;
    }
    i
}

/// The start tokens of the elements of the bracket group opened at `open`.
pub(super) fn elements(toks: &[Tok], open: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = open + 1;
    while i < toks.len() {
        if matches!(toks[i], Tok::Close(_)) {
            break;
        }
        out.push(i);
        i = value_end(toks, i);
        if matches!(toks.get(i), Some(Tok::Comma)) {
            i += 1;
        }
    }
    out
}

/// `(key, key token, value token)` for the fields of the struct opened at `open`.
pub(super) fn struct_fields(toks: &[Tok], open: usize) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    for e in elements(toks, open) {
        if let (Some(Tok::Ident(k, _)), Some(Tok::Colon)) = (toks.get(e), toks.get(e + 1)) {
            if e + 2 < toks.len() {
                out.push((k.clone(), e, e + 2));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn escaped_offsets_map_to_source() {
        let text = r#"(formula: "a \"b\" \u{e9}c")"#;
        let toks = lex(text);
        let lit = toks
            .iter()
            .find_map(|t| match t {
                Tok::Str(l) => Some(l.clone()),
                _ => None,
            })
            .unwrap();
        let decoded = "a \"b\" \u{e9}c";
        let c_at = decoded.find('c').unwrap();
        assert_eq!(&text[lit.source_offset(text, c_at)..][..1], "c");
        let b_at = decoded.find('b').unwrap();
        assert_eq!(&text[lit.source_offset(text, b_at)..][..1], "b");
    }

    #[test]
    pub(super) fn line_col_counts_chars() {
        assert_eq!(line_col("ab\ncé d", 8), (2, 5));
        assert_eq!(line_col("x", 0), (1, 1));
    }
}
