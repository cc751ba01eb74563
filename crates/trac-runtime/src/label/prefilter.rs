//! A multi-pattern prefilter for the regexes of a spec's labeling rules (issue 14): one
//! Aho–Corasick pass over a step's text finds which of the rules' *required literals* occur in
//! it, and a rule's regex runs only when every literal set it needs has an occurrence.
//!
//! For each regex, [`required_literals`] reads its syntax tree (`regex_syntax::hir`) and gives a
//! conjunction of literal sets: every match of the regex contains, for each set, at least one of
//! its strings (`^[^(]*\bdrive\b` needs `drive`; `\b(?:move|put|place)\b.*?\bbox\b` needs one of
//! `move`, `put`, `place`, and `box`). The analysis is conservative: a regex it cannot read
//! gives no set and always runs. The automaton matches ASCII letters case-insensitively (the
//! literals are stored in ASCII lowercase), so a case-sensitive rule's literal is found as well
//! as a case-insensitive one's; the non-ASCII case variants of a case-insensitive regex
//! (`(?i)k` also matches the Kelvin sign `K`) are expanded into literals of their own. The
//! prefilter therefore only skips regexes that cannot match: labels are exactly those of
//! running every regex (a quickcheck property in `tests/labeler_prefilter.rs`).
//!
//! Cost per text: one pass of the automaton, O(text length + occurrences), then O(literal sets)
//! per regex checked.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex_syntax::hir::{Class, Hir, HirKind};
use std::collections::BTreeSet;

/// The most strings an exact set (or one required set) may hold before it is given up.
const MAX_SET: usize = 32;
/// The most characters a class may hold to be expanded into strings.
const MAX_CLASS: usize = 4;
/// Literals shorter than this (in bytes) are not worth a search: a set holding one is dropped
/// (which only makes the prefilter run the regex more often).
const MIN_LEN: usize = 3;
/// The most literal sets kept per regex (the longest ones).
const MAX_SETS: usize = 3;

type Set = BTreeSet<Vec<u8>>;

fn lower(s: &[u8]) -> Vec<u8> {
    s.to_ascii_lowercase()
}

/// The strings `h` matches, when they are few (ASCII-lowercased; `""` for zero-width
/// assertions); `None` when there are too many or infinitely many.
fn exact(h: &Hir) -> Option<Set> {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => Some(Set::from([Vec::new()])),
        HirKind::Literal(l) => Some(Set::from([lower(&l.0)])),
        HirKind::Class(Class::Unicode(c)) => {
            let mut n = 0usize;
            for r in c.ranges() {
                n += (r.end() as usize) - (r.start() as usize) + 1;
                if n > MAX_CLASS {
                    return None;
                }
            }
            let mut out = Set::new();
            for r in c.ranges() {
                for ch in r.start()..=r.end() {
                    let mut b = [0u8; 4];
                    out.insert(lower(ch.encode_utf8(&mut b).as_bytes()));
                }
            }
            Some(out)
        }
        HirKind::Class(Class::Bytes(c)) => {
            let mut n = 0usize;
            for r in c.ranges() {
                n += usize::from(r.end() - r.start()) + 1;
                if n > MAX_CLASS {
                    return None;
                }
            }
            let mut out = Set::new();
            for r in c.ranges() {
                for b in r.start()..=r.end() {
                    out.insert(vec![b.to_ascii_lowercase()]);
                }
            }
            Some(out)
        }
        HirKind::Capture(c) => exact(&c.sub),
        HirKind::Repetition(r) if r.min == 1 && r.max == Some(1) => exact(&r.sub),
        HirKind::Repetition(_) => None,
        HirKind::Concat(v) => {
            let mut acc = Set::from([Vec::new()]);
            for x in v {
                acc = product(&acc, &exact(x)?)?;
            }
            Some(acc)
        }
        HirKind::Alternation(v) => {
            let mut acc = Set::new();
            for x in v {
                acc.extend(exact(x)?);
                if acc.len() > MAX_SET {
                    return None;
                }
            }
            Some(acc)
        }
    }
}

