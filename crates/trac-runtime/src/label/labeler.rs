//! Labeling functions: which atomic propositions hold at a step of a trace.
//!
//! - [`TraceLabels`] takes the labels written in the trace (`"labels": [..]` in JSON Lines).
//! - [`RuleLabeler`] evaluates the labeling [`Rule`]s of a spec on each event's text
//!   ([`Event::text`]) and adds the trace's own labels.
//!
//! Label strings are proposition names (`look`) or, for a parametric proposition, `name(value)`
//! for each captured value (`take(red hot pepper)`).

use crate::label::prefilter::{ascii_word_variant, Found, Prefilter};
use crate::trace::{Event, ToolCall};
use regex::Regex;
use std::cell::RefCell;
use std::fmt;
use std::sync::{Arc, OnceLock};
use trac_core::names::format_value;
/// The syntax of a label given by a trace (`look`, `take(knife)`), checked by the trace readers;
/// every label the labelers here produce passes it.
pub use trac_core::names::{check_label, LabelSyntaxError};
use trac_spec::spec::{
    glob_match, parse_arg_path, words_tokens, CheckedSpec, PathStep, Rule, RuleCompiler, RuleError,
    Spec, SpecError, WordsError, WordsToken,
};

/// A `Words` pattern compiled to a regex (the meaning of the labeling rule `Words`, see
/// `trac_spec::spec`): pattern words joined by `\W+`, word boundaries at both ends, `{x}` a
/// named group of one word, `{x...}` of one or more words (lazily, unless last).
///
/// How a capture starts and ends, so that `take {item...}` gives `yellow potato` on
/// `take yellow potato from fridge` and `knife` on `take the knife`:
/// - a leading article (`a`, `an`, `the`, in any case) is skipped, before `{x}` and `{x...}`;
/// - the words of a `{x...}` capture are separated by spaces and in-word punctuation (`-`, `'`,
///   `/`, ...), never by clause punctuation ([`CLAUSE_PUNCTUATION`]: `, ; : . ! ?`, brackets,
///   quotes), so the capture ends there (`examine onion: examine the onion` captures `onion`
///   twice);
/// - after the match, a `{x...}` value is cut before its first preposition
///   ([`PREPOSITIONS`]: `from`, `in`, `into`, `on`, `to`, `with`, `at`, ...) that is not its first
///   word ([`cut_at_preposition`]): `knife from the table` gives `knife`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WordsPattern {
    /// The regex (regex crate syntax, without case flag): pattern words joined by `\W+`, with word
    /// boundaries at both ends; placeholders are named groups.
    pub regex: String,
    /// The placeholder names, in order.
    pub placeholders: Vec<String>,
    /// The names of the `{x...}` placeholders (cut by [`cut_at_preposition`] after matching).
    pub many: Vec<String>,
}

/// Characters that end a `{x...}` capture of a `Words` pattern (they separate clauses, not the
/// words of a name).
pub const CLAUSE_PUNCTUATION: &str = ",;:.!?()[]{}\"<>|";

/// The words before which a `{x...}` capture of a `Words` pattern ends (compared
/// case-insensitively; a value's first word is never cut): the prepositions that introduce
/// where or with what an action is done (`take knife from fridge`, `cut onion with knife`,
/// `put apple in box`). `of` is not one (`bag of chips` is a name).
pub const PREPOSITIONS: [&str; 21] = [
    "from", "in", "into", "inside", "on", "onto", "to", "toward", "towards", "with", "without",
    "at", "under", "over", "using", "for", "by", "near", "off", "through", "via",
];

/// A `{x...}` value cut before its first word (not the first) that is one of [`PREPOSITIONS`],
/// and trimmed: `knife from the table` gives `knife`, `on stove` stays `on stove`.
/// O(length of the value).
pub fn cut_at_preposition(value: &str) -> &str {
    let mut first = true;
    let mut at = 0;
    for word in value.split_whitespace() {
        // Byte offset of this word in `value` (split_whitespace yields subslices).
        let start = word.as_ptr() as usize - value.as_ptr() as usize;
        if !first && PREPOSITIONS.iter().any(|p| p.eq_ignore_ascii_case(word)) {
            return value[..start].trim_end();
        }
        first = false;
        at = start + word.len();
    }
    &value[..at]
}

impl WordsPattern {
    /// Compiles a `Words` pattern such as `"take {item...} from {place}"`.
    ///
    /// # Errors
    /// A malformed pattern (see [`trac_spec::spec::words_tokens`]).
    pub fn parse(pattern: &str) -> Result<WordsPattern, WordsError> {
        let toks = words_tokens(pattern)?;
        let mut regex = String::from(r"\b");
        let mut placeholders = Vec::new();
        let mut many = Vec::new();
        let n = toks.len();
        // Inside a `{x...}` capture, words are separated by anything but clause punctuation.
        let sep = format!(r"[^\w{}]+", regex::escape(CLAUSE_PUNCTUATION));
        for (k, t) in toks.iter().enumerate() {
            if k > 0 {
                regex.push_str(r"\W+");
            }
            match t {
                WordsToken::Word(w) => regex.push_str(&regex::escape(w)),
                WordsToken::One(name) | WordsToken::Many(name) => {
                    placeholders.push(name.clone());
                    let body = match t {
                        WordsToken::One(_) => r"\w+".to_string(),
                        _ if k + 1 == n => format!(r"\w+(?:{sep}\w+)*"),
                        _ => format!(r"\w+(?:{sep}\w+)*?"),
                    };
                    if matches!(t, WordsToken::Many(_)) {
                        many.push(name.clone());
                    }
                    // A leading article is not part of the value.
                    regex.push_str(&format!(r"(?:(?i:a|an|the)\W+)?(?P<{name}>{body})"));
                }
            }
        }
        regex.push_str(r"\b");
        Ok(WordsPattern {
            regex,
            placeholders,
            many,
        })
    }
}

