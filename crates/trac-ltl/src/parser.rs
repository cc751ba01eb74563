//! Parser for LTL formulas in Spot's syntax, extended with NuSMV's past-time operators.
//!
//! [`parse`] reads one formula, [`parse_property`] a formula with an optional universally
//! quantified parameter (`forall item: G(take(item) -> X examine(item))`). Formulas are built
//! through the [`Arena`]'s normalizing constructors, so the result is already in normal form.
//! The parser never panics: every input either parses or yields a [`ParseError`] with a message
//! and the byte span of the offending text, which [`ParseError::render`] shows under the source
//! line with carets.
//!
//! # Grammar
//!
//! ```text
//! property = [ "forall" ident { "," ident } ":" ] formula ;
//! formula  = equiv ;
//! equiv    = or    { ( "->" | "=>" | "-->" | "<->" | "<=>" | "<-->" ) or } ;    (* right assoc. *)
//! or       = xor   { ( "|" | "||" | "\/" | "+" ) xor } ;
//! xor      = and   { ( "xor" | "^" ) and } ;                                  (* left assoc. *)
//! and      = until { ( "&" | "&&" | "/\" | "*" ) until } ;
//! until    = unary { ( "U" | "W" | "R" | "V" | "M" | "S" ) unary } ;          (* right assoc. *)
//! unary    = prefix unary | primary ;
//! prefix   = "!" | "~" | "X" | "()" | "X[!]" | "X[" digits "]" | "X[" digits "!]"
//!          | "F" | "<>" | "G" | "[]" | "Y" | "Z" | "O" | "H"
//!          | ( "F" | "G" ) "[" digits ( ":" | ".." ) ( digits | "$" ) [ "!" ] "]"
//!          | ( "Y" | "Z" ) "[" digits "]" | ( "O" | "H" ) "[" digits ( ":" | ".." ) ( digits | "$" ) "]" ;
//! primary  = "true" | "false" | "1" | "0" | "end" | count | compare | atom [ "=0" | "=1" ] | "(" formula ")" ;
//! compare  = ident ( "=" | "!=" ) ( ident | string ) ;      (* quantified properties only *)
//! count    = "count" [ "[" digits "]" ] "(" formula ")" ( ">=" | ">" | "<=" | "<" | "==" | "!=" ) digits ;
//! atom     = ident [ "(" arg ")" ] | string ;         (* no space between ident and "(" *)
//! arg      = value | string ;
//! ident    = ( letter | "_" | "." ) { letter | digit | "_" | "." } ;   (* see lexing below *)
//! value    = { letter | digit | "_" | "." | "-" }- ;
//! string   = '"' { any character but '"' and '\' | '\' any character } '"' ;
//! ```
//!
//! Precedence, from loosest to tightest, is Spot's (`spot/parsetl/parsetl.yy`:
//! `%right OP_IMPLIES OP_EQUIV`, `%left OP_OR`, `%left OP_XOR`, `%left OP_AND`,
//! `%right OP_U OP_R OP_M OP_W`, then the prefix operators): `->`/`<->` (one level, right
//! associative: `a -> b -> c` is `a -> (b -> c)`), `|`, `xor` (so `a xor b | c` is
//! `(a xor b) | c`), `&`, the binary temporal operators `U W R M S` (one level, right
//! associative), and the prefix operators, which bind tightest (`!a U b` is `(!a) U b`,
//! `X a U b` is `(X a) U b`, `G a & b` is `(G a) & b`). Since `S` (since) has the precedence
//! of `U`. Whitespace (any Unicode white space) and `/* ... */` comments (nesting) may appear
//! between tokens.
//!
//! Other accepted spellings, all from Spot: `TRUE`/`True` and `FALSE`/`False` (the constants
//! are case-insensitive); Wring's postfix `a=0` (`!a`) and `a=1` (`a`) on atomic propositions;
//! Spot's Unicode operators `¬ ∧ ∩ ∨ ∪ ⊕ → ⟶ ⇒ ⟹ ↔ ⇔ □ ⬜ ◻ ◇ ⋄ ♢ ○ ◯ Ⓧ`; `X[n]` / `X[n!]`
//! for `n` nested `X` / `X[!]`; `X[]a` is `X G a` and `F[]a` is `F G a`; Spot's bounded
//! `F[n:m]`, `G[n:m]` (`$` for no upper bound, `!]` strong) and their past counterparts,
//! `count(...)` comparisons and `end`, expanded as [`crate::sugar`] describes (bounds at most
//! [`crate::sugar::MAX_BOUND`]). Not supported (an error rather than a different reading):
//! PSL/SERE syntax (`{...}`, `[*]`, `;`, `|->`, ...).
//!
//! Comparisons of values (`a = b`, `a != b`, `a = "x"`, `a != "x"`) are trac's: in a property's
//! `forall` body, between its variables or a variable and a quoted value; each is the atom
//! `=(a, b)` (`a != b` its negation; see `trac_core::names::COMPARISON_BASE`), an error
//! anywhere else, at its place.
//!
//! # Lexing of identifiers (following Spot's `spot/parsetl/scantl.ll`)
//!
//! Atomic propositions are ASCII identifiers: a letter, `_` or `.`, followed by letters, digits,
//! `_` and `.`. Where a formula is expected:
//! - An identifier cannot start with `F`, `G` or `X` (Spot's rule
//!   `[a-zA-EH-WYZ_.][a-zA-Z0-9_.]*`): those letters are always the prefix operators, so a run of
//!   them glued to an identifier is a chain of prefix operators: `GFa` is `G(F(a))`, `Xb` is
//!   `X(b)`, `FOO` is `F(OO)`, `GXFoo` is `G(X(F(oo)))`. Exception: when followed by a digit the
//!   letter starts an identifier (`[FGX][0-9][a-zA-Z0-9_.]*`), so `X0`, `F1` and `G2x` are
//!   atomic propositions (write `X 0` for `X false`).
//! - Other identifiers are read greedily: `aUb`, `Ua`, `xorb` and `Ya` are atomic propositions.
//!   An identifier that is exactly `true` or `false` (any case), `xor`, or one of the operator
//!   letters `U W R V M S Y Z O H` is that keyword or operator.
//! - `Falsehood` is the constant `false` followed by `hood` (a syntax error), because Spot tries
//!   the case-insensitive constant `false` before the `F` operator; `falsehood` is an atom.
//! - An identifier immediately followed by `(` (no space) is a parametric proposition:
//!   `take(item)`, `load(package1)`, `delivered("red hot pepper")` are the atoms named
//!   `take(item)`, `load(package1)` and `delivered(red hot pepper)` (one argument; spaces around
//!   it are dropped; a quoted argument is stored without its quotes). Operators are not
//!   identifiers, so `F(a)`, `X(a)` and `Y(a)` apply the operator to `a`.
//!
//! Where a binary operator is expected (after an operand), Spot's `not_prop` start condition
//! applies: an identifier cannot start with a binary temporal operator letter, so `(a)Ub` and
//! `a Ub` are `a U b`. (Spot excludes `M R U V W` and `F G X` there; we also split `S`, which Spot
//! has no since-operator for; an identifier in that position is an error anyway, so this only
//! turns errors into parses.)
//!
//! Double-quoted atoms take any name (`"package 1 loaded"`, `"G"`, `"take(x y)"`); inside quotes
//! a backslash escapes the next character (`\"`, `\\`), as in Spot.
//!
//! # Where tools disagree
//!
//! - **Past operators.** Spot has none. NuSMV writes `Y`, `Z`, `O`, `H` (prefix) and `S`
//!   (binary); we follow NuSMV's letters and give `S` the precedence of `U`. Because these letters
//!   are not Spot operators, Spot reads `Ya`, `Hello` or `Ok` as atomic propositions; we keep that
//!   reading (`Y`, `Z`, `O`, `H`, `S` are operators only as standalone words, like `U W R V M` in
//!   Spot), so every Spot formula keeps its meaning. Write `Y a` or `Y(a)`, and `H Y a` rather
//!   than `HYa` (which is one atom). NuSMV agrees that `Ya` is an identifier (its operators are
//!   reserved words that must be separated), but NuSMV also reads `Xa` and `GFa` as identifiers,
//!   where we follow Spot. Yann Thierry-Mieg's Spot fork with past operators instead treats
//!   `Y`, `O`, `H` like `F`, `G`, `X` (so `Ya` is `Y(a)` there).
//! - **Constants.** Spot accepts `true`, `false`, `1`, `0` (case-insensitive words); NuSMV writes
//!   `TRUE`/`FALSE`, accepted here too.
//! - **Precedence of `xor`.** Spot binds `xor` tighter than `|` and looser than `&` (followed
//!   here). NuSMV gives `xor` and `|` the same level.
//! - **`->` and `<->`.** Spot puts both on one right-associative level (followed here); NuSMV
//!   gives `<->` a lower precedence than `->`, and some tools make `->` left associative.
//! - **Release.** Spot spells it `R` or `V`; NuSMV uses `V`. NuSMV's past `T` (trigger) is not
//!   supported: `T` is an atomic proposition, as in Spot.
//! - **Next.** `X` is weak next and `X[!]` strong next on finite traces (Spot's LTLf reading);
//!   `()` is Spot's (Spin's) spelling of `X`.

use crate::formula::{instantiate_name, Arena, Formula, Node};
pub use crate::lexical::split_exists;
use crate::lexical::{ident_len, is_plain_ident, is_value_byte};
use crate::render;
use crate::sugar::{self, Cmp, RangeOp, Step, MAX_BOUND};
use std::fmt;
use std::ops::Range;

/// Maximum syntactic nesting depth of a parsed formula (operators on a path from the root to a
/// leaf, counting `X[n]` as `n`). Deeper input is rejected so that recursive algorithms on the
/// result (printing, progression, ...) cannot overflow the stack. Parentheses do not count.
pub const MAX_DEPTH: usize = 1000;

/// The most characters of a source line [`ParseError::render`] shows.
pub const SHOWN_LINE_CHARS: usize = 120;

/// A parse error: a message and the byte span of the offending input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// What went wrong, e.g. ``expected a formula after `&` ``.
    pub message: String,
    /// Byte range in the source string (empty at the end of the input).
    pub span: Range<usize>,
}

impl ParseError {
    fn new(message: impl Into<String>, span: Range<usize>) -> ParseError {
        ParseError {
            message: quote_snippets(message.into()),
            span,
        }
    }