/// Every concatenation of a string of `a` with one of `b`; `None` past [`MAX_SET`].
fn product(a: &Set, b: &Set) -> Option<Set> {
    if a.len().saturating_mul(b.len()) > MAX_SET {
        return None;
    }
    let mut out = Set::new();
    for x in a {
        for y in b {
            let mut s = x.clone();
            s.extend_from_slice(y);
            out.insert(s);
        }
    }
    Some(out)
}

/// A useful required set: not empty, no string shorter than [`MIN_LEN`].
fn useful(s: &Set) -> bool {
    !s.is_empty() && s.iter().all(|x| x.len() >= MIN_LEN)
}

/// Literal sets every match of `h` contains a string of (one string per set, each set a
/// disjunction, the list a conjunction). Sound, not complete: fewer sets is always allowed.
fn required(h: &Hir) -> Vec<Set> {
    if let Some(s) = exact(h) {
        return if useful(&s) { vec![s] } else { Vec::new() };
    }
    match h.kind() {
        HirKind::Capture(c) => required(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => required(&r.sub),
        HirKind::Concat(v) => {
            let mut out = Vec::new();
            // A run of adjacent exact children is one literal (their product).
            let mut run: Option<Set> = None;
            for x in v {
                match exact(x) {
                    Some(e) => {
                        let next = match &run {
                            None => Some(e.clone()),
                            Some(r) => product(r, &e),
                        };
                        match next {
                            Some(n) => run = Some(n),
                            None => {
                                out.extend(run.take().filter(useful));
                                run = Some(e);
                            }
                        }
                    }
                    None => {
                        out.extend(run.take().filter(useful));
                        out.extend(required(x));
                    }
                }
            }
            out.extend(run.filter(useful));
            out
        }
        HirKind::Alternation(v) => {
            // One of the branches matches: the union of one set of each.
            let mut acc = Set::new();
            for x in v {
                let Some(best) = best_set(required(x)) else {
                    return Vec::new();
                };
                acc.extend(best);
                if acc.len() > MAX_SET {
                    return Vec::new();
                }
            }
            vec![acc]
        }
        _ => Vec::new(),
    }
}

/// The length of a set's shortest string (how selective its search is).
fn min_len(s: &Set) -> usize {
    s.iter().map(Vec::len).min().unwrap_or(0)
}

fn best_set(sets: Vec<Set>) -> Option<Set> {
    sets.into_iter().max_by_key(min_len)
}

/// The literal sets every match of the regex `pattern` (regex crate syntax, flags inline) must
/// contain one string of each of (ASCII-lowercased); empty when none is known (the regex must
/// always run), also when `pattern` does not parse.
pub fn required_literals(pattern: &str) -> Vec<BTreeSet<Vec<u8>>> {
    let Ok(hir) = regex_syntax::Parser::new().parse(pattern) else {
        return Vec::new();
    };
    let mut sets = required(&hir);
    sets.sort_by_key(|s| std::cmp::Reverse(min_len(s)));
    sets.dedup();
    sets.truncate(MAX_SETS);
    sets
}

/// `pattern` with its Unicode word boundaries (`\b`, `\B`, `\<`, `\>`, `\b{start-half}`,
/// ...) replaced by their ASCII forms, printed back as regex syntax; `None` when it has none (or
/// does not parse). On an ASCII text the two regexes match exactly alike: the Unicode word
/// characters that are ASCII are `[0-9A-Za-z_]`, the ASCII word characters, and a boundary only
/// looks at the text's characters. The ASCII boundary is much cheaper to test (no UTF-8 decoding
/// and Unicode table lookup at every position the regex engine tries).
pub fn ascii_word_variant(pattern: &str) -> Option<String> {
    let hir = regex_syntax::Parser::new().parse(pattern).ok()?;
    let mut changed = false;
    let out = ascii_words(&hir, &mut changed);
    changed.then(|| out.to_string())
}

fn ascii_words(h: &Hir, changed: &mut bool) -> Hir {
    use regex_syntax::hir::{Capture, Look, Repetition};
    match h.kind() {
        HirKind::Look(l) => {
            let a = match l {
                Look::WordUnicode => Look::WordAscii,
                Look::WordUnicodeNegate => Look::WordAsciiNegate,
                Look::WordStartUnicode => Look::WordStartAscii,
                Look::WordEndUnicode => Look::WordEndAscii,
                Look::WordStartHalfUnicode => Look::WordStartHalfAscii,
                Look::WordEndHalfUnicode => Look::WordEndHalfAscii,
                other => *other,
            };
            *changed |= a != *l;
            Hir::look(a)
        }
        HirKind::Repetition(r) => Hir::repetition(Repetition {
            min: r.min,
            max: r.max,
            greedy: r.greedy,
            sub: Box::new(ascii_words(&r.sub, changed)),
        }),
        HirKind::Capture(c) => Hir::capture(Capture {
            index: c.index,
            name: c.name.clone(),
            sub: Box::new(ascii_words(&c.sub, changed)),
        }),
        HirKind::Concat(v) => Hir::concat(v.iter().map(|x| ascii_words(x, changed)).collect()),
        HirKind::Alternation(v) => {
            Hir::alternation(v.iter().map(|x| ascii_words(x, changed)).collect())
        }
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) => h.clone(),
    }
}