/// The regex (regex crate syntax) of a `Words` or `Regex` leaf of a rule, with `(?i)` prepended
/// unless `case_sensitive`; `None` for `AnyOf`, `AllOf` and `Not`. A placeholder `{x}` of a
/// `Words` pattern becomes the named group `x`.
///
/// # Errors
/// A malformed `Words` pattern (see [`WordsPattern::parse`]). The regex itself is not compiled
/// here.
pub fn leaf_regex(rule: &Rule, case_sensitive: bool) -> Option<Result<String, WordsError>> {
    let flags = if case_sensitive { "" } else { "(?i)" };
    match rule {
        Rule::Words(w) => Some(WordsPattern::parse(w).map(|p| format!("{flags}{}", p.regex))),
        Rule::Regex(r) => Some(Ok(format!("{flags}{r}"))),
        _ => None,
    }
}

/// The [`RuleCompiler`] of the labelers: every `Words` / `Regex` leaf compiled to the regex
/// [`RuleLabeler`] will run; its named groups are the parameters it captures.
#[derive(Clone, Copy, Debug, Default)]
pub struct RegexRules;

impl RuleCompiler for RegexRules {
    fn leaf(&self, leaf: &Rule, case_sensitive: bool) -> Result<Vec<String>, RuleError> {
        let flags = if case_sensitive { "" } else { "(?i)" };
        let src = match leaf {
            Rule::Field(_, r) => format!("{flags}{r}"),
            Rule::Tool(t) => return Ok(t.capture.iter().cloned().collect()),
            Rule::Arg {
                path,
                pattern,
                capture,
            }
            | Rule::Result {
                path,
                pattern,
                capture,
            } => {
                trac_spec::spec::parse_arg_path(path).map_err(RuleError::Path)?;
                if let Some(p) = pattern {
                    Regex::new(&format!("{flags}{p}"))
                        .map_err(|e| RuleError::Regex(one_line(&e)))?;
                }
                return Ok(capture.iter().cloned().collect());
            }
            _ => leaf_regex(leaf, case_sensitive).unwrap_or_else(|| Ok(String::new()))?,
        };
        let re = Regex::new(&src).map_err(|e| RuleError::Regex(one_line(&e)))?;
        Ok(re.capture_names().flatten().map(str::to_string).collect())
    }
}

/// What the steps of a trace carried beyond text and labels, for [`never_holds`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Structure {
    /// Some step had a role (chat and telemetry traces).
    pub roles: bool,
    /// Some step made a tool call or was a tool result.
    pub tools: bool,
    /// Some step had record fields (chat messages, OTLP span attributes).
    pub fields: bool,
}

/// Why labeling rule `rule` can never hold on a trace whose steps carry only `has` (a text log
/// has no roles, tool calls or fields; JSON Lines events no roles or tool calls), or `None` if it
/// may hold. A `Role` leaf needs roles, `Tool` / `Arg` tool calls, `Field` the field (`role`,
/// `tool_name`, `tool_call_id` need roles or tools; `input`, `output`, `session`, `timestamp`,
/// `step`, `tool_call_count` are always there; others need fields); `AllOf` fails with any
/// part, `AnyOf` with all; `Not` and text leaves may always hold. O(size of the rule).
pub fn never_holds(rule: &Rule, has: Structure) -> Option<String> {
    match rule {
        Rule::Words(_) | Rule::Regex(_) | Rule::Not(_) => None,
        Rule::Input(r) | Rule::Output(r) => never_holds(r, has),
        Rule::Role(r) => (!has.roles).then(|| format!("`Role({r:?})` needs message roles")),
        Rule::Tool(g) => (!has.tools).then(|| format!("`Tool({:?})` needs tool calls", g.name)),
        Rule::Result { path, .. } => {
            (!has.tools).then(|| format!("`Result({path:?})` needs tool results"))
        }
        Rule::Arg { path, .. } => {
            (!has.tools).then(|| format!("`Arg({path:?})` needs tool-call arguments"))
        }
        Rule::Field(name, _) => {
            let there = match name.as_str() {
                "input" | "output" | "session" | "timestamp" | "step" | "tool_call_count" => true,
                "role" => has.roles,
                "tool_name" | "tool_call_id" => has.tools,
                _ => has.fields,
            };
            (!there).then(|| format!("`Field({name:?}, ..)` needs a field `{name}`"))
        }
        Rule::AllOf(rs) => rs.iter().find_map(|r| never_holds(r, has)),
        Rule::AnyOf(rs) => {
            let why: Vec<String> = rs
                .iter()
                .map(|r| never_holds(r, has))
                .collect::<Option<_>>()?;
            // An empty `AnyOf` says nothing about the trace's structure.
            (!why.is_empty()).then(|| why.join(", "))
        }
    }
}