    /// The error rendered with the offending source line and carets under the span:
    ///
    /// ```text
    /// error: expected a formula after `&`
    ///   |
    /// 1 | G (a & )
    ///   |        ^
    /// ```
    ///
    /// The gutter shows the line number (1-based) of the span's start; columns are counted in
    /// characters, and tabs before the caret are kept so the caret lines up. A span running past
    /// the end of its line is underlined to the end of the line. A line longer than
    /// [`SHOWN_LINE_CHARS`] is shown as a window around the caret, `…` where it was cut
    /// ([`trac_core::snippet::window`]). No trailing newline.
    pub fn render(&self, src: &str) -> String {
        let start = floor_char_boundary(src, self.span.start);
        let line_start = src[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = src[start..].find('\n').map_or(src.len(), |i| start + i);
        let line = src[line_start..line_end].trim_end_matches('\r');
        let line_no = src[..line_start].matches('\n').count() + 1;
        let end = floor_char_boundary(src, self.span.end.clamp(start, line_end));
        // A long line (a 200 KB formula) is shown as a window around the caret.
        let (line, col) = trac_core::snippet::window(line, start - line_start, SHOWN_LINE_CHARS);
        let line = line.as_str();
        let width = src[start..end]
            .chars()
            .count()
            .min(line.chars().count().saturating_sub(col))
            .max(1);
        let pad = " ".repeat(line_no.to_string().len());
        let indent: String = line
            .chars()
            .take(col)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let text_line = if line.is_empty() {
            format!("{line_no} |")
        } else {
            format!("{line_no} | {line}")
        };
        format!(
            "error: {}\n{pad} |\n{text_line}\n{pad} | {indent}{}",
            self.message,
            "^".repeat(width)
        )
    }
}

/// `message` with each input it quotes between backticks cut to a snippet
/// ([`trac_core::snippet::snippet`]): an error about a 200 KB atom does not copy it whole.
/// O(len(message)).
fn quote_snippets(message: String) -> String {
    let parts: Vec<&str> = message.split('`').collect();
    // Odd parts are quoted (an unbalanced last backtick leaves its tail as is).
    if !parts
        .iter()
        .skip(1)
        .step_by(2)
        .any(|q| q.len() > trac_core::snippet::SNIPPET_CHARS)
    {
        return message;
    }
    let n = parts.len();
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i % 2 == 1 && i + 1 < n {
                trac_core::snippet::snippet(p, trac_core::snippet::SNIPPET_CHARS)
            } else {
                std::borrow::Cow::Borrowed(*p)
            }
        })
        .collect::<Vec<_>>()
        .join("`")
}

fn floor_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at {}..{}",
            self.message, self.span.start, self.span.end
        )
    }
}

impl std::error::Error for ParseError {}

/// A property formula with an optional universally quantified parameter:
/// `forall item: G(take(item) -> X examine(item))`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Property {
    /// The quantified variable, if any (`item` above). Several variables
    /// (`forall tool, rid: ...`) are kept as one list joined by `, ` (`tool, rid`), which every
    /// instantiation function reads as such (`trac_core::names::split_list`); see
    /// [`Property::vars`].
    pub var: Option<String>,
    /// The body; atoms mention the variable as their argument (`take(item)`).
    pub body: Formula,
}

impl Property {
    /// The quantified variables, in the order written (none for an unquantified property).
    pub fn vars(&self) -> Vec<&str> {
        self.var
            .as_deref()
            .map_or(Vec::new(), |v| v.split(", ").collect())
    }
}

/// Parses one LTL formula in Spot syntax (see the [module docs](self) for the grammar).
///
/// A `forall VAR:` prefix is rejected here; use [`parse_property`] for quantified properties.
pub fn parse(arena: &mut Arena, src: &str) -> Result<Formula, ParseError> {
    if let Some(q) = quantifier(src)? {
        return Err(ParseError::new(
            "a `forall` quantifier is only allowed in a property",
            q.span,
        ));
    }
    if let Some(e) = quantifier_near_miss(src) {
        return Err(e);
    }
    Parser::new(arena, src, 0).run()
}

/// Parses `[forall VAR:] FORMULA`; error spans are relative to the whole `src`.
///
/// `forall` starts a quantifier when followed by white space, an identifier and `:`
/// (`forall item:`); `forall item` without the colon is an error. Otherwise `forall` is an
/// ordinary atomic proposition (`forall U b`, `forall_x`, `forall(x)`).
///
/// Several variables are separated by commas (`forall tool, rid: ...`, stored as the list
/// `tool, rid` in [`Property::var`]); a variable given twice is an error at its second place.
/// Near misses are errors that name the problem: variables without commas (`forall x y:`), a second
/// quantifier (`forall x: forall y:`), a misspelled or other quantifier (`foral x:`,
/// `for all x:`, `∀x:`, `exists x:`), no variable (`forall:`), a dot for the colon (`forall x.`).
pub fn parse_property(arena: &mut Arena, src: &str) -> Result<Property, ParseError> {
    match quantifier(src)? {
        Some(q) => {
            let body = &src[q.body_start..];
            let nested = match quantifier(body) {
                Ok(Some(inner)) => Some(inner.span),
                Ok(None) => quantifier_near_miss(body).map(|e| e.span),
                Err(e) => Some(e.span),
            };
            if let Some(span) = nested {
                return Err(ParseError::new(
                    format!(
                        "a property has one `forall` (list every variable in it: `forall {}, y: ...`); this is a second quantifier",
                        q.var
                    ),
                    q.body_start + span.start..q.body_start + span.end,
                ));
            }
            let body = Parser::new(arena, src, q.body_start)
                .with_vars(&q.var)
                .run()?;
            Ok(Property {
                var: Some(q.var),
                body,
            })
        }
        None => {
            if let Some(e) = quantifier_near_miss(src) {
                return Err(e);
            }
            Ok(Property {
                var: None,
                body: Parser::new(arena, src, 0).run()?,
            })
        }
    }
}

/// Checks that every variable of `prop`'s `forall` (parsed from `src` by [`parse_property`])
/// is an argument of some atom of the body, or of an `exists` body in it (other than that
/// quantifier's own variable). A comparison (`a != b`) does not count: it gives its variables
/// no value, so a variable only compared would never have one.
///
/// # Errors
/// The first unused variable, with the span of its name in the `forall` prefix of `src`.
pub fn check_vars_used(arena: &Arena, prop: &Property, src: &str) -> Result<(), ParseError> {
    let vars = prop.vars();
    let mut used = vec![false; vars.len()];
    let mut mark = |args: &str, except: Option<&str>| {
        for a in trac_core::names::split_list(args) {
            if Some(a) == except {
                continue;
            }
            if let Some(i) = vars.iter().position(|v| *v == a) {
                used[i] = true;
            }
        }
    };
    for s in arena.atoms(prop.body) {
        let parts = arena.sym_parts(s);
        if parts.base == trac_core::names::COMPARISON_BASE {
            // A comparison gives its variables no value: an atom must.
            continue;
        }
        if let Some(args) = &parts.arg {
            mark(args, None);
        } else if let Some((q, body)) = split_exists(&parts.name) {
            let mut inner = Arena::new();
            if let Ok(b) = Parser::new(&mut inner, body, 0).run() {
                for t in inner.atoms(b) {
                    if let Some(args) = &inner.sym_parts(t).arg {
                        mark(args, Some(q));
                    }
                }
            }
        }
    }
    let colon = src.find(':').unwrap_or(src.len());
    for (v, u) in vars.iter().zip(used) {
        if u {
            continue;
        }
        // The variable's name in the prefix, as a whole word.
        let head = &src[..colon];
        let at = head
            .match_indices(v)
            .map(|(i, _)| i)
            .find(|&i| {
                let before = head[..i].chars().next_back();
                let after = head[i + v.len()..].chars().next();
                !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
            .unwrap_or(0);
        return Err(ParseError::new(
            format!("quantified variable `{v}` is not used in the formula (no atom has it as an argument)"),
            at..at + v.len(),
        ));
    }
    Ok(())
}

/// Levenshtein distance between two short ASCII-lowercased words (O(|a|·|b|)).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A formula that starts like a quantifier but is not `forall VAR:`: `foral x:`, `for all x:`,
/// `exists x:`, `∀x:`, `forall x, y:`, `forall x y:`, `forall: ...`, `forall x. ...`. Colons
/// occur in formulas only inside quoted names, so a `:` before any quote after a few words is a
/// quantifier attempt; the error names what is wrong instead of "missing binary operator".
fn quantifier_near_miss(src: &str) -> Option<ParseError> {
    let start = src.len() - src.trim_start().len();
    let rest = &src[start..];
    let first_word = |s: &str| {
        s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()
            .unwrap_or("")
            .to_string()
    };
    let w0 = first_word(rest);
    let after_w0 = rest[w0.len()..].trim_start();
    // `forall x. body`: the logician's dot.
    if w0 == "forall" {
        let var = &after_w0[..ident_len(after_w0)];
        if let Some(v) = var
            .strip_suffix('.')
            .filter(|v| !v.is_empty() && !v.contains('.'))
        {
            let at = src.len() - after_w0.len() + v.len();
            return Some(ParseError::new(
                format!("write `forall {v}:` with a colon after the variable, not a dot"),
                at..at + 1,
            ));
        }
        if after_w0.starts_with(':') {
            let at = src.len() - after_w0.len();
            return Some(ParseError::new(
                "expected a variable between `forall` and `:` (`forall item: ...`)",
                at..at + 1,
            ));
        }
    }
    let colon = rest.find(':')?;
    if rest[..colon].contains('"') {
        return None;
    }
    let head = &rest[..colon];
    let (quant, vars_src) = if let Some(v) = head.strip_prefix('∀') {
        ("∀".to_string(), v)
    } else if w0.eq_ignore_ascii_case("for") && first_word(after_w0).eq_ignore_ascii_case("all") {
        let all_at = rest.len() - after_w0.len();
        (format!("{w0} {}", &after_w0[..3]), &rest[all_at + 3..colon])
    } else {
        (w0.clone(), &rest[w0.len()..colon])
    };
    if quant.is_empty() {
        return None;
    }
    let vars: Vec<&str> = vars_src
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|v| !v.is_empty())
        .collect();
    let is_var = |v: &&str| {
        v.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if vars.is_empty() || !vars.iter().all(is_var) {
        return None;
    }
    let quant_span = start..start + quant.len();
    if quant == "forall" {
        // `forall x, y:` is a quantifier over a tuple; `forall x y:` misses the commas.
        let listed = vars_src.split(',').all(|v| is_var(&v.trim()));
        if vars.len() < 2 || listed {
            return None;
        }
        let second = vars_src.find(vars[1]).map_or(0, |i| i + w0.len());
        return Some(ParseError::new(
            format!(
                "separate the variables of `forall` with `,`: `forall {}: ...`",
                vars.join(", ")
            ),
            start + second..start + colon,
        ));
    }
    let known = quant.eq_ignore_ascii_case("forall")
        || quant == "∀"
        || quant.to_lowercase() == "for all"
        || edit_distance(&quant, "forall") <= 2;
    if quant == "exists" && vars.len() == 1 && vars_src.trim() == vars[0] {
        return None; // `exists VAR: body`, a past-time quantifier (`Lexer::exists`).
    }
    let message = if quant == "exists" {
        format!(
            "`exists` takes one variable, not {} ({}): nest them, `exists {}: (exists {}: ...)`",
            vars.len(),
            vars.join(", "),
            vars[0],
            vars[1..].join(", ")
        )
    } else if quant.eq_ignore_ascii_case("exists") || quant == "∃" {
        format!(
            "`{quant}` is not supported: only `forall VAR:` quantifies a property (write the existential as `F` over the values' labels)"
        )
    } else if known {
        format!(
            "`{quant}` is not a quantifier: did you mean `forall {}:`?",
            vars[0]
        )
    } else {
        format!(
            "`{quant} {}:` looks like a quantifier, but the only one is `forall VAR:`",
            vars.join(" ")
        )
    };
    Some(ParseError::new(message, quant_span))
}

struct Quantifier {
    var: String,
    span: Range<usize>,
    body_start: usize,
}

/// Recognizes a leading `forall VAR:`. `Ok(None)` when the input does not start with a
/// quantifier; an error when it starts with `forall VAR` but lacks the colon.
fn quantifier(src: &str) -> Result<Option<Quantifier>, ParseError> {
    let start = src.len() - src.trim_start().len();
    let rest = &src[start..];
    let Some(after) = rest.strip_prefix("forall") else {
        return Ok(None);
    };
    let trimmed = after.trim_start();
    if trimmed.len() == after.len() {
        return Ok(None); // `forall` glued to something else: an atom such as `forall_x`.
    }
    let len = ident_len(trimmed);
    let var = &trimmed[..len];
    if !var.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        return Ok(None);
    }
    // Further variables: `forall x, y, z:`.
    let mut vars = vec![var];
    let mut tail = &trimmed[len..];
    while let Some(next) = tail.trim_start().strip_prefix(',') {
        let t = next.trim_start();
        let l = ident_len(t);
        let v = &t[..l];
        let at = src.len() - t.len();
        if !is_plain_ident(v) {
            return Err(ParseError::new(
                "expected a variable after `,` in `forall` (`forall x, y: ...`)",
                at..at + t.chars().next().map_or(0, char::len_utf8),
            ));
        }
        if vars.contains(&v) {
            return Err(ParseError::new(
                format!("variable `{v}` is quantified twice in this `forall`"),
                at..at + l,
            ));
        }
        vars.push(v);
        tail = &t[l..];
    }
    if vars.len() > 1 && !vars.iter().all(|v| is_plain_ident(v)) {
        return Ok(None);
    }
    let var = vars.join(", ");
    let var = var.as_str();
    let colon_rest = tail.trim_start();
    let colon_at = src.len() - colon_rest.len();
    if !colon_rest.starts_with(':') {
        if let Some(e) = quantifier_near_miss(src) {
            return Err(e); // `forall x, y:`, `forall x. ...`
        }
        if vars.len() == 1 && (!is_plain_ident(var) || trimmed[len..].starts_with('(')) {
            return Ok(None); // e.g. `forall U b`: the atom `forall` until `b`.
        }
        let end = colon_at + colon_rest.chars().next().map_or(0, char::len_utf8);
        return Err(ParseError::new(
            format!("expected `:` after `forall {var}`"),
            colon_at..end,
        ));
    }
    Ok(Some(Quantifier {
        var: var.to_string(),
        span: start..colon_at + 1,
        body_start: colon_at + 1,
    }))
}

/// Prints `f` as [`crate::printer::print`] does (the printer sits above the parser; both use
/// the engine in [`crate::render`]).
fn print(arena: &Arena, f: Formula) -> String {
    render::print(arena, f, exists_parses_alone)
}

/// Whether the `exists` atom named `name`, parenthesized, parses back alone as that atom: the
/// printer writes it so then, and quotes it otherwise (a quoted name such as
/// `"exists p: !q(p,"` does not parse back).
///
/// Memoized per thread: printing an `exists` body re-parses the `exists` atoms nested in it,
/// whose printing re-parses theirs, so without the memo nested quantifiers cost exponential
/// time (found by the `formula` fuzz target: a dozen nested `exists` took 27 s).
pub(crate) fn exists_parses_alone(name: &str) -> bool {
    memo(&EXISTS_PARSES, name, |name| {
        let text = format!("({name})");
        let mut arena = Arena::new();
        match parse(&mut arena, &text) {
            Ok(f) => matches!(arena.node(f), Node::Atom(s) if arena.sym_name(*s) == name),
            Err(_) => false,
        }
    })
}

thread_local! {
    static EXISTS_PARSES: std::cell::RefCell<std::collections::HashMap<String, bool>> =
        std::cell::RefCell::default();
    static CANONICAL_BODIES: std::cell::RefCell<std::collections::HashMap<String, String>> =
        std::cell::RefCell::default();
}

/// The most entries a memo keeps before it is emptied (memory stays bounded on long runs).
const MEMO_ENTRIES: usize = 4096;

/// `compute(key)`, remembered in `cache`. The cache is not borrowed while `compute` runs, since
/// it may recurse into the same memo.
fn memo<V: Clone>(
    cache: &'static std::thread::LocalKey<std::cell::RefCell<std::collections::HashMap<String, V>>>,
    key: &str,
    compute: impl FnOnce(&str) -> V,
) -> V {
    if let Some(v) = cache.with(|c| c.borrow().get(key).cloned()) {
        return v;
    }
    let v = compute(key);
    cache.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= MEMO_ENTRIES {
            c.clear();
        }
        c.insert(key.to_string(), v.clone());
    });
    v
}