/// The prefilter of a set of regexes (the text leaves of a spec's rules), built once per spec.
#[derive(Clone, Debug)]
pub struct Prefilter {
    /// All literals of all regexes, deduplicated; `None` when no regex has any.
    ac: Option<AhoCorasick>,
    /// Per regex: its literal sets, as pattern ids; empty = always run.
    needs: Vec<Vec<Vec<u32>>>,
}

/// The literals found in one text: one bit per pattern of the prefilter's automaton (the
/// first 256 inline, without allocating).
#[derive(Clone, Debug, Default)]
pub struct Found {
    inline: [u64; 4],
    spill: Vec<u64>,
}

impl Found {
    fn set(&mut self, k: usize) {
        match self.inline.get_mut(k / 64) {
            Some(w) => *w |= 1 << (k % 64),
            None => {
                let i = k / 64 - 4;
                if self.spill.len() <= i {
                    self.spill.resize(i + 1, 0);
                }
                self.spill[i] |= 1 << (k % 64);
            }
        }
    }

    fn get(&self, k: usize) -> bool {
        let w = match self.inline.get(k / 64) {
            Some(w) => *w,
            None => self.spill.get(k / 64 - 4).copied().unwrap_or(0),
        };
        w & (1 << (k % 64)) != 0
    }
}