/// [`Spec::check`] with every labeling rule compiled as [`RuleLabeler`] will compile it
/// ([`RegexRules`]), so an invalid regex is reported with its position in the spec file.
///
/// # Errors
/// Every problem of the spec, as [`Spec::check_with`].
pub fn check_spec(spec: &Spec) -> Result<CheckedSpec, SpecError> {
    spec.check_with(&RegexRules)
}

/// The first line of a regex syntax error (its message without the caret drawing).
fn one_line(e: &regex::Error) -> String {
    match e {
        regex::Error::Syntax(s) => s
            .lines()
            .filter(|l| l.starts_with("error:"))
            .map(|l| l.trim_start_matches("error:").trim().to_string())
            .next()
            .unwrap_or_else(|| s.clone()),
        other => other.to_string(),
    }
}

/// A labeling function.
pub trait Labeler {
    /// The labels (atomic propositions true at this step) for `event`, given the previous events
    /// of the trace (`history`, oldest first, not including `event`).
    fn label(&mut self, event: &Event, history: &[Event]) -> Vec<String>;

    /// Like [`Labeler::label`], for labeling functions that can fail (a model that does not
    /// answer, or answers something unusable): the failure is reported instead of a step with
    /// no labels. The default never fails.
    fn try_label(&mut self, event: &Event, history: &[Event]) -> Result<Vec<String>, LabelFailure> {
        Ok(self.label(event, history))
    }
}

/// A step a labeling function could not label.
///
/// Displays as `step N (line L): message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelFailure {
    /// The event's step ([`Event::step`]).
    pub step: usize,
    /// The event's line in the trace file ([`Event::line`]).
    pub line: usize,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for LabelFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "step {} (line {}): {}",
            self.step, self.line, self.message
        )
    }
}

impl std::error::Error for LabelFailure {}

/// Uses the event's own `labels` as they are (none if the event has none).
#[derive(Clone, Copy, Debug, Default)]
pub struct TraceLabels;

impl Labeler for TraceLabels {
    fn label(&mut self, event: &Event, _history: &[Event]) -> Vec<String> {
        event.labels.clone().unwrap_or_default()
    }
}

/// An error compiling a spec's labeling rules.
///
/// Displays as ``proposition `name`: message``.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelerError {
    /// The proposition whose rule is wrong.
    pub proposition: String,
    /// What is wrong (bad regex, malformed `Words` pattern).
    pub message: String,
}

impl fmt::Display for LabelerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "proposition `{}`: {}", self.proposition, self.message)
    }
}

impl std::error::Error for LabelerError {}

#[derive(Clone, Debug)]
enum Compiled {
    /// A `Words` or `Regex` leaf; `group` is the parameter's capture group when the regex has
    /// one.
    Leaf {
        re: Regex,
        /// The same regex with ASCII word boundaries, run instead of `re` on ASCII texts (where
        /// both match alike: [`crate::label::prefilter::ascii_word_variant`]); `None` when `re` has no
        /// Unicode word boundary. Compiled when first needed, shared by the labeler's clones.
        ascii: Arc<OnceLock<Option<Regex>>>,
        /// The regex's index in the labeler's [`Prefilter`].
        id: usize,
        group: Option<String>,
        /// The group is a `{x...}` placeholder of a `Words` pattern: its values are cut before
        /// a preposition ([`cut_at_preposition`]).
        cut: bool,
    },
    AnyOf(Vec<Compiled>),
    AllOf(Vec<Compiled>),
    Not(Box<Compiled>),
    Role(String),
    /// A `Tool` leaf: its glob's alternatives; `capture`: the tool's name is the value.
    Tool {
        globs: Vec<String>,
        capture: bool,
    },
    Arg {
        path: Vec<PathStep>,
        re: Option<Regex>,
        capture: bool,
    },
    /// A `Result` leaf: as `Arg`, on a tool result's content parsed as JSON.
    Result {
        path: Vec<PathStep>,
        re: Option<Regex>,
        capture: bool,
    },
    Field {
        name: String,
        re: Regex,
        group: Option<String>,
    },
    /// The text leaves inside read this text.
    Text(TextSel, Box<Compiled>),
}

/// Which text of an event the `Words` / `Regex` leaves read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TextSel {
    /// [`Event::text`]: the output, else the input.
    Default,
    Input,
    Output,
}

#[derive(Clone, Debug)]
struct Prop {
    name: String,
    param: Option<String>,
    rule: Compiled,
    /// The rule has `Tool` / `Arg` leaves: it is evaluated once per tool call.
    per_call: bool,
}

