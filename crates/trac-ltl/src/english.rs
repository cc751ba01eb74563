//! Plain-English rendering of formulas.
//!
//! [`render`] turns a formula into a sentence fragment, using descriptions of the atomic
//! propositions where available:
//!
//! | formula | English |
//! |---|---|
//! | `G(take(item) -> X examine(item))` | always, if the agent takes item, then at the next step the agent examines item |
//! | `G !a` | `` `a` never holds `` (or "it is never the case that ..." with a description) |
//! | `F a` | eventually `a` holds |
//! | `!a W b` | `` `a` does not hold until `b` holds (or forever) `` |
//! | `H(a -> O b)` | so far always, if `a` holds, then at some earlier or the current step `b` holds |
//!
//! Operators: `!` "not" / "it is not the case that", `&` "and", `|` "or", `xor` "either ... or
//! ..., but not both", `->` "if ..., then ...", `<->` "... if and only if ...", `X` "at the next
//! step" (`X X X` "in 3 steps"), `F[1:4]` "within 1 to 4 steps", `G[0:3]` "at every step 0 to
//! 3 steps ahead", `O[0:7]` "at some step 0 to 7 steps back", `H[1:$]` "at every step 1 or more
//! steps back (if any)", `count(a) <= 3` "at most 3 steps so far at which `a` holds", `end`
//! "this is the last step", `X[!]` "at the next step (which must exist)", `F` "eventually",
//! `G` "always", `U` "... until ...", `W` "... until ... (or forever)", `R` "... up to and
//! including the step where ... (or forever)", `M` the same with "(which must eventually
//! happen)", `Y` "at the previous step", `Z` "at the previous step (if any)", `O` "at some earlier
//! or the current step", `H` "so far always", `S` "... since ...".
//!
//! A temporal prefix is followed by a comma when its scope is a compound statement ("always, if
//! ..."), and compound operands of connectives are parenthesized, so the sentence keeps the
//! formula's structure: `F a & b` is "(eventually `a` holds) and `b` holds" when the `F` comes
//! first, `F(a & b)` is "eventually, `a` holds and `b` holds".

use crate::formula::{Arena, Formula, Node};
use crate::sugar::{recognize, Cmp, RangeOp, Step, Sugar};
use std::collections::HashMap;

/// Renders `f` in plain English.
///
/// `descriptions` maps a proposition's full name (`take(knife)`) or base name (`take`) to a
/// description, the full name taking priority. In a description, a `{...}` placeholder (e.g.
/// "the agent takes {item}") is replaced by the atom's argument (`take(item)` gives "the agent
/// takes item"). A proposition without a description is rendered as "`` `name` holds ``".
pub fn render(arena: &Arena, f: Formula, descriptions: &HashMap<String, String>) -> String {
    Renderer {
        arena,
        descriptions,
    }
    .go(f)
    .text
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Kind {
    /// A clause that needs no parentheses anywhere (atoms, negated atoms, constants).
    Simple,
    /// A chain of temporal prefixes over a simple clause ("always eventually p"): fine as the
    /// last operand of a connective, parenthesized elsewhere.
    Prefix,
    /// Anything with a connective or a comma.
    Compound,
}

struct Phrase {
    text: String,
    kind: Kind,
}

fn phrase(text: String, kind: Kind) -> Phrase {
    Phrase { text, kind }
}

struct Renderer<'a> {
    arena: &'a Arena,
    descriptions: &'a HashMap<String, String>,
}