impl Prefilter {
    /// Builds the prefilter of `regexes` (regex crate syntax): regex `k` of the list is
    /// [`Prefilter::may_match`]'s `k`.
    pub fn new<'a>(regexes: impl IntoIterator<Item = &'a str>) -> Prefilter {
        let mut literals: Vec<Vec<u8>> = Vec::new();
        let mut needs = Vec::new();
        for re in regexes {
            let sets = required_literals(re);
            let ids = sets
                .iter()
                .map(|s| {
                    s.iter()
                        .map(|lit| {
                            let k = literals.iter().position(|l| l == lit).unwrap_or_else(|| {
                                literals.push(lit.clone());
                                literals.len() - 1
                            });
                            u32::try_from(k).expect("fewer than 2^32 literals")
                        })
                        .collect()
                })
                .collect();
            needs.push(ids);
        }
        let ac = if literals.is_empty() {
            None
        } else {
            AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                .build(&literals)
                .ok()
        };
        if ac.is_none() {
            // Without an automaton every regex runs.
            needs.iter_mut().for_each(Vec::clear);
        }
        Prefilter { ac, needs }
    }

    /// True when no regex can be skipped (then [`Prefilter::scan`] need not be called).
    pub fn is_trivial(&self) -> bool {
        self.ac.is_none()
    }

    /// The literals occurring in `text` (one pass over it), written into `found`.
    pub fn scan(&self, text: &str, found: &mut Found) {
        found.inline = [0; 4];
        found.spill.clear();
        let Some(ac) = &self.ac else { return };
        for m in ac.find_overlapping_iter(text) {
            found.set(m.pattern().as_usize());
        }
    }

    /// False when regex `k` cannot match the text `found` was scanned from (a literal set it
    /// needs has no occurrence there); true otherwise.
    pub fn may_match(&self, k: usize, found: &Found) -> bool {
        self.needs[k]
            .iter()
            .all(|set| set.iter().any(|&p| found.get(p as usize)))
    }

    /// How many literal sets regex `k` needs (0: it always runs).
    pub fn needs_of(&self, k: usize) -> usize {
        self.needs[k].len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lits(p: &str) -> Vec<Vec<String>> {
        required_literals(p)
            .into_iter()
            .map(|s| {
                s.into_iter()
                    .map(|b| String::from_utf8(b).unwrap())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn literals_of_rule_regexes() {
        assert_eq!(lits(r"(?i)^[^(]*\bdrive\b"), vec![vec!["drive"]]);
        // The Kelvin sign is a case variant of `k` under (?i).
        assert_eq!(
            lits(r"(?i)\btake\b"),
            vec![vec!["take".to_string(), "ta\u{212a}e".to_string()]]
        );
        assert_eq!(
            lits(r"(?i)^[^(]*\bload\b.*?\b(?P<pkg>package\d+)\b.*?\b(?P<area>a\d+)\b"),
            vec![
                vec!["package".to_string(), "pac\u{212a}age".to_string()],
                vec!["load".to_string()]
            ]
        );
        assert_eq!(
            lits(r"\b(?:move|put|place)\b.*?\bbox\b"),
            vec![vec!["move", "place", "put"], vec!["box"]]
        );
        // Optional or too short: nothing required.
        assert!(lits(r"(?:look)?\s").is_empty());
        assert!(lits(r"\bgo\b").is_empty());
        assert!(lits(r"\S").is_empty());
        assert!(lits(r"a[").is_empty());
    }

    #[test]
    fn ascii_word_variants() {
        let v = ascii_word_variant(r"(?i)^[^(]*\bload\b.*?\b(?P<pkg>package\d+)\b").unwrap();
        assert!(v.contains(r"(?-u:\b)") && !v.contains(r"(?:\b)"), "{v}");
        let re = regex::Regex::new(&v).unwrap();
        let caps = re.captures("1. LOAD package12 into a1").unwrap();
        assert_eq!(&caps["pkg"], "package12");
        assert!(ascii_word_variant(r"^[^(]*drive").is_none());
        // Not used on non-ASCII texts: there the two differ.
        let uni = regex::Regex::new(r"\bé").unwrap();
        let asc = regex::Regex::new(&ascii_word_variant(r"\bé").unwrap()).unwrap();
        assert!(uni.is_match("é") && !asc.is_match("é"));
    }

    #[test]
    fn prefilter_skips_only_regexes_without_their_literals() {
        let p = Prefilter::new([r"(?i)\bdrive\b", r"(?i)\bunload\b", r"\S"]);
        let mut f = Found::default();
        p.scan("LOAD package1 into a1", &mut f);
        assert!(!p.may_match(0, &f));
        assert!(!p.may_match(1, &f));
        assert!(p.may_match(2, &f));
        p.scan("Unload package1; DRIVE", &mut f);
        assert!(p.may_match(0, &f) && p.may_match(1, &f));
        assert_eq!(p.needs_of(2), 0);
    }
}