/// What a rule is evaluated on: an event (or only a text, for [`RuleLabeler::label_text`]),
/// one of its tool calls, and the text leaves read.
#[derive(Clone, Copy)]
struct Cx<'a> {
    event: Option<&'a Event>,
    text: &'a str,
    call: Option<&'a ToolCall>,
    sel: TextSel,
    /// The literals found in each text (default, input, output), when prefiltering.
    scans: Option<&'a Scans<'a>>,
    /// The spec's `case_sensitive`: values captured from texts are lowercased unless it is set.
    case_sensitive: bool,
}

impl<'a> Cx<'a> {
    fn text(&self) -> &'a str {
        match (self.sel, self.event) {
            (TextSel::Default, _) | (_, None) => self.text,
            (TextSel::Input, Some(e)) => e.input.as_deref().unwrap_or(""),
            (TextSel::Output, Some(e)) => e.output.as_deref().unwrap_or(""),
        }
    }

    /// False when the prefilter shows the regex `id` cannot match the text leaves read.
    fn may_match(&self, id: usize) -> bool {
        let Some(s) = self.scans.filter(|s| !s.pre.is_trivial()) else {
            return true;
        };
        let k = match (self.sel, self.event) {
            (TextSel::Default, _) | (_, None) => 0,
            (TextSel::Input, Some(_)) => 1,
            (TextSel::Output, Some(_)) => 2,
        };
        let mut found = s.found[k].borrow_mut();
        let found = found.get_or_insert_with(|| {
            let mut f = Found::default();
            s.pre.scan(self.text(), &mut f);
            f
        });
        s.pre.may_match(id, found)
    }
}

/// The prefilter's scans of one event's texts, made when a leaf first reads them.
struct Scans<'a> {
    pre: &'a Prefilter,
    found: [RefCell<Option<Found>>; 3],
}

/// Labels events with a spec's labeling rules (see [`trac_spec::spec`] for their semantics),
/// plus the event's own `labels`.
///
/// For each proposition with a rule, in declaration order: a plain proposition gives `name` when
/// its rule holds on [`Event::text`]; a parametric one gives `name(value)` for every value
/// captured (all matches, deduplicated, in order of appearance in the text). Values are
/// normalized: whitespace runs become one space, surrounding whitespace is removed, and they are
/// lowercased unless the spec is `case_sensitive`. The event's explicit labels follow (union,
/// without duplicates).
#[derive(Clone, Debug)]
pub struct RuleLabeler {
    props: Vec<Prop>,
    case_sensitive: bool,
    /// One Aho–Corasick pass over the text for the literals of every `Words` / `Regex` leaf;
    /// a leaf whose literals do not occur is not run ([`crate::label::prefilter`]).
    prefilter: Arc<Prefilter>,
    /// Whether the prefilter and the ASCII word-boundary regexes are used (off only to
    /// compare, see [`RuleLabeler::without_prefilter`]).
    use_prefilter: bool,
}

impl RuleLabeler {
    /// Compiles the rules of `spec`'s propositions (those without a rule are skipped: their
    /// labels must come from the trace).
    ///
    /// Errors: the first rule that does not compile (bad regex, malformed `Words` pattern).
    /// [`check_spec`] reports these and more, with positions in the spec file.
    pub fn new(spec: &Spec) -> Result<RuleLabeler, LabelerError> {
        let mut props = Vec::new();
        let mut leaves = Vec::new();
        for p in &spec.propositions {
            let Some(rule) = &p.rule else { continue };
            let rule = compile(rule, p.param.as_deref(), spec.case_sensitive, &mut leaves)
                .map_err(|e| LabelerError {
                    proposition: p.name.clone(),
                    message: e.to_string(),
                })?;
            props.push(Prop {
                name: p.name.clone(),
                param: p.param.clone(),
                rule,
                per_call: p.rule.as_ref().is_some_and(Rule::reads_tool_calls),
            });
        }
        let prefilter = Arc::new(Prefilter::new(leaves.iter().map(String::as_str)));
        Ok(RuleLabeler {
            props,
            case_sensitive: spec.case_sensitive,
            use_prefilter: true,
            prefilter,
        })
    }

    /// The same labeler running every rule's regex on every text, without the Aho–Corasick
    /// prefilter and with Unicode word boundaries on ASCII texts too: the reference the fast
    /// labeler is tested against (same labels), and the "before" of the benchmarks.
    pub fn without_prefilter(mut self) -> RuleLabeler {
        self.use_prefilter = false;
        self
    }

    /// True when the spec has no labeling rule: the labeler then only passes on the trace's
    /// own labels and never reads the text.
    pub fn is_empty(&self) -> bool {
        self.props.is_empty()
    }

    /// The labels the rules give for `text` alone (without any trace labels; `Role`, `Tool`,
    /// `Arg` and `Field` rules do not hold, `Input` / `Output` read `text`).
    pub fn label_text(&self, text: &str) -> Vec<String> {
        self.label_cx(None, text)
    }

    /// The labels the rules give for `event` (without its own labels). A rule with `Tool` /
    /// `Arg` leaves is evaluated once per tool call of the event (and once without a call when
    /// there is none): it holds when it holds for some call, with the union of the values.
    pub fn label_event(&self, event: &Event) -> Vec<String> {
        self.label_cx(Some(event), event.text())
    }