impl Renderer<'_> {
    /// The description of an atom, or `None` if it has none.
    fn description(&self, f: Formula) -> Option<String> {
        let Node::Atom(s) = self.arena.node(f) else {
            return None;
        };
        if let Some((l, r)) = trac_core::names::comparison_sides(self.arena.sym_name(*s)) {
            return Some(format!("{l} equals {r}"));
        }
        let parts = self.arena.sym_parts(*s);
        let d = self
            .descriptions
            .get(&parts.name)
            .or_else(|| parts.arg.as_ref().and(self.descriptions.get(&parts.base)))?;
        Some(match &parts.arg {
            Some(arg) => substitute(d, arg),
            None => d.clone(),
        })
    }

    fn atom_name(&self, f: Formula) -> Option<&str> {
        match self.arena.node(f) {
            Node::Atom(s) => Some(self.arena.sym_name(*s)),
            _ => None,
        }
    }

    /// An undescribed atom's name.
    fn bare_atom(&self, f: Formula) -> Option<&str> {
        if self.description(f).is_some() {
            None
        } else {
            self.atom_name(f)
        }
    }

    /// `phrase` as an operand of a connective; `last` if nothing follows it.
    fn operand(p: Phrase, last: bool) -> String {
        match p.kind {
            Kind::Compound => format!("({})", p.text),
            Kind::Prefix if !last => format!("({})", p.text),
            _ => p.text,
        }
    }

    /// A temporal prefix applied to `body`.
    fn prefixed(prefix: &str, body: Phrase) -> Phrase {
        match body.kind {
            Kind::Compound => phrase(format!("{prefix}, {}", body.text), Kind::Compound),
            _ => phrase(format!("{prefix} {}", body.text), Kind::Prefix),
        }
    }

    fn list(&self, ops: &[Formula], word: &str) -> Phrase {
        let n = ops.len();
        let parts: Vec<String> = ops
            .iter()
            .enumerate()
            .map(|(i, &c)| Self::operand(self.go(c), i + 1 == n))
            .collect();
        let text = match parts.split_last() {
            Some((last, init)) if !init.is_empty() => {
                format!("{} {word} {last}", init.join(", "))
            }
            _ => parts.concat(),
        };
        phrase(text, Kind::Compound)
    }

    fn binary(&self, a: Formula, middle: &str, b: Formula, suffix: &str) -> Phrase {
        let l = Self::operand(self.go(a), false);
        let r = Self::operand(self.go(b), suffix.is_empty());
        phrase(format!("{l} {middle} {r}{suffix}"), Kind::Compound)
    }

    /// An abbreviation in words ("within 1 to 4 steps", "at most 3 steps so far at which").
    fn sugar(&self, s: Sugar) -> Phrase {
        match s {
            Sugar::End => phrase("this is the last step".into(), Kind::Simple),
            Sugar::Repeat { step, n, body } => {
                let prefix = match step {
                    Step::Next => format!("in {n} steps"),
                    Step::StrongNext => format!("in {n} steps (which must exist)"),
                    Step::Yesterday => format!("{n} steps ago"),
                    Step::WeakYesterday => format!("{n} steps ago (if any)"),
                };
                Self::prefixed(&prefix, self.go(body))
            }
            Sugar::Range {
                op,
                strong,
                lo,
                hi,
                body,
            } => {
                let span = match hi {
                    Some(hi) => format!("{lo} to {hi} steps"),
                    None => format!("{lo} or more steps"),
                };
                let mut prefix = match op {
                    RangeOp::Finally => format!("within {span}"),
                    RangeOp::Globally => format!("at every step {span} ahead"),
                    RangeOp::Once => format!("at some step {span} back"),
                    RangeOp::Historically => format!("at every step {span} back (if any)"),
                };
                if strong {
                    prefix.push_str(" (which must exist)");
                }
                Self::prefixed(&prefix, self.go(body))
            }
            Sugar::Count {
                body,
                window,
                cmp,
                k,
            } => {
                let bound = match cmp {
                    Cmp::Le => "at most",
                    _ => "at least",
                };
                let span = match window {
                    Some(w) => format!("of the last {w} steps"),
                    None => "steps so far".to_string(),
                };
                let inner = self.go(body);
                phrase(
                    format!("{bound} {k} {span} at which {}", inner.text),
                    Kind::Compound,
                )
            }
        }
    }

    fn go(&self, f: Formula) -> Phrase {
        use Node::*;
        if let Some(s) = recognize(self.arena, f) {
            return self.sugar(s);
        }
        match self.arena.node(f) {
            True => phrase("true".into(), Kind::Simple),
            False => phrase("false".into(), Kind::Simple),
            Atom(_) => match (self.description(f), self.atom_name(f)) {
                (Some(d), _) => phrase(d, Kind::Simple),
                (None, Some(name)) if crate::lexical::split_exists(name).is_some() => {
                    let (var, body) = crate::lexical::split_exists(name).unwrap_or_default();
                    let mut arena = Arena::new();
                    match crate::parser::parse(&mut arena, body) {
                        Ok(b) => {
                            let inner = Renderer {
                                arena: &arena,
                                descriptions: self.descriptions,
                            }
                            .go(b)
                            .text;
                            phrase(
                                format!("for some {var} (among the values seen so far), {inner}"),
                                Kind::Compound,
                            )
                        }
                        Err(_) => phrase(format!("`{name}` holds"), Kind::Simple),
                    }
                }
                (None, name) => phrase(format!("`{}` holds", name.unwrap_or("")), Kind::Simple),
            },
            Not(a) => {
                if let Some((l, r)) = self
                    .atom_name(*a)
                    .and_then(trac_core::names::comparison_sides)
                {
                    return phrase(format!("{l} differs from {r}"), Kind::Simple);
                }
                if let Some(d) = self.description(*a) {
                    return phrase(format!("not {d}"), Kind::Simple);
                }
                if let Some(name) = self.atom_name(*a) {
                    return phrase(format!("`{name}` does not hold"), Kind::Simple);
                }
                let inner = self.go(*a);
                match inner.kind {
                    Kind::Compound => phrase(
                        format!("it is not the case that ({})", inner.text),
                        Kind::Simple,
                    ),
                    _ => phrase(
                        format!("it is not the case that {}", inner.text),
                        Kind::Prefix,
                    ),
                }
            }
            And(v) => self.list(v, "and"),
            Or(v) => self.list(v, "or"),
            Xor(a, b) => {
                let l = Self::operand(self.go(*a), false);
                let r = Self::operand(self.go(*b), false);
                phrase(format!("either {l} or {r}, but not both"), Kind::Compound)
            }
            Implies(a, b) => {
                let ante = self.go(*a);
                let ante = if ante.kind == Kind::Compound && ante.text.contains(',') {
                    format!("({})", ante.text)
                } else {
                    ante.text
                };
                let cons = self.go(*b).text;
                phrase(format!("if {ante}, then {cons}"), Kind::Compound)
            }
            Equiv(a, b) => self.binary(*a, "if and only if", *b, ""),
            Next(a) => Self::prefixed("at the next step", self.go(*a)),
            StrongNext(a) => Self::prefixed("at the next step (which must exist)", self.go(*a)),
            Finally(a) => Self::prefixed("eventually", self.go(*a)),
            Globally(a) => match self.arena.node(*a) {
                Not(b) if recognize(self.arena, *a).is_none() => {
                    if let Some(name) = self.bare_atom(*b) {
                        return phrase(format!("`{name}` never holds"), Kind::Simple);
                    }
                    let inner = self.go(*b);
                    match inner.kind {
                        Kind::Compound => phrase(
                            format!("it is never the case that ({})", inner.text),
                            Kind::Simple,
                        ),
                        kind => phrase(
                            format!("it is never the case that {}", inner.text),
                            if kind == Kind::Simple {
                                Kind::Simple
                            } else {
                                Kind::Prefix
                            },
                        ),
                    }
                }
                _ => Self::prefixed("always", self.go(*a)),
            },
            Until(a, b) => self.binary(*a, "until", *b, ""),
            WeakUntil(a, b) => self.binary(*a, "until", *b, " (or forever)"),
            Release(a, b) => self.binary(
                *b,
                "up to and including the step where",
                *a,
                " (or forever)",
            ),
            StrongRelease(a, b) => self.binary(
                *b,
                "up to and including the step where",
                *a,
                " (which must eventually happen)",
            ),
            Yesterday(a) => Self::prefixed("at the previous step", self.go(*a)),
            WeakYesterday(a) => Self::prefixed("at the previous step (if any)", self.go(*a)),
            Once(a) => Self::prefixed("at some earlier or the current step", self.go(*a)),
            Historically(a) => match self.arena.node(*a) {
                Not(b) if self.bare_atom(*b).is_some() => phrase(
                    format!(
                        "`{}` has never held so far",
                        self.bare_atom(*b).unwrap_or("")
                    ),
                    Kind::Simple,
                ),
                _ => Self::prefixed("so far always", self.go(*a)),
            },
            Since(a, b) => self.binary(*a, "since", *b, ""),
        }
    }
}