/// The printed body of an `exists` quantifier, reprinted until it no longer changes (a fresh
/// arena may order the operands of `&` / `|` differently from the first), so that one body has
/// one name however it was written.
fn canonical_body(text: String) -> String {
    memo(&CANONICAL_BODIES, &text, |first| {
        let mut text = first.to_string();
        for _ in 0..4 {
            let mut arena = Arena::new();
            let Ok(f) = Parser::new(&mut arena, &text, 0).run() else {
                return text;
            };
            let again = print(&arena, f);
            if again == text {
                break;
            }
            text = again;
        }
        text
    })
}

/// The name of the `exists q: ψ` atom `name` with the variables `var` (a list `x, y` as
/// `trac_core::names::split_list` reads it; `q` itself excepted) replaced by `value` in ψ:
/// `exists p: !unload(p, a) S load(p, a)` for `a := a1` is
/// `exists p: !unload(p, a1) S load(p, a1)`, named in normal form as the parser names it.
/// `None` when `name` is not an `exists` atom or ψ does not mention `var`.
pub fn instantiate_exists(name: &str, var: &str, value: &str) -> Option<String> {
    let (q, body) = split_exists(name)?;
    let (mut vars, mut values) = (Vec::new(), Vec::new());
    for (x, v) in var.split(", ").zip(trac_core::names::split_list(value)) {
        if x != q {
            vars.push(x);
            values.push(v);
        }
    }
    if vars.is_empty() {
        return None;
    }
    let mut arena = Arena::new();
    let f = Parser::new(&mut arena, body, 0).run().ok()?;
    let g = arena.instantiate(f, &vars.join(", "), &values.join(", "));
    (g != f).then(|| format!("exists {q}: {}", canonical_body(print(&arena, g))))
}

/// Instantiation lives beside the parser: instantiating an `exists q: ψ` atom re-parses ψ and
/// names the result by its printed normal form ([`instantiate_exists`]).
impl Arena {
    /// Replaces every atom `base(var)` by `base(value)` (the instantiation of a parametric
    /// formula for one value of its quantified variable).
    ///
    /// Several parameters and variables as [`instantiate_name`] reads them: `var` may be a list
    /// `x, y` and `value` a tuple `v, w` (simultaneous substitution), and every argument equal
    /// to a variable is replaced (`load(p, a1)`). The body of an `exists q: ψ` atom is
    /// instantiated too, except for its own variable `q` (see
    /// [`instantiate_exists`]). The result is normalized, so instantiation may
    /// merge two atoms into one (`p(x) & !p(y)` for `x, y := a, a` is `false`).
    pub fn instantiate(&mut self, f: Formula, var: &str, value: &str) -> Formula {
        let var = var.to_string();
        let value = value.to_string();
        self.map_bottom_up(f, &mut |a: &mut Arena, x: Formula| {
            if let Node::Atom(s) = a.node(x) {
                let name = a.sym_name(*s);
                let renamed = if a.sym_parts(*s).arg.is_some() {
                    instantiate_name(name, &var, &value)
                } else {
                    instantiate_exists(name, &var, &value).unwrap_or_else(|| name.to_string())
                };
                if renamed != name {
                    return a.atom(&renamed);
                }
            }
            x
        })
    }
}