    fn label_cx(&self, event: Option<&Event>, text: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let scans = self.use_prefilter.then(|| Scans {
            pre: &self.prefilter,
            found: Default::default(),
        });
        for p in &self.props {
            let base = Cx {
                event,
                text,
                call: None,
                sel: TextSel::Default,
                scans: scans.as_ref(),
                case_sensitive: self.case_sensitive,
            };
            let calls = event.map(|e| e.tool_calls.as_slice()).unwrap_or(&[]);
            let found = if p.per_call && !calls.is_empty() {
                let mut any = None;
                for (k, c) in calls.iter().enumerate() {
                    let cx = Cx {
                        call: Some(c),
                        ..base
                    };
                    if let Some(vals) = eval(&p.rule, cx) {
                        // Values from a call's arguments sort after the text's, by call.
                        let vals = vals.into_iter().map(|(pos, v)| (pos.saturating_add(k), v));
                        any.get_or_insert_with(Vec::new).extend(vals);
                    }
                }
                any
            } else {
                eval(&p.rule, base)
            };
            let Some(mut values) = found else {
                continue;
            };
            match &p.param {
                None => out.push(p.name.clone()),
                Some(_) => {
                    values.sort_by_key(|(pos, _)| *pos);
                    let mut seen: Vec<String> = Vec::new();
                    // The values are written as labels write them (`eval`).
                    for (_, v) in values {
                        if !seen.contains(&v) {
                            seen.push(v);
                        }
                    }
                    out.extend(seen.into_iter().map(|v| format!("{}({v})", p.name)));
                }
            }
        }
        out
    }
}

impl Labeler for RuleLabeler {
    fn label(&mut self, event: &Event, _history: &[Event]) -> Vec<String> {
        let mut out = self.label_event(event);
        for l in event.labels.iter().flatten() {
            if !out.contains(l) {
                out.push(l.clone());
            }
        }
        out
    }
}

/// The value of a label `name(value)` of a proposition with `arity` parameters, from the text
/// `raw` a rule captured or a model answered; `None` when a value is empty or, for several
/// parameters, `raw` does not hold `arity` comma-separated values. Each value is normalized on
/// its own (see `normalize`) and several are joined by `, ` (`loads(package1, a1)`), so the
/// label is well-formed ([`check_label`]). `drop_article`: a leading `a`/`an`/`the` followed by
/// more words is dropped (model answers; a rule's `{x}` capture skips it in its pattern).
/// O(length of `raw`).
pub fn label_value(
    raw: &str,
    arity: usize,
    case_sensitive: bool,
    drop_article: bool,
) -> Option<String> {
    let one = |part: &str| normalize(part, case_sensitive, drop_article);
    let v = if arity > 1 {
        let parts: Vec<String> = raw.split(',').map(one).collect();
        if parts.len() != arity || parts.iter().any(String::is_empty) {
            return None;
        }
        let parts: Vec<String> = parts.iter().map(|p| format_value(p).into_owned()).collect();
        parts.join(", ")
    } else {
        let v = one(raw);
        if v.is_empty() {
            return None;
        }
        format_value(&v).into_owned()
    };
    Some(v)
}

/// A value a `Words`, `Regex` or `Field` rule captured from a text, as a label writes it: its
/// whitespace runs made one space and trimmed, lowercased unless `case_sensitive`, then
/// written by [`format_value`] (quoted when it holds `,`, `(`, `)`, `"` or `\`, which are
/// kept); `None` when nothing is left. O(length of `raw`).
pub fn text_value(raw: &str, case_sensitive: bool) -> Option<String> {
    let b = raw.as_bytes();
    let simple = b.first() != Some(&b' ')
        && b.last() != Some(&b' ')
        && !b.windows(2).any(|w| w == b"  ")
        && b.iter().all(|&c| {
            c.is_ascii()
                && (c == b' ' || !c.is_ascii_whitespace())
                && c != 0x0b
                && (case_sensitive || !c.is_ascii_uppercase())
        });
    let v = if simple {
        std::borrow::Cow::Borrowed(raw)
    } else {
        let joined = raw.split_whitespace().collect::<Vec<_>>().join(" ");
        if case_sensitive {
            joined.into()
        } else {
            joined.to_lowercase().into()
        }
    };
    (!v.is_empty()).then(|| format_value(&v).into_owned())
}

/// A value read from a structured record (a tool call's arguments, a tool result's JSON, a
/// tool's name), as a label writes it: exactly, case and whitespace kept ([`format_value`]).
pub fn exact_value(raw: &str) -> String {
    format_value(raw).into_owned()
}

/// Whitespace runs to one space, trimmed, lowercased unless `case_sensitive`; `(`, `)` and `,`
/// become spaces first, so that `name(value)` is a well-formed label ([`check_label`]); with
/// `drop_article`, a leading article before more words is dropped.
fn normalize(v: &str, case_sensitive: bool, drop_article: bool) -> String {
    if is_normal(v, case_sensitive, drop_article) {
        // Most captured values (`package1`, `a3`, `red hot pepper`): nothing to change.
        return v.to_string();
    }
    normalize_slow(v, case_sensitive, drop_article)
}