/// Replaces every `{...}` placeholder in `description` by `arg`; for several arguments
/// (`package1, a1`, a proposition with several parameters) the placeholders take them in the
/// order the placeholder names first appear.
fn substitute(description: &str, arg: &str) -> String {
    if arg.contains(", ") {
        let args: Vec<&str> = trac_core::names::split_list(arg).collect();
        let mut names: Vec<&str> = Vec::new();
        let mut out = description.to_string();
        let mut rest = description;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}') else {
                break;
            };
            let name = &rest[open + 1..open + close];
            if !names.contains(&name) {
                names.push(name);
            }
            rest = &rest[open + close + 1..];
        }
        for (name, a) in names.iter().zip(&args) {
            out = out.replace(&format!("{{{name}}}"), a);
        }
        return out;
    }
    let mut out = String::with_capacity(description.len());
    let mut rest = description;
    while let Some(open) = rest.find('{') {
        match rest[open + 1..].find(['{', '}']) {
            Some(close) if rest.as_bytes()[open + 1 + close] == b'}' => {
                out.push_str(&rest[..open]);
                out.push_str(arg);
                rest = &rest[open + 1 + close + 1..];
            }
            _ => {
                out.push_str(&rest[..=open]);
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::parse;

    fn en(src: &str, descriptions: &[(&str, &str)]) -> String {
        let mut a = Arena::new();
        let f = parse(&mut a, src).unwrap_or_else(|e| panic!("{}", e.render(src)));
        let d: HashMap<String, String> = descriptions
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        render(&a, f, &d)
    }

    const TAKE: &[(&str, &str)] = &[
        ("take", "the agent takes {item}"),
        ("examine", "the agent examines {item}"),
    ];

    #[test]
    fn brief_example() {
        assert_eq!(
            en("G(take(item) -> X examine(item))", TAKE),
            "always, if the agent takes item, then at the next step the agent examines item"
        );
    }

    #[test]
    fn full_name_description_wins_over_base() {
        let d = &[
            ("take", "the agent takes {x}"),
            ("take(knife)", "the agent arms itself"),
        ];
        assert_eq!(en("F take(knife)", d), "eventually the agent arms itself");
        assert_eq!(en("F take(apple)", d), "eventually the agent takes apple");
    }

    #[test]
    fn undescribed_atoms() {
        assert_eq!(en("a", &[]), "`a` holds");
        assert_eq!(en("F a", &[]), "eventually `a` holds");
        assert_eq!(en("G !a", &[]), "`a` never holds");
        assert_eq!(
            en("!a W b", &[]),
            "`a` does not hold until `b` holds (or forever)"
        );
        assert_eq!(
            en("F p & G !p", &[]),
            "(eventually `p` holds) and `p` never holds"
        );
        assert_eq!(en("GFa", &[]), "always eventually `a` holds");
        assert_eq!(
            en("G(a -> F b)", &[]),
            "always, if `a` holds, then eventually `b` holds"
        );
    }

    #[test]
    fn described_negations() {
        assert_eq!(
            en("G !take(item)", TAKE),
            "it is never the case that the agent takes item"
        );
        assert_eq!(
            en("!take(x) W examine(x)", TAKE),
            "not the agent takes x until the agent examines x (or forever)"
        );
    }

    #[test]
    fn connectives() {
        assert_eq!(en("a & b & c", &[]), "`a` holds, `b` holds and `c` holds");
        assert_eq!(
            en("(a | b) & c", &[]),
            "(`a` holds or `b` holds) and `c` holds"
        );
        assert_eq!(
            en("a xor b", &[]),
            "either `a` holds or `b` holds, but not both"
        );
        assert_eq!(en("a <-> b", &[]), "`a` holds if and only if `b` holds");
        assert_eq!(
            en("(a -> b) -> c", &[]),
            "if (if `a` holds, then `b` holds), then `c` holds"
        );
        assert_eq!(
            en("!(a & b)", &[]),
            "it is not the case that (`a` holds and `b` holds)"
        );
        assert_eq!(en("F(a & b)", &[]), "eventually, `a` holds and `b` holds");
    }

    #[test]
    fn future_operators() {
        assert_eq!(en("X a", &[]), "at the next step `a` holds");
        assert_eq!(en("X X X a", &[]), "in 3 steps `a` holds");
        assert_eq!(
            en("X[!] a", &[]),
            "at the next step (which must exist) `a` holds"
        );
        assert_eq!(en("a U b", &[]), "`a` holds until `b` holds");
        assert_eq!(
            en("a R b", &[]),
            "`b` holds up to and including the step where `a` holds (or forever)"
        );
        assert_eq!(
            en("a M b", &[]),
            "`b` holds up to and including the step where `a` holds (which must eventually happen)"
        );
        assert_eq!(
            en("(F a) U b", &[]),
            "(eventually `a` holds) until `b` holds"
        );
    }

    #[test]
    fn past_operators() {
        assert_eq!(en("Y a", &[]), "at the previous step `a` holds");
        assert_eq!(en("Z a", &[]), "at the previous step (if any) `a` holds");
        assert_eq!(
            en("O a", &[]),
            "at some earlier or the current step `a` holds"
        );
        assert_eq!(en("H a", &[]), "so far always `a` holds");
        assert_eq!(en("H !a", &[]), "`a` has never held so far");
        assert_eq!(en("a S b", &[]), "`a` holds since `b` holds");
        assert_eq!(
            en("G(examine(x) -> O take(x))", TAKE),
            "always, if the agent examines x, then at some earlier or the current step the agent takes x"
        );
    }

    #[test]
    fn placeholders() {
        assert_eq!(substitute("takes {item} now", "knife"), "takes knife now");
        assert_eq!(substitute("{a} and {b}", "x"), "x and x");
        assert_eq!(substitute("no placeholder", "x"), "no placeholder");
        assert_eq!(substitute("odd { brace", "x"), "odd { brace");
        assert_eq!(substitute("{{x}", "y"), "{y");
    }
}