/// The operator named by a standalone one-letter word.
fn word_operator(s: &str) -> Option<Lexeme> {
    Some(match s {
        "U" => Lexeme::Binary(BinOp::Until),
        "W" => Lexeme::Binary(BinOp::WeakUntil),
        "R" | "V" => Lexeme::Binary(BinOp::Release),
        "M" => Lexeme::Binary(BinOp::StrongRelease),
        "S" => Lexeme::Binary(BinOp::Since),
        "Y" => Lexeme::Prefix(PrefixOp::Yesterday),
        "Z" => Lexeme::Prefix(PrefixOp::WeakYesterday),
        "O" => Lexeme::Prefix(PrefixOp::Once),
        "H" => Lexeme::Prefix(PrefixOp::Historically),
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// Lexer

/// A bounded operator's bracket: `[lo]` (`hi` `None`), `[lo:m]` (`Some(Some(m))`) or `[lo:$]`
/// (`Some(None)`), strong with `!]`; `end` is the offset after the `]`.
struct Bracket {
    lo: u32,
    hi: Option<Option<u32>>,
    strong: bool,
    end: usize,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum PrefixOp {
    Not,
    Next,
    StrongNext,
    /// `X[n]` (weak) or `X[n!]` (strong).
    NextN(u32, bool),
    /// `Y[n]` or `Z[n]`.
    PastN(Step, u32),
    /// `F[n:m]`, `G[n:m]`, `O[n:m]`, `H[n:m]` (`None` for `$`); strong with `!]`.
    Range(RangeOp, bool, u32, Option<u32>),
    Finally,
    Globally,
    Yesterday,
    WeakYesterday,
    Once,
    Historically,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum BinOp {
    Implies,
    Equiv,
    Or,
    Xor,
    And,
    Until,
    WeakUntil,
    Release,
    StrongRelease,
    Since,
}

impl BinOp {
    /// Precedence level, loosest first.
    fn level(self) -> u8 {
        match self {
            BinOp::Implies | BinOp::Equiv => 0,
            BinOp::Or => 1,
            BinOp::Xor => 2,
            BinOp::And => 3,
            BinOp::Until
            | BinOp::WeakUntil
            | BinOp::Release
            | BinOp::StrongRelease
            | BinOp::Since => 4,
        }
    }

    fn right_assoc(self) -> bool {
        matches!(self.level(), 0 | 4)
    }
}

/// Punctuation-like lexemes that need no payload.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Lexeme {
    Prefix(PrefixOp),
    Binary(BinOp),
    PostNeg,
    PostPos,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Atom(String),
    /// `count(BODY) CMP K` or `count[W](BODY) CMP K`: the body's span, the window, the
    /// comparison and the constant.
    Count(Range<usize>, Option<u32>, Cmp, u32),
    /// `end`: the last step of a finite trace.
    EndAtom,
    /// `l = r` or `l != r` (`negated`): each side a variable (bare) or a value (quoted), with
    /// its span.
    Compare {
        sides: [(String, Range<usize>); 2],
        negated: bool,
    },
    True,
    False,
    Prefix(PrefixOp),
    Binary(BinOp),
    LParen,
    RParen,
    /// Wring's `=0`.
    PostNeg,
    /// Wring's `=1`.
    PostPos,
    End,
}

impl From<Lexeme> for Tok {
    fn from(l: Lexeme) -> Tok {
        match l {
            Lexeme::Prefix(p) => Tok::Prefix(p),
            Lexeme::Binary(b) => Tok::Binary(b),
            Lexeme::PostNeg => Tok::PostNeg,
            Lexeme::PostPos => Tok::PostPos,
        }
    }
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    span: Range<usize>,
}

/// Fixed-spelling operators, longest spelling first where one is a prefix of another.
const PUNCT: &[(&str, Lexeme)] = {
    use BinOp::*;
    use Lexeme::{Binary as B, PostNeg, PostPos, Prefix as P};
    use PrefixOp::*;
    &[
        ("<-->", B(Equiv)),
        ("<->", B(Equiv)),
        ("<=>", B(Equiv)),
        ("<>", P(Finally)),
        ("-->", B(Implies)),
        ("->", B(Implies)),
        ("=>", B(Implies)),
        ("=0", PostNeg),
        ("=1", PostPos),
        ("&&", B(And)),
        ("&", B(And)),
        ("||", B(Or)),
        ("|", B(Or)),
        ("/\\", B(And)),
        ("\\/", B(Or)),
        ("+", B(Or)),
        ("*", B(And)),
        ("^", B(Xor)),
        ("[]", P(Globally)),
        ("!", P(Not)),
        ("~", P(Not)),
        ("¬", P(Not)),
        ("∧", B(And)),
        ("∩", B(And)),
        ("∨", B(Or)),
        ("∪", B(Or)),
        ("⊕", B(Xor)),
        ("→", B(Implies)),
        ("⟶", B(Implies)),
        ("⇒", B(Implies)),
        ("⟹", B(Implies)),
        ("↔", B(Equiv)),
        ("⇔", B(Equiv)),
        ("□", P(Globally)),
        ("⬜", P(Globally)),
        ("◻", P(Globally)),
        ("◇", P(Finally)),
        ("⋄", P(Finally)),
        ("♢", P(Finally)),
        ("○", P(Next)),
        ("◯", P(Next)),
        ("Ⓧ", P(StrongNext)),
    ]
};

/// ASCII characters that only occur in operators; a run of them that is no known operator is
/// reported as an unknown operator.
fn is_operator_char(c: char) -> bool {
    "=<>-@#$%?;:,/\\[]{}'`*&|+^!~".contains(c)
}

struct Lexer<'s> {
    src: &'s str,
    pos: usize,
    /// End of the last token, where the end-of-input token is reported.
    last_end: usize,
}

impl<'s> Lexer<'s> {
    fn new(src: &'s str, pos: usize) -> Lexer<'s> {
        Lexer {
            src,
            pos,
            last_end: pos,
        }
    }

    fn rest(&self) -> &'s str {
        &self.src[self.pos..]
    }

    fn skip_ws(&self, mut i: usize) -> usize {
        let s = &self.src[i..];
        i += s.len() - s.trim_start().len();
        i
    }

    /// Skips white space and (nested) `/* ... */` comments.
    fn skip_trivia(&mut self) -> Result<(), ParseError> {
        loop {
            self.pos = self.skip_ws(self.pos);
            if !self.rest().starts_with("/*") {
                return Ok(());
            }
            let start = self.pos;
            let bytes = self.src.as_bytes();
            let mut i = start;
            let mut level = 0usize;
            loop {
                if i >= bytes.len() {
                    return Err(ParseError::new("unclosed comment", start..start + 2));
                }
                if bytes[i..].starts_with(b"/*") {
                    level += 1;
                    i += 2;
                } else if bytes[i..].starts_with(b"*/") {
                    level -= 1;
                    i += 2;
                    if level == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            self.pos = i;
        }
    }

    fn token(&mut self, tok: Tok, start: usize, end: usize) -> Token {
        self.pos = end;
        self.last_end = end;
        Token {
            tok,
            span: start..end,
        }
    }

    /// The next token. `operand` tells whether the parser expects a formula (Spot's `INITIAL`
    /// start condition) or an operator after one (`not_prop`).
    fn next(&mut self, operand: bool) -> Result<Token, ParseError> {
        self.skip_trivia()?;
        let start = self.pos;
        let rest = self.rest();
        let Some(c) = rest.chars().next() else {
            let at = self.last_end;
            return Ok(Token {
                tok: Tok::End,
                span: at..at,
            });
        };
        match c {
            '(' if operand && rest.starts_with("()") => {
                return Ok(self.token(Tok::Prefix(PrefixOp::Next), start, start + 2))
            }
            '(' => return Ok(self.token(Tok::LParen, start, start + 1)),
            ')' => return Ok(self.token(Tok::RParen, start, start + 1)),
            '"' => {
                let (name, end) = self.string(start)?;
                // `=(l, r)` names a comparison atom, which only `l = r` writes (its sides
                // checked against the quantifier); a quoted atom of that name would print back
                // as a comparison that does not parse.
                if trac_core::names::comparison_sides(&name).is_some() {
                    return Err(ParseError::new(
                        format!(
                            "\"{}\" is the internal name of a comparison; write the comparison \
                             itself (`a = b`, `a != \"x\"`) in a `forall` property",
                            trac_core::snippet::snippet(&name, trac_core::snippet::SNIPPET_CHARS)
                        ),
                        start..end,
                    ));
                }
                return Ok(self.token(Tok::Atom(name), start, end));
            }
            _ => {}
        }
        if c.is_ascii_digit() {
            let len = ident_len(rest);
            return match &rest[..len] {
                "1" => Ok(self.token(Tok::True, start, start + 1)),
                "0" => Ok(self.token(Tok::False, start, start + 1)),
                word => Err(ParseError::new(
                    format!(
                        "`{word}` is not an atomic proposition: names cannot start with a digit \
                         (write it in double quotes: `\"{word}\"`)"
                    ),
                    start..start + len,
                )),
            };
        }
        if c.is_ascii_alphabetic() || c == '_' || c == '.' {
            return self.word(start, operand);
        }
        for (spelling, lexeme) in PUNCT {
            if rest.starts_with(spelling) {
                return Ok(self.token((*lexeme).into(), start, start + spelling.len()));
            }
        }
        if is_operator_char(c) {
            let len: usize = rest
                .chars()
                .take_while(|&c| is_operator_char(c))
                .map(char::len_utf8)
                .sum();
            return Err(ParseError::new(
                format!("unknown operator `{}`", &rest[..len]),
                start..start + len,
            ));
        }
        Err(ParseError::new(
            format!(
                "unexpected character `{}` (atomic propositions with such characters must be \
                 written in double quotes)",
                c.escape_debug()
            ),
            start..start + c.len_utf8(),
        ))
    }

    /// A word starting with an ASCII letter, `_` or `.` at `start`.
    fn word(&mut self, start: usize, operand: bool) -> Result<Token, ParseError> {
        let rest = self.rest();
        let b = rest.as_bytes();
        let c = b[0];
        if !operand && matches!(c, b'U' | b'W' | b'R' | b'V' | b'M' | b'S') {
            // Spot's `not_prop`: after an operand, `Ub` is `U b`.
            let lexeme = word_operator(&rest[..1]).unwrap_or(Lexeme::Binary(BinOp::Until));
            return Ok(self.token(lexeme.into(), start, start + 1));
        }
        if c == b'F'
            && rest
                .get(..5)
                .is_some_and(|w| w.eq_ignore_ascii_case("false"))
        {
            return Ok(self.token(Tok::False, start, start + 5));
        }
        if matches!(c, b'F' | b'G' | b'X') && !b.get(1).is_some_and(u8::is_ascii_digit) {
            return self.temporal_letter(c, start);
        }
        let len = ident_len(rest);
        let word = &rest[..len];
        let end = start + len;
        if word.eq_ignore_ascii_case("true") {
            return Ok(self.token(Tok::True, start, end));
        }
        if word.eq_ignore_ascii_case("false") {
            return Ok(self.token(Tok::False, start, end));
        }
        if word == "xor" {
            return Ok(self.token(Tok::Binary(BinOp::Xor), start, end));
        }
        if let Some(lexeme) = word_operator(word) {
            if matches!(word, "Y" | "Z" | "O" | "H") && operand {
                let after = self.skip_ws(end);
                let rest = &self.src[after..];
                if rest.starts_with('[') && !rest.starts_with("[]") {
                    return self.past_bracket(word.as_bytes()[0], start, after);
                }
            }
            return Ok(self.token(lexeme.into(), start, end));
        }
        if word == "end" && operand {
            return Ok(self.token(Tok::EndAtom, start, end));
        }
        if word == "count" && operand {
            if let Some(tok) = self.count(start, end)? {
                return Ok(tok);
            }
        }
        if word == "exists" && operand {
            if let Some(tok) = self.exists(start, end)? {
                return Ok(tok);
            }
        }
        if operand && !self.src[end..].starts_with('(') {
            if let Some(tok) = self.comparison(start, end)? {
                return Ok(tok);
            }
        }
        if self.src[end..].starts_with('(') {
            let (arg, arg_end) = self.argument(word, end)?;
            let name = format!("{word}({arg})");
            return Ok(self.token(Tok::Atom(name), start, arg_end));
        }
        Ok(self.token(Tok::Atom(word.to_string()), start, end))
    }

    /// `F`, `G` or `X` at `start` (not followed by a digit), with Spot's bracket forms.
    fn temporal_letter(&mut self, c: u8, start: usize) -> Result<Token, ParseError> {
        let after = self.skip_ws(start + 1);
        let bracket = self.src[after..].starts_with('[') && !self.src[after..].starts_with("[]");
        let op = match c {
            b'F' => PrefixOp::Finally,
            b'G' => PrefixOp::Globally,
            _ => PrefixOp::Next,
        };
        if !bracket {
            return Ok(self.token(Tok::Prefix(op), start, start + 1));
        }
        if c != b'X' {
            let op = if c == b'F' {
                RangeOp::Finally
            } else {
                RangeOp::Globally
            };
            let b = self.bracket(start, after)?;
            let Some(hi) = b.hi else {
                return Err(ParseError::new(
                    format!(
                        "`{0}[n:m]` expects two bounds (`{0}[n:m]`, or `{0}[n:$]` for no upper \
                         bound)",
                        c as char
                    ),
                    start..b.end,
                ));
            };
            return Ok(self.token(
                Tok::Prefix(PrefixOp::Range(op, b.strong, b.lo, hi)),
                start,
                b.end,
            ));
        }
        // X[!], X[n], X[n!]
        let bad = |end: usize| {
            ParseError::new(
                "malformed `X[...]`: expected `X[!]`, `X[n]` or `X[n!]`",
                start..end,
            )
        };
        let mut i = self.skip_ws(after + 1);
        let digits = self.src[i..].bytes().take_while(u8::is_ascii_digit).count();
        let count = if digits > 0 {
            let n: u64 = self.src[i..i + digits].parse().unwrap_or(u64::MAX);
            if n > MAX_DEPTH as u64 {
                return Err(ParseError::new(
                    format!("repetition count too large (at most {MAX_DEPTH})"),
                    i..i + digits,
                ));
            }
            i = self.skip_ws(i + digits);
            Some(n as u32)
        } else {
            None
        };
        let strong = self.src[i..].starts_with('!');
        if strong {
            i = self.skip_ws(i + 1);
        }
        if !self.src[i..].starts_with(']') || (count.is_none() && !strong) {
            let end = i + self.src[i..].chars().next().map_or(0, char::len_utf8);
            return Err(bad(end));
        }
        let op = match count {
            None => PrefixOp::StrongNext,
            Some(n) => PrefixOp::NextN(n, strong),
        };
        Ok(self.token(Tok::Prefix(op), start, i + 1))
    }

    /// A bound: digits at `i` (after white space), at most [`MAX_BOUND`]; returns it and the
    /// offset after it.
    fn bound(&self, i: usize, what: &str) -> Result<(u32, usize), ParseError> {
        let i = self.skip_ws(i);
        let digits = self.src[i..].bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            let end = i + self.src[i..].chars().next().map_or(0, char::len_utf8);
            return Err(ParseError::new(
                format!("expected a number ({what})"),
                i..end,
            ));
        }
        let written = &self.src[i..i + digits];
        // A number past u64 is still shown as written, not as the saturated value.
        let n: u64 = written.parse().unwrap_or(u64::MAX);
        if n > u64::from(MAX_BOUND) {
            return Err(ParseError::new(
                format!("{what} too large: {written} (at most {MAX_BOUND})"),
                i..i + digits,
            ));
        }
        Ok((n as u32, i + digits))
    }

    /// The bracket of a bounded operator whose letter is at `start` and `[` at `open`:
    /// `[n]`, `[n:m]`, `[n..m]`, `[n:$]`, each optionally strong (`!]`).
    fn bracket(&self, start: usize, open: usize) -> Result<Bracket, ParseError> {
        let (lo, mut i) = self.bound(open + 1, "a step bound")?;
        i = self.skip_ws(i);
        let mut hi = None;
        let sep = if self.src[i..].starts_with(':') {
            1
        } else if self.src[i..].starts_with("..") {
            2
        } else {
            0
        };
        if sep > 0 {
            let j = self.skip_ws(i + sep);
            if self.src[j..].starts_with('$') {
                hi = Some(None);
                i = self.skip_ws(j + 1);
            } else {
                let (m, after) = self.bound(j, "a step bound")?;
                if m < lo {
                    return Err(ParseError::new(
                        format!("empty range `[{lo}:{m}]`: the upper bound is below the lower"),
                        open..after,
                    ));
                }
                hi = Some(Some(m));
                i = self.skip_ws(after);
            }
        }
        let strong = self.src[i..].starts_with('!');
        if strong {
            i = self.skip_ws(i + 1);
        }
        if !self.src[i..].starts_with(']') {
            let end = i + self.src[i..].chars().next().map_or(0, char::len_utf8);
            return Err(ParseError::new(
                "malformed bound: expected `[n]`, `[n:m]`, `[n:$]`, or one of them with `!]`",
                start..end,
            ));
        }
        Ok(Bracket {
            lo,
            hi,
            strong,
            end: i + 1,
        })
    }

    /// `Y[n]`, `Z[n]`, `O[n:m]` or `H[n:m]` (`c` the letter at `start`, `[` at `open`).
    fn past_bracket(&mut self, c: u8, start: usize, open: usize) -> Result<Token, ParseError> {
        let b = self.bracket(start, open)?;
        if b.strong {
            return Err(ParseError::new(
                "a past operator has no strong form (`!]`): `Y` is already false before the \
                 first step and `Z` true",
                start..b.end,
            ));
        }
        let op = match (c, b.hi) {
            (b'Y', None) => PrefixOp::PastN(Step::Yesterday, b.lo),
            (b'Z', None) => PrefixOp::PastN(Step::WeakYesterday, b.lo),
            (b'O', Some(hi)) => PrefixOp::Range(RangeOp::Once, false, b.lo, hi),
            (b'H', Some(hi)) => PrefixOp::Range(RangeOp::Historically, false, b.lo, hi),
            (b'Y' | b'Z', Some(_)) => {
                return Err(ParseError::new(
                    format!("`{}[n]` takes one bound", c as char),
                    start..b.end,
                ))
            }
            _ => {
                return Err(ParseError::new(
                    format!(
                        "`{0}[n:m]` expects two bounds (`{0}[n:m]`, or `{0}[n:$]` for no \
                         bound)",
                        c as char
                    ),
                    start..b.end,
                ))
            }
        };
        Ok(self.token(Tok::Prefix(op), start, b.end))
    }

    /// `count(BODY) CMP K` or `count[W](BODY) CMP K` at `start` (`word_end` after `count`).
    /// `Ok(None)` when `count(...)` is not followed by a comparison (then it is an ordinary
    /// parametric proposition such as `count(x)`).
    fn count(&mut self, start: usize, word_end: usize) -> Result<Option<Token>, ParseError> {
        let mut i = word_end;
        let mut window = None;
        if self.src[i..].starts_with('[') {
            let (w, after) = self.bound(i + 1, "a window")?;
            if w == 0 {
                return Err(ParseError::new("a window of 0 steps", i..after));
            }
            let close = self.skip_ws(after);
            if !self.src[close..].starts_with(']') {
                return Err(ParseError::new(
                    "expected `]` after the window of `count[w](...)`",
                    self.char_span(close),
                ));
            }
            window = Some(w);
            i = close + 1;
        }
        if !self.src[i..].starts_with('(') {
            if window.is_some() {
                return Err(ParseError::new(
                    "expected `(` after `count[w]`",
                    self.char_span(i),
                ));
            }
            return Ok(None);
        }
        let body_start = i + 1;
        let body_end = self.closing_paren(body_start);
        if body_end >= self.src.len() {
            return Err(ParseError::new("unclosed `count(`", start..body_start));
        }
        let mut j = self.skip_ws(body_end + 1);
        let rest = &self.src[j..];
        let cmp = if rest.starts_with("<=>") || rest.starts_with("<-") || rest.starts_with("<>") {
            None
        } else {
            [
                (">=", Cmp::Ge),
                ("<=", Cmp::Le),
                ("==", Cmp::Eq),
                ("!=", Cmp::Ne),
                (">", Cmp::Gt),
                ("<", Cmp::Lt),
            ]
            .into_iter()
            .find(|(t, _)| rest.starts_with(t))
        };
        let Some((text, cmp)) = cmp else {
            if window.is_some() {
                return Err(ParseError::new(
                    "expected a comparison (`>=`, `>`, `<=`, `<`, `==`, `!=`) after `count[w](...)`",
                    j..j + rest.chars().next().map_or(0, char::len_utf8),
                ));
            }
            return Ok(None);
        };
        j += text.len();
        let (k, end) = self.bound(j, "a count")?;
        Ok(Some(self.token(
            Tok::Count(body_start..body_end, window, cmp, k),
            start,
            end,
        )))
    }

    /// The span of the character at byte `i`, empty at the end of the source (an error there
    /// must not point past the input).
    fn char_span(&self, i: usize) -> Range<usize> {
        i..i + self.src[i..].chars().next().map_or(0, char::len_utf8)
    }

    /// The offset of the `)` that closes the group opened just before `from` (outside
    /// strings), or the end of the source.
    fn closing_paren(&self, from: usize) -> usize {
        let bytes = self.src.as_bytes();
        let (mut depth, mut i, mut in_str) = (0usize, from, false);
        while i < bytes.len() {
            match bytes[i] {
                b'\\' if in_str => i += 1,
                b'"' => in_str = !in_str,
                b'(' if !in_str => depth += 1,
                b')' if !in_str => {
                    if depth == 0 {
                        return i;
                    }
                    depth -= 1;
                }
                _ => {}
            }
            i += 1;
        }
        bytes.len()
    }

    /// The arguments of a parametric proposition `word(`, with `open` at the `(`: one or more,
    /// separated by commas (`load(p, a1)`), each a value (which may hold the glob characters
    /// `*`, `?` and the alternatives `|`: `call(update_*)`, `go(a|b)`) or a string. Returns the
    /// arguments joined by `", "` (the canonical name's argument) and the end of the `)`.
    fn argument(&self, word: &str, open: usize) -> Result<(String, usize), ParseError> {
        let mut i = open + 1;
        let mut args: Vec<String> = Vec::new();
        loop {
            i = self.skip_ws(i);
            let arg = if self.src[i..].starts_with('"') {
                let (s, end) = self.string(i)?;
                i = end;
                // The value as labels write it: `"red hot pepper"` is `red hot pepper`,
                // `"echo a,b"` stays quoted (`trac_core::names::format_value`).
                trac_core::names::format_value(&s).into_owned()
            } else {
                let len = self.src[i..]
                    .bytes()
                    .take_while(|&b| is_value_byte(b))
                    .count();
                if len == 0 {
                    let end = i + self.src[i..].chars().next().map_or(0, char::len_utf8);
                    return Err(ParseError::new(
                        format!("expected an argument after `{word}(`"),
                        i..end,
                    ));
                }
                let s = self.src[i..i + len].to_string();
                i += len;
                s
            };
            args.push(arg);
            i = self.skip_ws(i);
            if self.src[i..].starts_with(',') {
                i += 1;
                continue;
            }
            break;
        }
        if !self.src[i..].starts_with(')') {
            let end = i + self.src[i..].chars().next().map_or(0, char::len_utf8);
            return Err(ParseError::new(
                format!("expected `)` or `,` after an argument of `{word}(`"),
                i..end,
            ));
        }
        Ok((args.join(", "), i + 1))
    }

    /// `exists VAR: BODY` at `start` (`word_end` after `exists`): a first-order past-time
    /// quantifier over the values seen so far. The body runs to the `)` that closes the group
    /// the quantifier is in, or to the end of the formula (write `(exists p: ...)` inside a
    /// larger formula). The whole quantified formula is one atomic proposition for the engines,
    /// named `exists VAR: BODY` with BODY printed in normal form; its truth at each step is
    /// computed from the labels (see `trac_runtime::label::derived`). The body must be past-time (no
    /// future operator). `Ok(None)` when `exists` is not followed by `VAR:` (then it is an
    /// ordinary atom).
    fn exists(&mut self, start: usize, word_end: usize) -> Result<Option<Token>, ParseError> {
        let after = &self.src[word_end..];
        let trimmed = after.trim_start();
        if trimmed.len() == after.len() {
            return Ok(None);
        }
        let var_at = word_end + (after.len() - trimmed.len());
        let len = ident_len(trimmed);
        let var = &trimmed[..len];
        if !is_plain_ident(var) {
            return Ok(None);
        }
        let colon = self.skip_ws(var_at + len);
        if !self.src[colon..].starts_with(':') {
            return Ok(None);
        }
        let body_start = colon + 1;
        // The body ends at the first unbalanced `)` (outside strings), or at the end.
        let bytes = self.src.as_bytes();
        let (mut depth, mut i, mut in_str) = (0usize, body_start, false);
        while i < bytes.len() {
            match bytes[i] {
                b'\\' if in_str => i += 1,
                b'"' => in_str = !in_str,
                b'(' if !in_str => depth += 1,
                b')' if !in_str => {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                }
                _ => {}
            }
            i += 1;
        }
        let body_end = i.min(bytes.len());
        let mut arena = Arena::new();
        let body = Parser::new(&mut arena, &self.src[..body_end], body_start).run()?;
        if let Some(bad) = arena
            .subformulas_postorder(body)
            .into_iter()
            .find(|&g| arena.node(g).is_future_operator())
        {
            return Err(ParseError::new(
                format!(
                    "the body of `exists {var}:` must be past-time (it is evaluated over the steps seen so far), but it has the future operator in `{}`",
                    print(&arena, bad)
                ),
                body_start..body_end,
            ));
        }
        let name = format!("exists {var}: {}", canonical_body(print(&arena, body)));
        Ok(Some(self.token(Tok::Atom(name), start, body_end)))
    }

    /// `VAR = SIDE` or `VAR != SIDE` after the identifier at `start..end` (`SIDE` a variable or
    /// a double-quoted value): a [`Tok::Compare`]. `Ok(None)` when no `=` / `!=` follows, or
    /// Wring's `=0` / `=1`, `==` or `=>` does.
    fn comparison(&mut self, start: usize, end: usize) -> Result<Option<Token>, ParseError> {
        let i = self.skip_ws(end);
        let rest = &self.src[i..];
        let (negated, op_len) = if rest.starts_with("!=") {
            (true, 2)
        } else if rest.starts_with('=')
            && !["==", "=>", "=0", "=1"].iter().any(|p| rest.starts_with(p))
        {
            (false, 1)
        } else {
            return Ok(None);
        };
        let j = self.skip_ws(i + op_len);
        let (right, right_end) = if self.src[j..].starts_with('"') {
            let (v, e) = self.string(j)?;
            (trac_core::names::quote_value(&v), e)
        } else {
            let len = ident_len(&self.src[j..]);
            let ok = self.src[j..]
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_' || b == b'.');
            if len == 0 || !ok {
                let e = j + self.src[j..].chars().next().map_or(0, char::len_utf8);
                let op = &self.src[i..i + op_len];
                return Err(ParseError::new(
                    format!(
                        "expected a quantified variable or a quoted value after `{op}` (`a {op} b`, `a {op} \"x\"`)"
                    ),
                    j..e,
                ));
            }
            (self.src[j..j + len].to_string(), j + len)
        };
        let tok = Tok::Compare {
            sides: [
                (self.src[start..end].to_string(), start..end),
                (right, j..right_end),
            ],
            negated,
        };
        Ok(Some(self.token(tok, start, right_end)))
    }

    /// A double-quoted string starting at `start`; returns its content and the end offset.
    fn string(&self, start: usize) -> Result<(String, usize), ParseError> {
        let mut out = String::new();
        let mut chars = self.src[start + 1..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => return Ok((out, start + 1 + i + 1)),
                '\\' => match chars.next() {
                    Some((_, e)) => out.push(e),
                    None => break,
                },
                _ => out.push(c),
            }
        }
        Err(ParseError::new(
            "unterminated string",
            start..self.src.len(),
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// Parser: operator precedence with explicit stacks (no recursion, so no stack overflow).

/// An operand on the value stack. `&` / `|` chains are collected before building, so long
/// chains cost linear time.
enum Val {
    F(Formula),
    And(Vec<Formula>),
    Or(Vec<Formula>),
}

struct Operand {
    val: Val,
    /// Syntactic depth.
    depth: usize,
    /// A bare atomic proposition (may take Wring's `=0` / `=1`).
    atom: bool,
}

enum Pending {
    Prefix(PrefixOp, Range<usize>),
    Binary(BinOp, Range<usize>),
    Paren(Range<usize>),
}

struct Parser<'a, 's> {
    arena: &'a mut Arena,
    lex: Lexer<'s>,
    src: &'s str,
    values: Vec<Operand>,
    ops: Vec<Pending>,
    /// How many `count(...)` bodies this parser is inside (bounded by [`MAX_COUNT_NESTING`]).
    nest: usize,
    /// The variables of the property's `forall`, which comparisons may name (`None`: the
    /// formula is not quantified, so it may have no comparison).
    vars: Option<Vec<String>>,
}

/// How deeply `count(...)` bodies may nest (each is parsed by a parser of its own).
const MAX_COUNT_NESTING: usize = 32;

fn internal() -> ParseError {
    ParseError::new("internal parser error", 0..0)
}

impl<'a, 's> Parser<'a, 's> {
    fn new(arena: &'a mut Arena, src: &'s str, start: usize) -> Parser<'a, 's> {
        Parser {
            arena,
            lex: Lexer::new(src, start),
            src,
            values: Vec::new(),
            ops: Vec::new(),
            nest: 0,
            vars: None,
        }
    }

    /// This parser, for the body of `forall vars: ...` (a list as [`Property::var`]).
    fn with_vars(mut self, vars: &str) -> Self {
        self.vars = Some(
            trac_core::names::split_list(vars)
                .map(String::from)
                .collect(),
        );
        self
    }

    /// The atom of a comparison `l = r` (negated for `l != r`): `=(l, r)`, the sides in
    /// canonical order (two variables sorted, a variable before a value), so that `a = b` and
    /// `b = a` are one atom ([`trac_core::names::COMPARISON_BASE`]).
    fn comparison(
        &mut self,
        sides: &[(String, Range<usize>); 2],
        negated: bool,
        span: &Range<usize>,
    ) -> Result<Formula, ParseError> {
        let Some(vars) = &self.vars else {
            return Err(ParseError::new(
                "a comparison is only allowed in a quantified property (not in an `exists` \
                 body), between its variables or a variable and a value (`forall a, b: \
                 G(sent_to(a) & owner(b) & a != b -> ...)`)",
                span.clone(),
            ));
        };
        for (side, at) in sides {
            let is_value = side.starts_with('"');
            let value_as_var = is_value
                && trac_core::names::parse_value(side)
                    .is_some_and(|v| vars.iter().any(|x| *x == *v));
            if value_as_var {
                return Err(ParseError::new(
                    format!(
                        "the value {side} is also the name of a quantified variable; a property \
                         cannot compare with it"
                    ),
                    at.clone(),
                ));
            }
            if !is_value && !vars.contains(side) {
                return Err(ParseError::new(
                    format!(
                        "`{side}` is not a variable of this property's `forall` ({}); a value \
                         is written in double quotes (`\"{side}\"`)",
                        vars.join(", ")
                    ),
                    at.clone(),
                ));
            }
        }
        let (l, r) = (&sides[0].0, &sides[1].0);
        let (l, r) = if r.starts_with('"') || l <= r {
            (l, r)
        } else {
            (r, l)
        };
        if l.starts_with('"') {
            return Err(ParseError::new(
                "a comparison needs a quantified variable on its left (`a = \"x\"`)",
                span.clone(),
            ));
        }
        let name = format!("{}({l}, {r})", trac_core::names::COMPARISON_BASE);
        let f = self.arena.atom(&name);
        Ok(if negated { self.arena.not(f) } else { f })
    }

    fn text(&self, t: &Token) -> String {
        match t.tok {
            Tok::End => "end of formula".to_string(),
            _ => self.src[t.span.clone()].to_string(),
        }
    }

    fn run(self) -> Result<Formula, ParseError> {
        self.run_depth().map(|(f, _)| f)
    }

    /// [`Parser::run`], with the formula's syntactic depth.
    fn run_depth(mut self) -> Result<(Formula, usize), ParseError> {
        let mut expect_operand = true;
        let mut prev: Option<Token> = None;
        loop {
            let t = self.lex.next(expect_operand)?;
            if expect_operand {
                match &t.tok {
                    Tok::Atom(name) => {
                        let f = self.arena.atom(name);
                        self.push(f, 1, true);
                        expect_operand = false;
                    }
                    Tok::True => {
                        self.push(Formula::TRUE, 1, false);
                        expect_operand = false;
                    }
                    Tok::Compare { sides, negated } => {
                        let f = self.comparison(sides, *negated, &t.span)?;
                        self.push(f, 1, false);
                        expect_operand = false;
                    }
                    Tok::EndAtom => {
                        let f = sugar::end(self.arena);
                        self.push(f, 2, false);
                        expect_operand = false;
                    }
                    Tok::Count(body, window, cmp, k) => {
                        let (f, inner) = self.count(body.clone(), *window, *cmp, *k)?;
                        let depth = inner + 2 * (*k as usize) + window.unwrap_or(0) as usize + 3;
                        Self::check_depth(depth, &t.span)?;
                        self.push(f, depth, false);
                        expect_operand = false;
                    }
                    Tok::False => {
                        self.push(Formula::FALSE, 1, false);
                        expect_operand = false;
                    }
                    Tok::Prefix(op) => self.ops.push(Pending::Prefix(*op, t.span.clone())),
                    Tok::LParen => self.ops.push(Pending::Paren(t.span.clone())),
                    Tok::PostNeg | Tok::PostPos => {
                        return Err(ParseError::new(
                            format!("`{}` can only follow an atomic proposition", self.text(&t)),
                            t.span,
                        ))
                    }
                    Tok::End | Tok::RParen | Tok::Binary(_) => {
                        let msg = match (&prev, &t.tok) {
                            (Some(p), _) => format!("expected a formula after `{}`", self.text(p)),
                            (None, Tok::End) => "empty formula".to_string(),
                            (None, Tok::RParen) => "unexpected `)`".to_string(),
                            (None, _) => format!("expected a formula before `{}`", self.text(&t)),
                        };
                        return Err(ParseError::new(msg, t.span));
                    }
                }
            } else {
                match &t.tok {
                    Tok::Binary(op) => {
                        let op = *op;
                        while let Some(top) = self.ops.last() {
                            let reduce = match top {
                                Pending::Prefix(..) => true,
                                Pending::Binary(b, _) => {
                                    b.level() > op.level()
                                        || (b.level() == op.level() && !op.right_assoc())
                                }
                                Pending::Paren(_) => false,
                            };
                            if !reduce {
                                break;
                            }
                            self.reduce()?;
                        }
                        // A pending `&` / `|` chain that `op` cannot extend is built now, so
                        // handles (and the printer's operand order) follow the source order.
                        self.settle_top(Some(op));
                        self.ops.push(Pending::Binary(op, t.span.clone()));
                        expect_operand = true;
                    }
                    Tok::RParen => loop {
                        match self.ops.last() {
                            None => return Err(ParseError::new("unexpected `)`", t.span)),
                            Some(Pending::Paren(_)) => {
                                self.ops.pop();
                                self.settle_top(None);
                                if let Some(v) = self.values.last_mut() {
                                    v.atom = false;
                                }
                                break;
                            }
                            Some(_) => self.reduce()?,
                        }
                    },
                    Tok::End => {
                        while let Some(top) = self.ops.last() {
                            if let Pending::Paren(span) = top {
                                return Err(ParseError::new("unclosed parenthesis", span.clone()));
                            }
                            self.reduce()?;
                        }
                        let v = self.values.pop().ok_or_else(internal)?;
                        if !self.values.is_empty() {
                            return Err(internal());
                        }
                        return Ok((self.materialize(v.val), v.depth));
                    }
                    Tok::PostNeg | Tok::PostPos => {
                        let prev_atom =
                            prev.as_ref().is_some_and(|p| matches!(p.tok, Tok::Atom(_)));
                        let v = self.values.last_mut().ok_or_else(internal)?;
                        if !(v.atom && prev_atom) {
                            return Err(ParseError::new(
                                format!(
                                    "`{}` can only follow an atomic proposition",
                                    &self.src[t.span.clone()]
                                ),
                                t.span,
                            ));
                        }
                        v.atom = false;
                        if t.tok == Tok::PostNeg {
                            if let Val::F(f) = v.val {
                                v.val = Val::F(self.arena.not(f));
                                v.depth += 1;
                            }
                        }
                    }
                    Tok::Atom(_)
                    | Tok::True
                    | Tok::False
                    | Tok::EndAtom
                    | Tok::Compare { .. }
                    | Tok::Count(..)
                    | Tok::Prefix(_)
                    | Tok::LParen => {
                        let mut msg = format!("missing binary operator before `{}`", self.text(&t));
                        if let (Tok::LParen, Some(p)) = (&t.tok, &prev) {
                            if matches!(p.tok, Tok::Atom(_)) && p.span.end < t.span.start {
                                msg.push_str(&format!(
                                    " (a parametric proposition is written without a space: \
                                     `{}(...)`)",
                                    self.text(p)
                                ));
                            }
                        }
                        return Err(ParseError::new(msg, t.span));
                    }
                }
            }
            prev = Some(t);
        }
    }

    /// The expansion of `count(BODY) CMP K` (`count[W](...)`), BODY at `body` in the source.
    fn count(
        &mut self,
        body: Range<usize>,
        window: Option<u32>,
        cmp: Cmp,
        k: u32,
    ) -> Result<(Formula, usize), ParseError> {
        if self.nest >= MAX_COUNT_NESTING {
            return Err(ParseError::new(
                format!("`count(...)` nested too deeply (more than {MAX_COUNT_NESTING} levels)"),
                body,
            ));
        }
        let mut inner = Parser::new(&mut *self.arena, &self.src[..body.end], body.start);
        inner.nest = self.nest + 1;
        inner.vars = self.vars.clone();
        let (f, depth) = inner.run_depth()?;
        if let Some(bad) = self
            .arena
            .subformulas_postorder(f)
            .into_iter()
            .find(|&g| self.arena.node(g).is_future_operator())
        {
            return Err(ParseError::new(
                format!(
                    "what `count(...)` counts must be past-time (it counts the steps seen so \
                     far), but it has the future operator in `{}`",
                    print(self.arena, bad)
                ),
                body,
            ));
        }
        Ok((sugar::count(self.arena, f, window, cmp, k), depth))
    }

    fn push(&mut self, f: Formula, depth: usize, atom: bool) {
        self.values.push(Operand {
            val: Val::F(f),
            depth,
            atom,
        });
    }

    /// Builds the top value if it is an `&` / `|` chain that `next` does not extend.
    fn settle_top(&mut self, next: Option<BinOp>) {
        let Some(top) = self.values.last_mut() else {
            return;
        };
        let keep = matches!(
            (&top.val, next),
            (Val::And(_), Some(BinOp::And)) | (Val::Or(_), Some(BinOp::Or))
        );
        if !keep && !matches!(top.val, Val::F(_)) {
            let val = std::mem::replace(&mut top.val, Val::F(Formula::TRUE));
            let f = self.materialize(val);
            if let Some(top) = self.values.last_mut() {
                top.val = Val::F(f);
            }
        }
    }

    fn materialize(&mut self, v: Val) -> Formula {
        match v {
            Val::F(f) => f,
            Val::And(list) => self.arena.and(list),
            Val::Or(list) => self.arena.or(list),
        }
    }

    fn check_depth(depth: usize, span: &Range<usize>) -> Result<(), ParseError> {
        if depth > MAX_DEPTH {
            return Err(ParseError::new(
                format!("formula is nested too deeply (more than {MAX_DEPTH} levels)"),
                span.clone(),
            ));
        }
        Ok(())
    }

    /// Applies the operator on top of the operator stack.
    fn reduce(&mut self) -> Result<(), ParseError> {
        match self.ops.pop().ok_or_else(internal)? {
            Pending::Paren(_) => Err(internal()),
            Pending::Prefix(op, span) => {
                let v = self.values.pop().ok_or_else(internal)?;
                let extra = match op {
                    PrefixOp::NextN(n, _) | PrefixOp::PastN(_, n) => n as usize,
                    // The depth of the expansion, so that a formula and its printed form
                    // (which may split or join abbreviations) count alike: `op[lo:$] a` is
                    // `X[lo] op a`; `op[lo:hi] a` is `X[lo](a ∘ X(a ∘ … X a))`, two levels per
                    // step past `lo`.
                    PrefixOp::Range(_, _, lo, None) => lo as usize + 1,
                    PrefixOp::Range(_, _, lo, Some(hi)) => lo as usize + 2 * (hi - lo) as usize,
                    _ => 1,
                };
                let depth = v.depth + extra;
                Self::check_depth(depth, &span)?;
                let a = self.materialize(v.val);
                let ar = &mut *self.arena;
                let f = match op {
                    PrefixOp::Not => ar.not(a),
                    PrefixOp::Next => ar.next(a),
                    PrefixOp::StrongNext => ar.strong_next(a),
                    PrefixOp::NextN(n, strong) => {
                        let mut f = a;
                        for _ in 0..n {
                            f = if strong {
                                ar.strong_next(f)
                            } else {
                                ar.next(f)
                            };
                        }
                        f
                    }
                    PrefixOp::PastN(s, n) => sugar::repeat(ar, s, n, a),
                    PrefixOp::Range(op, strong, lo, hi) => sugar::range(ar, op, strong, lo, hi, a),
                    PrefixOp::Finally => ar.finally(a),
                    PrefixOp::Globally => ar.globally(a),
                    PrefixOp::Yesterday => ar.yesterday(a),
                    PrefixOp::WeakYesterday => ar.weak_yesterday(a),
                    PrefixOp::Once => ar.once(a),
                    PrefixOp::Historically => ar.historically(a),
                };
                self.push(f, depth, false);
                Ok(())
            }
            Pending::Binary(op, span) => {
                let r = self.values.pop().ok_or_else(internal)?;
                let l = self.values.pop().ok_or_else(internal)?;
                let r_depth = r.depth;
                let rf = self.materialize(r.val);
                let (val, depth) = match (op, l.val) {
                    (BinOp::And, Val::And(mut list)) => {
                        list.push(rf);
                        (Val::And(list), l.depth.max(r_depth + 1))
                    }
                    (BinOp::Or, Val::Or(mut list)) => {
                        list.push(rf);
                        (Val::Or(list), l.depth.max(r_depth + 1))
                    }
                    (op, lv) => {
                        let depth = l.depth.max(r_depth) + 1;
                        let lf = self.materialize(lv);
                        let ar = &mut *self.arena;
                        let val = match op {
                            BinOp::And => Val::And(vec![lf, rf]),
                            BinOp::Or => Val::Or(vec![lf, rf]),
                            BinOp::Implies => Val::F(ar.implies(lf, rf)),
                            BinOp::Equiv => Val::F(ar.equiv(lf, rf)),
                            BinOp::Xor => Val::F(ar.xor(lf, rf)),
                            BinOp::Until => Val::F(ar.until(lf, rf)),
                            BinOp::WeakUntil => Val::F(ar.weak_until(lf, rf)),
                            BinOp::Release => Val::F(ar.release(lf, rf)),
                            BinOp::StrongRelease => Val::F(ar.strong_release(lf, rf)),
                            BinOp::Since => Val::F(ar.since(lf, rf)),
                        };
                        (val, depth)
                    }
                };
                Self::check_depth(depth, &span)?;
                self.values.push(Operand {
                    val,
                    depth,
                    atom: false,
                });
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_huge_formula_line_is_shown_as_a_window_with_the_caret_in_place() {
        // 200 KB of conjuncts, then an error: the rendered error stays small and the caret
        // points at the bad character.
        let src = format!("{} & ) & {}", "a".repeat(150_000), "b".repeat(50_000));
        let mut a = Arena::new();
        let e = parse(&mut a, &src).unwrap_err();
        let r = e.render(&src);
        assert!(r.len() < 1000, "{} bytes", r.len());
        let lines: Vec<&str> = r.lines().collect();
        let text: Vec<char> = lines[2].chars().collect();
        let caret: Vec<char> = lines[3].chars().collect();
        let at = caret.iter().position(|&c| c == '^').expect("a caret");
        assert_eq!(text[at], ')', "{r}");
        assert!(lines[2].contains('…'), "{r}");
        // An atom quoted in the message is cut too.
        let long = format!("G x {}", "q".repeat(100_000));
        let e = parse(&mut a, &long).unwrap_err();
        assert!(e.message.len() < 300, "{}", e.message.len());
        assert!(e.render(&long).len() < 1000);
    }

    use super::*;

    fn p(src: &str) -> (Arena, Formula) {
        let mut a = Arena::new();
        let f = parse(&mut a, src).unwrap_or_else(|e| panic!("{}", e.render(src)));
        (a, f)
    }

    #[test]
    fn operator_words_are_the_lexical_list() {
        for w in crate::lexical::OPERATOR_WORDS {
            assert!(word_operator(w).is_some(), "{w}");
        }
        for c in b'A'..=b'Z' {
            let w = (c as char).to_string();
            assert_eq!(
                word_operator(&w).is_some(),
                crate::lexical::OPERATOR_WORDS.contains(&w.as_str()),
                "{w}"
            );
        }
    }

    #[test]
    fn wring_postfix_negation() {
        let (mut a, f) = p("a=0 U b=1");
        let x = a.atom("a");
        let nx = a.not(x);
        let b = a.atom("b");
        assert_eq!(f, a.until(nx, b));
    }

    #[test]
    fn paren_then_operator_letter_splits() {
        let (mut a, f) = p("(a)Ub");
        let x = a.atom("a");
        let b = a.atom("b");
        assert_eq!(f, a.until(x, b));
    }

    #[test]
    fn nested_comments_are_skipped() {
        let (mut a, f) = p("a /* x /* y */ z */ & b");
        let x = a.atom("a");
        let b = a.atom("b");
        assert_eq!(f, a.and2(x, b));
    }
}

#[cfg(test)]
mod quantifier_near_miss_tests {
    use super::*;

    /// The error of `src` as a property: its message and the text under its span.
    fn err(src: &str) -> (String, String) {
        let mut a = Arena::new();
        let e = parse_property(&mut a, src).expect_err(src);
        (e.message.clone(), src[e.span.clone()].to_string())
    }

    #[test]
    fn misspelled_quantifiers_are_named() {
        for (src, word) in [
            ("foral x: G take(x)", "foral"),
            ("Forall x: G take(x)", "Forall"),
            ("forAll x: G take(x)", "forAll"),
            ("for all x: G take(x)", "for all"),
            ("∀x: G take(x)", "∀"),
        ] {
            let (m, under) = err(src);
            assert!(m.contains("did you mean `forall x:`"), "{src}: {m}");
            assert_eq!(under, word, "{src}");
        }
        // `exists x:` is a past-time quantifier: a future body is refused as such.
        let (m, _) = err("exists x: F take(x)");
        assert!(m.contains("must be past-time"), "{m}");
        let (m, _) = err("Exists x: O take(x)");
        assert!(m.contains("only `forall VAR:`"), "{m}");
        let (m, _) = err("each x: G take(x)");
        assert!(m.contains("looks like a quantifier"), "{m}");
    }

    #[test]
    fn several_variables_are_a_list_and_errors_are_placed() {
        let mut a = Arena::new();
        let p = parse_property(
            &mut a,
            "forall tool, rid: G(call(tool) & modify(rid) -> O ok)",
        )
        .unwrap();
        assert_eq!(p.var.as_deref(), Some("tool, rid"));
        assert_eq!(p.vars(), ["tool", "rid"]);
        let p = parse_property(&mut a, "forall x ,y,z : G e(x, y, z)").unwrap();
        assert_eq!(p.vars(), ["x", "y", "z"]);
        // Without commas.
        let (m, under) = err("forall x y: G a(x)");
        assert!(m.contains("separate the variables"), "{m}");
        assert_eq!(under.trim_start(), "y");
        // The same variable twice: at its second place.
        let src = "forall x, y, x: G a(x, y)";
        let (m, under) = err(src);
        assert!(m.contains("`x` is quantified twice"), "{m}");
        assert_eq!(under, "x");
        let e = parse_property(&mut a, src).unwrap_err();
        assert_eq!(e.span.start, 13);
        // A comma without a variable after it.
        let (m, under) = err("forall x, : G a(x)");
        assert!(m.contains("expected a variable after `,`"), "{m}");
        assert_eq!(under, ":");
        let (m, under) = err("forall x: forall y: G a(x, y)");
        assert!(m.contains("one `forall`"), "{m}");
        assert_eq!(under, "forall y:");
        // A variable no atom uses.
        let src = "forall x, y: G a(x)";
        let p = parse_property(&mut a, src).unwrap();
        let e = check_vars_used(&a, &p, src).unwrap_err();
        assert!(e.message.contains("`y` is not used"), "{}", e.message);
        assert_eq!(&src[e.span], "y");
        let src = "forall a, p: G(c(a) -> !(exists p: O load(p, a)))";
        let p = parse_property(&mut a, src).unwrap();
        let e = check_vars_used(&a, &p, src).unwrap_err();
        assert_eq!((e.span.start, &src[e.span.clone()]), (10, "p"));
        let src = "forall a: G(c -> !(exists p: O load(p, a)))";
        let p = parse_property(&mut a, src).unwrap();
        assert_eq!(check_vars_used(&a, &p, src), Ok(()));
    }

    #[test]
    fn exists_atoms_instantiate_their_bodies_but_not_their_own_variable() {
        let mut a = Arena::new();
        let f = parse(
            &mut a,
            "G(req(a) -> !(exists p: !unload(p, a) S load(p, a)))",
        )
        .unwrap();
        let g = a.instantiate(f, "a", "a1");
        assert_eq!(
            print(&a, g),
            "G(req(a1) -> !(exists p: !unload(p, a1) S load(p, a1)))"
        );
        // `p` is the quantifier's own: never replaced.
        let h = a.instantiate(f, "p, a", "x, a2");
        assert_eq!(
            print(&a, h),
            "G(req(a2) -> !(exists p: !unload(p, a2) S load(p, a2)))"
        );
        assert_eq!(
            instantiate_exists("exists p: O load(p, b)", "a", "a1"),
            None
        );
    }

    #[test]
    fn a_missing_variable_or_a_dot_is_named() {
        let (m, _) = err("forall: G a");
        assert!(m.contains("expected a variable"), "{m}");
        let (m, under) = err("forall x. G a(x)");
        assert!(m.contains("colon"), "{m}");
        assert_eq!(under, ".");
    }

    #[test]
    fn formulas_with_colons_in_quotes_and_forall_atoms_still_parse() {
        let mut a = Arena::new();
        for src in [
            "G \"a:b\"",
            "forall U b",
            "forall_x & y",
            "forall(x) -> y",
            "forall item: G take(item)",
        ] {
            parse_property(&mut a, src).unwrap_or_else(|e| panic!("{src}: {}", e.render(src)));
        }
        assert_eq!(edit_distance("foral", "forall"), 1);
        assert_eq!(edit_distance("FORALL", "forall"), 0);
    }
}

#[cfg(test)]
mod derived_syntax_tests {
    use super::*;

    fn roundtrip(src: &str) -> String {
        let mut a = Arena::new();
        let f = parse(&mut a, src).unwrap_or_else(|e| panic!("{src}: {}", e.message));
        let printed = print(&a, f);
        let mut b = Arena::new();
        let g = parse(&mut b, &printed).unwrap_or_else(|e| panic!("{printed}: {}", e.message));
        assert_eq!(print(&b, g), printed, "printing is stable for {src}");
        printed
    }

    #[test]
    fn several_arguments_and_patterns() {
        assert_eq!(roundtrip("load(p,a1)"), "load(p, a1)");
        assert_eq!(roundtrip("load( p ,  a1 )"), "load(p, a1)");
        assert_eq!(
            roundtrip("call(update_*) | go(a|b)"),
            "call(update_*) | go(a|b)"
        );
        assert_eq!(
            roundtrip(r#"go("living room", x)"#),
            r#"go("living room", x)"#
        );
        let mut a = Arena::new();
        let e = parse(&mut a, "load(p, )").unwrap_err();
        assert_eq!(e.span, 8..9);
        let e = parse(&mut a, "load(p a)").unwrap_err();
        assert!(e.message.contains("`)` or `,`"), "{}", e.message);
    }

    #[test]
    fn exists_is_one_atom_named_by_its_normal_form() {
        let mut a = Arena::new();
        let f = parse(
            &mut a,
            "G(unload -> !Y(exists p:!unloads(p,a1) S loads(p,a1)))",
        )
        .unwrap();
        let names: Vec<String> = a
            .atoms(f)
            .iter()
            .map(|&s| a.sym_name(s).to_string())
            .collect();
        assert!(
            names.contains(&"exists p: !unloads(p, a1) S loads(p, a1)".to_string()),
            "{names:?}"
        );
        assert_eq!(
            roundtrip("G(exists p: O load(p) & !done)"),
            "G(exists p: O load(p) & !done)"
        );
        assert_eq!(
            roundtrip("a & (exists p: Y b(p))"),
            "a & (exists p: Y b(p))"
        );
        // Written differently, the same body gives the same atom.
        let g = parse(
            &mut a,
            "G(unload -> !Y(exists p: (!unloads(p, a1)) S (loads(p, a1))))",
        )
        .unwrap();
        assert_eq!(f, g);
        // `exists` alone, or without a colon, is an ordinary atom.
        let mut c = Arena::new();
        let h = parse(&mut c, "exists & b").unwrap();
        let mut names: Vec<&str> = c.atoms(h).iter().map(|&s| c.sym_name(s)).collect();
        names.sort_unstable();
        assert_eq!(names, ["b", "exists"]);
    }

    #[test]
    fn exists_errors() {
        let mut a = Arena::new();
        let src = "G(exists p: F load(p))";
        let e = parse(&mut a, src).unwrap_err();
        assert!(e.message.contains("must be past-time"), "{}", e.message);
        assert_eq!(e.span, 11..21);
        let e = parse(&mut a, "exists p, q: O load(p)").unwrap_err();
        assert!(e.message.contains("one variable"), "{}", e.message);
        let e = parse(&mut a, "G(exists p: )").unwrap_err();
        assert!(e.message.contains("formula"), "{}", e.message);
    }
}

#[cfg(test)]
mod comparison_tests {
    use super::*;

    /// `forall VAR: ` and the printed body (as `printer::print_with_quantifier`, which this
    /// module does not name: the printer depends on the parser).
    fn print_with_quantifier(a: &Arena, var: Option<&str>, f: Formula) -> String {
        match var {
            Some(v) => format!("forall {v}: {}", print(a, f)),
            None => print(a, f),
        }
    }

    fn round(src: &str) -> String {
        let mut a = Arena::new();
        let p = parse_property(&mut a, src).unwrap_or_else(|e| panic!("{src}: {e}"));
        let out = print_with_quantifier(&a, p.var.as_deref(), p.body);
        let again = parse_property(&mut a, &out).unwrap();
        assert_eq!(again.body, p.body, "{out}");
        out
    }

    fn err(src: &str) -> (String, String) {
        let mut a = Arena::new();
        let e = parse_property(&mut a, src).unwrap_err();
        (e.message.clone(), src[e.span.clone()].to_string())
    }

    #[test]
    fn comparisons_parse_and_print_back() {
        assert_eq!(
            round("forall a, b: G((sent_to(a) & owner(b) & a != b) -> F ask)"),
            "forall a, b: G(sent_to(a) & owner(b) & a != b -> F ask)"
        );
        // One atom whichever side is written first; the variable before a value.
        assert_eq!(
            round("forall a, b: G(p(a) & q(b) & b=a)"),
            "forall a, b: G(p(a) & q(b) & a = b)"
        );
        assert_eq!(
            round("forall a: G(p(a) -> a = \"x y\")"),
            "forall a: G(p(a) -> a = \"x y\")"
        );
        assert_eq!(
            round("forall a: G(p(a) -> a != \"x\")"),
            "forall a: G(p(a) -> a != \"x\")"
        );
        assert_eq!(
            round("forall a: G(p(a) & !(a = \"x\"))"),
            "forall a: G(p(a) & a != \"x\")"
        );
        let mut ar = Arena::new();
        let p = parse_property(&mut ar, "forall a, b: G(b != a)").unwrap();
        let Node::Not(c) = *ar.node(match ar.node(p.body) {
            Node::Globally(g) => *g,
            _ => unreachable!(),
        }) else {
            panic!("a negation")
        };
        assert!(matches!(ar.node(c), Node::Atom(s) if ar.sym_name(*s) == "=(a, b)"));
        // Wring's `a=0` / `a=1` and `=>` keep their meaning.
        let mut ar = Arena::new();
        let f = parse(&mut ar, "a=0 => b=1").unwrap();
        assert_eq!(print(&ar, f), "!a -> b");
    }

    #[test]
    fn comparisons_instantiate_to_their_values() {
        let mut a = Arena::new();
        let p = parse_property(&mut a, "forall a, b: G(p(a) & q(b) & a != b -> r)").unwrap();
        // One variable given: the comparison is still open (false until `b` has a value).
        let half = a.instantiate(p.body, "a", "u v");
        assert!(
            print(&a, half).contains("p(\"u v\") & \"u v\" != b"),
            "{}",
            print(&a, half)
        );
        let both = a.instantiate(half, "b", "w");
        assert!(
            print(&a, both).contains("\"u v\" != \"w\" -> r"),
            "{}",
            print(&a, both)
        );
        let named = |s: &str| a.atoms(both).iter().any(|&x| a.sym_name(x) == s);
        assert!(named("=(\"u v\", \"w\")"));
        assert_eq!(
            trac_core::names::comparison_value("=(\"u v\", \"w\")"),
            Some(false)
        );
        assert_eq!(
            trac_core::names::comparison_value("=(\"w\", \"w\")"),
            Some(true)
        );
        assert_eq!(trac_core::names::comparison_value("=(\"w\", b)"), None);
        assert_eq!(trac_core::names::comparison_value("=(b, b)"), Some(true));
    }

    #[test]
    fn comparisons_outside_a_quantifier_or_on_free_names_are_errors() {
        let mut a = Arena::new();
        let e = parse(&mut a, "G(p & a = b)").unwrap_err();
        assert!(
            e.message.contains("only allowed in a quantified property"),
            "{}",
            e.message
        );
        assert_eq!(&"G(p & a = b)"[e.span], "a = b");
        let (m, at) = err("forall a: G(p(a) & a != c)");
        assert!(
            m.contains("`c` is not a variable of this property's `forall` (a)"),
            "{m}"
        );
        assert_eq!(at, "c");
        let (m, at) = err("forall a: G(p(a) & a = )");
        assert!(
            m.contains("expected a quantified variable or a quoted value after `=`"),
            "{m}"
        );
        assert_eq!(at, ")");
        let (m, at) = err("forall a, b: G(p(a, b) & a = \"b\")");
        assert!(m.contains("also the name of a quantified variable"), "{m}");
        assert_eq!(at, "\"b\"");
        // Prefix operators keep a space before a comparison.
        assert_eq!(
            round("forall a, b: G(p(a) & q(b)) & G(a != b) & F!(a = \"x y\") & X a = b"),
            "forall a, b: G(p(a) & q(b)) & G a != b & F a != \"x y\" & X a = b"
        );
        // Inside `count(...)` the variables are those of the property too.
        round("forall a: G(p(a) -> count(q & a != \"x\") <= 2)");
        // A variable that is only compared is given no value: unused.
        let mut a = Arena::new();
        let src = "forall a, b: G(p(a) & a != b)";
        let prop = parse_property(&mut a, src).unwrap();
        let e = check_vars_used(&a, &prop, src).unwrap_err();
        assert_eq!(&src[e.span], "b");
    }
}