/// [`normalize`] without its fast path.
fn normalize_slow(v: &str, case_sensitive: bool, drop_article: bool) -> String {
    let v = v.replace(['(', ')', ','], " ");
    let mut words: Vec<&str> = v.split_whitespace().collect();
    if drop_article
        && words.len() > 1
        && ["a", "an", "the"].contains(&words[0].to_lowercase().as_str())
    {
        words.remove(0);
    }
    let joined = words.join(" ");
    if case_sensitive {
        joined
    } else {
        joined.to_lowercase()
    }
}

/// Compiles `rule`; the source of each `Words` / `Regex` leaf's regex is pushed on `leaves`
/// (its index is the leaf's `id` in the prefilter).
/// True when [`normalize`] gives `v` unchanged: ASCII, single spaces between words and none
/// around, no `(`, `)` or `,`, no uppercase letter unless `case_sensitive`, and no article to
/// drop. O(length of `v`).
fn is_normal(v: &str, case_sensitive: bool, drop_article: bool) -> bool {
    let b = v.as_bytes();
    if b.first() == Some(&b' ') || b.last() == Some(&b' ') {
        return false;
    }
    let mut prev_space = false;
    for &c in b {
        let ok = match c {
            b' ' => !prev_space,
            b'(' | b')' | b',' => false,
            b'A'..=b'Z' => case_sensitive,
            // Other whitespace (tabs, newlines...) and non-ASCII text take the slow path.
            _ => c.is_ascii() && !c.is_ascii_whitespace() && c != 0x0b,
        };
        if !ok {
            return false;
        }
        prev_space = c == b' ';
    }
    if drop_article {
        if let Some((first, _)) = v.split_once(' ') {
            if ["a", "an", "the"].contains(&first.to_lowercase().as_str()) {
                return false;
            }
        }
    }
    true
}

fn compile(
    rule: &Rule,
    param: Option<&str>,
    case_sensitive: bool,
    leaves: &mut Vec<String>,
) -> Result<Compiled, RuleError> {
    fn all(
        v: &[Rule],
        param: Option<&str>,
        case_sensitive: bool,
        leaves: &mut Vec<String>,
    ) -> Result<Vec<Compiled>, RuleError> {
        v.iter()
            .map(|r| compile(r, param, case_sensitive, leaves))
            .collect()
    }
    Ok(match rule {
        Rule::Words(_) | Rule::Regex(_) => {
            let src = leaf_regex(rule, case_sensitive).expect("a leaf rule has a regex")?;
            let re = Regex::new(&src).map_err(|e| RuleError::Regex(e.to_string()))?;
            let ascii = Arc::new(OnceLock::new());
            let id = leaves.len();
            leaves.push(src);
            let group = groups_of(param, &re);
            // A one-parameter `{x...}` capture of a Words rule ends before a prepositional
            // phrase (docs/reference/spec-files.md, labeling rules).
            let cut = match (rule, &group) {
                (Rule::Words(w), Some(g)) => {
                    !g.contains(',') && WordsPattern::parse(w).is_ok_and(|p| p.many.contains(g))
                }
                _ => false,
            };
            Compiled::Leaf {
                re,
                ascii,
                id,
                group,
                cut,
            }
        }
        Rule::AnyOf(v) => Compiled::AnyOf(all(v, param, case_sensitive, leaves)?),
        Rule::AllOf(v) => Compiled::AllOf(all(v, param, case_sensitive, leaves)?),
        Rule::Not(r) => Compiled::Not(Box::new(compile(r, param, case_sensitive, leaves)?)),
        Rule::Input(r) => Compiled::Text(
            TextSel::Input,
            Box::new(compile(r, param, case_sensitive, leaves)?),
        ),
        Rule::Output(r) => Compiled::Text(
            TextSel::Output,
            Box::new(compile(r, param, case_sensitive, leaves)?),
        ),
        Rule::Role(r) => Compiled::Role(r.clone()),
        Rule::Tool(t) => Compiled::Tool {
            globs: t.alternatives().map(str::to_string).collect(),
            capture: t.capture.is_some() && t.capture.as_deref() == param,
        },
        Rule::Result {
            path,
            pattern,
            capture,
        } => {
            let path = parse_arg_path(path).map_err(RuleError::Path)?;
            let flags = if case_sensitive { "" } else { "(?i)" };
            let re = pattern
                .as_ref()
                .map(|p| Regex::new(&format!("{flags}{p}")))
                .transpose()
                .map_err(|e| RuleError::Regex(e.to_string()))?;
            Compiled::Result {
                path,
                re,
                capture: capture.is_some() && capture.as_deref() == param,
            }
        }
        Rule::Arg {
            path,
            pattern,
            capture,
        } => {
            let path = parse_arg_path(path).map_err(RuleError::Path)?;
            let flags = if case_sensitive { "" } else { "(?i)" };
            let re = pattern
                .as_ref()
                .map(|p| Regex::new(&format!("{flags}{p}")))
                .transpose()
                .map_err(|e| RuleError::Regex(e.to_string()))?;
            Compiled::Arg {
                path,
                re,
                capture: capture.is_some() && capture.as_deref() == param,
            }
        }
        Rule::Field(name, r) => {
            let flags = if case_sensitive { "" } else { "(?i)" };
            let re =
                Regex::new(&format!("{flags}{r}")).map_err(|e| RuleError::Regex(e.to_string()))?;
            let group = groups_of(param, &re);
            Compiled::Field {
                name: name.clone(),
                re,
                group,
            }
        }
    })
}

/// The capture group(s) of a leaf's regex that give the proposition's value: its parameter,
/// or for several parameters (`pkg, area`) all of them, written `pkg, area`; `None` when the
/// regex does not capture (every one of) them.
fn groups_of(param: Option<&str>, re: &Regex) -> Option<String> {
    let params: Vec<&str> = param?.split(',').map(str::trim).collect();
    params
        .iter()
        .all(|p| re.capture_names().flatten().any(|n| n == *p))
        .then(|| params.join(", "))
}

/// The value one match gives: the group's text, or for several parameters (`group` is
/// `pkg, area`) their texts joined by `, ` (`package1, a1`), if every one took part.
fn capture_value(caps: &regex::Captures<'_>, group: &str) -> Option<(usize, Vec<String>)> {
    let mut start = usize::MAX;
    let mut parts = Vec::new();
    for g in group.split(", ") {
        let m = caps.name(g)?;
        start = start.min(m.start());
        parts.push(m.as_str().to_string());
    }
    Some((start, parts))
}

/// The label value of the parts one match captured ([`text_value`] each, joined by `, `);
/// `None` when a part is empty.
fn text_tuple(parts: &[String], case_sensitive: bool) -> Option<String> {
    let vals: Option<Vec<String>> = parts
        .iter()
        .map(|p| text_value(p, case_sensitive))
        .collect();
    Some(vals?.join(", "))
}

/// Matches `re` on `text`: `None` when it does not; else the values of `group` (if any), with
/// their byte positions, as captured (one part per parameter).
fn search(re: &Regex, group: Option<&str>, text: &str) -> Option<Vec<(usize, Vec<String>)>> {
    let Some(group) = group else {
        return re.is_match(text).then(Vec::new);
    };
    let mut matched = false;
    let mut values = Vec::new();
    for caps in re.captures_iter(text) {
        matched = true;
        values.extend(capture_value(&caps, group));
    }
    matched.then_some(values)
}

/// The values at `path` in `v` (every one, for `[*]`).
fn select<'v>(v: &'v serde_json::Value, path: &[PathStep], out: &mut Vec<&'v serde_json::Value>) {
    let Some((first, rest)) = path.split_first() else {
        out.push(v);
        return;
    };
    match (first, v) {
        (PathStep::Key(k), serde_json::Value::Object(o)) => {
            if let Some(x) = o.get(k) {
                select(x, rest, out)
            }
        }
        (PathStep::Index(i), serde_json::Value::Array(a)) => {
            if let Some(x) = a.get(*i) {
                select(x, rest, out)
            }
        }
        (PathStep::Any, serde_json::Value::Array(a)) => a.iter().for_each(|x| select(x, rest, out)),
        (PathStep::Any, serde_json::Value::Object(o)) => {
            o.values().for_each(|x| select(x, rest, out))
        }
        _ => {}
    }
}

/// `None` when no value at `path` in `v` (whose text matches `re`, if given) exists; else
/// their values as labels write them ([`exact_value`]) when `capture`, none otherwise.
fn select_values(
    v: &serde_json::Value,
    path: &[PathStep],
    re: Option<&Regex>,
    capture: bool,
) -> Option<Vec<(usize, String)>> {
    let mut found = Vec::new();
    select(v, path, &mut found);
    let mut matched = false;
    let mut values = Vec::new();
    for v in found {
        let text = match v {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Null => continue,
            other => other.to_string(),
        };
        if re.is_some_and(|re| !re.is_match(&text)) {
            continue;
        }
        matched = true;
        if capture {
            values.push((ARG_POS, exact_value(&text)));
        }
    }
    matched.then_some(values)
}

/// Values of tool-call arguments sort after any text position.
const ARG_POS: usize = usize::MAX / 2;

/// `None` when the rule does not hold; else the captured values with their byte positions.
fn eval(rule: &Compiled, cx: Cx<'_>) -> Option<Vec<(usize, String)>> {
    match rule {
        Compiled::Role(r) => {
            let ev = cx.event?;
            let turn = ev.fields.get("turn_roles").and_then(|v| v.as_array());
            let any = ev.role.iter().map(String::as_str).chain(
                turn.into_iter()
                    .flatten()
                    .filter_map(serde_json::Value::as_str),
            );
            let mut any = any;
            any.any(|x| x.eq_ignore_ascii_case(r)).then(Vec::new)
        }
        Compiled::Tool { globs, capture } => {
            let name = &cx.call?.name;
            globs.iter().any(|g| glob_match(g, name)).then(|| {
                if *capture {
                    vec![(ARG_POS, exact_value(name))]
                } else {
                    Vec::new()
                }
            })
        }
        Compiled::Result { path, re, capture } => {
            let ev = cx.event?;
            if ev.tool_call_id.is_none() && ev.role.as_deref() != Some("tool") {
                return None;
            }
            let content: serde_json::Value = serde_json::from_str(ev.text()).ok()?;
            select_values(&content, path, re.as_ref(), *capture)
        }
        Compiled::Arg { path, re, capture } => {
            select_values(&cx.call?.arguments, path, re.as_ref(), *capture)
        }
        Compiled::Field { name, re, group } => {
            let v = cx.event?.field(name)?;
            search(re, group.as_deref(), &v).map(|vals| {
                vals.into_iter()
                    .filter_map(|(_, parts)| {
                        Some((ARG_POS, text_tuple(&parts, cx.case_sensitive)?))
                    })
                    .collect::<Vec<_>>()
            })
        }
        Compiled::Text(sel, r) => eval(r, Cx { sel: *sel, ..cx }),
        Compiled::Leaf {
            re,
            ascii,
            id,
            group,
            cut,
        } => {
            if !cx.may_match(*id) {
                // A literal this regex needs is not in the text: it does not match.
                return None;
            }
            let text = cx.text();
            let re = match cx.scans {
                Some(_) if text.is_ascii() => ascii
                    .get_or_init(|| {
                        ascii_word_variant(re.as_str()).and_then(|v| Regex::new(&v).ok())
                    })
                    .as_ref()
                    .unwrap_or(re),
                _ => re,
            };
            let Some(group) = group else {
                return re.is_match(text).then(Vec::new);
            };
            let mut values = search(re, Some(group), text)?;
            if *cut {
                for (_, v) in &mut values {
                    for part in v.iter_mut() {
                        *part = cut_at_preposition(part).to_string();
                    }
                }
            }
            Some(
                values
                    .into_iter()
                    .filter_map(|(pos, parts)| Some((pos, text_tuple(&parts, cx.case_sensitive)?)))
                    .collect(),
            )
        }
        Compiled::AnyOf(v) => {
            let mut matched = false;
            let mut values = Vec::new();
            for r in v {
                if let Some(vals) = eval(r, cx) {
                    matched = true;
                    values.extend(vals);
                }
            }
            matched.then_some(values)
        }
        Compiled::AllOf(v) => {
            let mut values: Option<Vec<(usize, String)>> = None;
            for r in v {
                let vals = eval(r, cx)?;
                if values.is_none() && !vals.is_empty() {
                    values = Some(vals);
                }
            }
            Some(values.unwrap_or_default())
        }
        Compiled::Not(r) => match eval(r, cx) {
            Some(_) => None,
            None => Some(Vec::new()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path of `normalize` changes nothing: on strings over an alphabet of letters
    /// of both cases, articles, separators, whitespace of every kind and non-ASCII letters.
    #[test]
    fn normalize_fast_path_is_exact() {
        fn prop(parts: Vec<u8>, case_sensitive: bool, drop_article: bool) -> bool {
            const ALPHABET: [&str; 16] = [
                "a", "the", "An", "x", "Box", " ", "  ", "\t", "\u{b}", ",", "(", ")", "É", "ß",
                "\u{a0}", "k",
            ];
            let v: String = parts
                .iter()
                .map(|&k| ALPHABET[usize::from(k) % ALPHABET.len()])
                .collect();
            normalize(&v, case_sensitive, drop_article)
                == normalize_slow(&v, case_sensitive, drop_article)
        }
        quickcheck::QuickCheck::new()
            .tests(5000)
            .quickcheck(prop as fn(Vec<u8>, bool, bool) -> bool);
        // Both paths are taken.
        assert!(is_normal("red hot pepper", false, true));
        assert!(!is_normal("the knife", false, true));
    }

    #[test]
    fn words_regex_shape() {
        let p = WordsPattern::parse("take {item...} from {place}").unwrap();
        assert_eq!(p.placeholders, vec!["item", "place"]);
        assert_eq!(p.many, vec!["item"]);
        // Articles skipped before each placeholder; `{x...}` words not separated by clause
        // punctuation.
        let art = r"(?:(?i:a|an|the)\W+)?";
        let sep = r#"[^\w,;:\.!\?\(\)\[\]\{\}"<>\|]+"#;
        assert_eq!(
            p.regex,
            format!(r"\btake\W+{art}(?P<item>\w+(?:{sep}\w+)*?)\W+from\W+{art}(?P<place>\w+)\b")
        );
        assert_eq!(cut_at_preposition("knife from the table"), "knife");
        assert_eq!(cut_at_preposition("on stove"), "on stove");
        assert_eq!(
            cut_at_preposition("red  hot pepper With  x"),
            "red  hot pepper"
        );
        assert_eq!(cut_at_preposition("bag of chips"), "bag of chips");
        assert!(WordsPattern::parse("take {item").is_err());
        assert!(WordsPattern::parse("{a} {a}").is_err());
        let e = RegexRules
            .leaf(&Rule::Regex("a[".into()), false)
            .unwrap_err();
        assert_eq!(e, RuleError::Regex("unclosed character class".into()));
        assert_eq!(e.to_string(), "invalid regex: unclosed character class");
    }
}
