//! The syntax of labeling rules: the [`Rule`] data, `Words` patterns, `Arg` paths, tool-name
//! globs, and the [`RuleCompiler`] that checks a rule's leaves ([`SyntaxRules`] without a regex
//! engine).

use serde::{Deserialize, Serialize};

/// A labeling rule, evaluated on an action's text. See the [module docs](super) for the
/// semantics.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Rule {
    /// A word sequence with optional `{x}` / `{x...}` placeholders.
    Words(String),
    /// A regex (regex crate syntax), searched anywhere in the text.
    Regex(String),
    /// Holds when any of the rules holds; values are the union of theirs.
    AnyOf(Vec<Rule>),
    /// Holds when all of the rules hold; values come from the first rule that captures any.
    AllOf(Vec<Rule>),
    /// Holds when the rule does not; captures nothing.
    Not(Box<Rule>),
    /// Holds when the event's role (`system`, `user`, `assistant`, `tool`; chat and telemetry
    /// traces) is this one, ignoring ASCII case.
    Role(String),
    /// Holds when the event calls a tool whose name matches the glob (`*` any run of
    /// characters, `?` one character, `|` between alternatives; case-sensitive), e.g.
    /// `Tool("update_*")`, `Tool("send_email|send_sms")`; written
    /// `Tool((name: "*", capture: Some("t")))` it also captures the tool's name as parameter `t`.
    Tool(ToolPattern),
    /// Holds when the value at `path` inside a tool call's arguments exists (and, when `pattern`
    /// is given, its text matches that regex); `capture` names the parameter that gets the value.
    /// `path` is a JSONPath subset: `$`, `.name`, `['name']`, `[N]`, `[*]` / `.*` (see
    /// [`parse_arg_path`]). Written `Arg(path: "$.reservation_id", capture: Some("rid"))`.
    Arg {
        /// The path into the arguments object, e.g. `$.passengers[0].name`.
        path: String,
        /// A regex (regex crate syntax) the value's text must match; `None`: any value.
        #[serde(default)]
        pattern: Option<String>,
        /// The parameter the value is captured as.
        #[serde(default)]
        capture: Option<String>,
    },
    /// Holds at a tool result (a `tool` message, an Anthropic `tool_result` block) whose content,
    /// parsed as JSON, has a value at `path` (and, when `pattern` is given, its text matches that
    /// regex); `capture` names the parameter that gets the value. As [`Rule::Arg`] for a call's
    /// arguments: `Result(path: "$.sender", capture: Some("who"))`. A result whose content is not
    /// JSON has no value at any path.
    Result {
        /// The path into the result's JSON, as [`Rule::Arg`]'s.
        path: String,
        /// A regex (regex crate syntax) the value's text must match; `None`: any value.
        #[serde(default)]
        pattern: Option<String>,
        /// The parameter the value is captured as.
        #[serde(default)]
        capture: Option<String>,
    },
    /// `Field(name, regex)`: holds when the event's field `name` (a field of the log record, or
    /// one of `role`, `tool_name`, `tool_call_id`, `session`, `timestamp`, `input`, `output`)
    /// has a text matching the regex; named groups capture, as in `Regex`.
    Field(String, String),
    /// The `Words` / `Regex` rules inside read the event's input (what the agent saw) only.
    Input(Box<Rule>),
    /// The `Words` / `Regex` rules inside read the event's output (what the agent did) only.
    Output(Box<Rule>),
}

/// The tool-name glob of a [`Rule::Tool`] leaf, with the parameter that captures the name.
/// Written in RON as a string (`Tool("update_*")`) or as a struct in its own parentheses
/// (`Tool((name: "*", capture: Some("t")))`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolPattern {
    /// The glob: `*` any run of characters, `?` one character, `|` between alternatives.
    pub name: String,
    /// The parameter the tool's name is captured as.
    pub capture: Option<String>,
}

impl ToolPattern {
    /// The alternatives of the glob (`a|b` is `a` and `b`).
    pub fn alternatives(&self) -> impl Iterator<Item = &str> {
        self.name.split('|')
    }

    /// True when `tool` matches one of the alternatives ([`glob_match`]).
    pub fn matches(&self, tool: &str) -> bool {
        self.alternatives().any(|g| glob_match(g, tool))
    }
}

impl From<&str> for ToolPattern {
    fn from(name: &str) -> ToolPattern {
        ToolPattern {
            name: name.to_string(),
            capture: None,
        }
    }
}

impl Serialize for ToolPattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        match &self.capture {
            None => s.serialize_str(&self.name),
            Some(c) => {
                let mut st = s.serialize_struct("ToolPattern", 2)?;
                st.serialize_field("name", &self.name)?;
                st.serialize_field("capture", &Some(c))?;
                st.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for ToolPattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ToolPattern, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ToolPattern;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "a tool-name glob `\"update_*\"` or `name: \"*\", capture: Some(\"t\")`",
                )
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<ToolPattern, E> {
                Err(E::custom(
                    "a `Tool` leaf that captures is written with two pairs of parentheses: `Tool((name: \"*\", capture: Some(\"t\")))`",
                ))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ToolPattern, E> {
                Ok(v.into())
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<ToolPattern, A::Error> {
                #[derive(Deserialize)]
                #[serde(field_identifier, rename_all = "lowercase")]
                enum Key {
                    Name,
                    Capture,
                }
                let (mut name, mut capture) = (None, None);
                while let Some(k) = m.next_key::<Key>()? {
                    match k {
                        Key::Name => name = Some(m.next_value::<String>()?),
                        Key::Capture => capture = m.next_value::<Option<String>>()?,
                    }
                }
                let name = name.ok_or_else(|| serde::de::Error::missing_field("name"))?;
                Ok(ToolPattern { name, capture })
            }
        }
        // `deserialize_any`: a string or a parenthesized struct, whichever is written.
        d.deserialize_any(V)
    }
}

/// One step of an [`Rule::Arg`] path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathStep {
    /// `.name` or `['name']`: a field of an object.
    Key(String),
    /// `[N]`: an element of an array (0-based).
    Index(usize),
    /// `[*]` or `.*`: every element of an array, or every value of an object.
    Any,
}

/// A malformed [`Rule::Arg`] path: what is wrong, where (`… at byte 3 of "$.a["`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind} at byte {at} of {path:?}")]
pub struct ArgPathError {
    /// The path.
    pub path: String,
    /// The byte offset of the malformed step.
    pub at: usize,
    /// What is wrong there.
    pub kind: ArgPathErrorKind,
}

/// What is wrong in a malformed [`Rule::Arg`] path.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ArgPathErrorKind {
    /// The path does not start with `$`.
    #[error("a path starts with `$`")]
    NoDollar,
    /// A `.` without a field name (or `*`) after it.
    #[error("expected a field name after `.`")]
    NoFieldName,
    /// A `[` without its `]`.
    #[error("unclosed `[`")]
    Unclosed,
    /// A bracket that is not `[N]`, `[*]` or `['name']`; its contents.
    #[error("expected `[N]`, `[*]` or `['name']`, found `[{0}]`")]
    BadBracket(String),
    /// A character that starts no step.
    #[error("unexpected `{0}`: expected `.name`, `[N]`, `[*]` or `['name']`")]
    Unexpected(char),
}

/// Parses the JSONPath subset of [`Rule::Arg`]: `$` followed by steps `.name` (an identifier:
/// letters, digits, `_`, `-`), `['name']` / `["name"]`, `[N]`, `[*]` or `.*`.
///
/// # Errors
/// [`ArgPathError`]: the first malformed step, with its byte offset.
pub fn parse_arg_path(path: &str) -> Result<Vec<PathStep>, ArgPathError> {
    let err = |at: usize, kind: ArgPathErrorKind| ArgPathError {
        path: path.to_string(),
        at,
        kind,
    };
    let b = path.as_bytes();
    if b.first() != Some(&b'$') {
        return Err(err(0, ArgPathErrorKind::NoDollar));
    }
    let mut i = 1;
    let mut out = Vec::new();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
    while i < b.len() {
        match b[i] {
            b'.' => {
                i += 1;
                if b.get(i) == Some(&b'*') {
                    out.push(PathStep::Any);
                    i += 1;
                    continue;
                }
                let start = i;
                while i < b.len() && ident(b[i]) {
                    i += 1;
                }
                if start == i {
                    return Err(err(start, ArgPathErrorKind::NoFieldName));
                }
                out.push(PathStep::Key(path[start..i].to_string()));
            }
            b'[' => {
                let close = path[i..]
                    .find(']')
                    .map(|k| i + k)
                    .ok_or_else(|| err(i, ArgPathErrorKind::Unclosed))?;
                let inner = path[i + 1..close].trim();
                let step = if inner == "*" {
                    PathStep::Any
                } else if let Ok(n) = inner.parse::<usize>() {
                    PathStep::Index(n)
                } else if inner.len() >= 2
                    && (inner.starts_with('\'') && inner.ends_with('\'')
                        || inner.starts_with('"') && inner.ends_with('"'))
                {
                    PathStep::Key(inner[1..inner.len() - 1].to_string())
                } else {
                    return Err(err(i, ArgPathErrorKind::BadBracket(inner.to_string())));
                };
                out.push(step);
                i = close + 1;
            }
            _ => {
                return Err(err(
                    i,
                    ArgPathErrorKind::Unexpected(path[i..].chars().next().unwrap_or(' ')),
                ))
            }
        }
    }
    Ok(out)
}

/// Matches `text` against a glob: `*` any run of characters, `?` one character, anything else
/// itself. O(|glob| * |text|).
pub fn glob_match(glob: &str, text: &str) -> bool {
    trac_core::names::glob_match(glob, text)
}

impl Rule {
    /// The leaves of the rule (every variant but `AnyOf`, `AllOf`, `Not`, `Input`, `Output`),
    /// in pre-order (the order they are written).
    pub fn leaves(&self) -> Vec<&Rule> {
        let mut out = Vec::new();
        fn rec<'a>(r: &'a Rule, out: &mut Vec<&'a Rule>) {
            match r {
                Rule::AnyOf(v) | Rule::AllOf(v) => v.iter().for_each(|c| rec(c, out)),
                Rule::Not(c) | Rule::Input(c) | Rule::Output(c) => rec(c, out),
                _ => out.push(r),
            }
        }
        rec(self, &mut out);
        out
    }

    /// How many string literals the leaf is written with in RON (`Field` two, `Arg` its path
    /// plus its `pattern` and `capture` when given, others one); 0 for a non-leaf.
    pub fn literals(&self) -> usize {
        match self {
            Rule::Words(_) | Rule::Regex(_) | Rule::Role(_) => 1,
            Rule::Tool(t) => 1 + usize::from(t.capture.is_some()),
            Rule::Field(..) => 2,
            Rule::Arg {
                pattern, capture, ..
            }
            | Rule::Result {
                pattern, capture, ..
            } => 1 + usize::from(pattern.is_some()) + usize::from(capture.is_some()),
            _ => 0,
        }
    }

    /// True when the rule has a `Tool` or `Arg` leaf (it is then evaluated once per tool call
    /// of an event).
    pub fn reads_tool_calls(&self) -> bool {
        self.leaves()
            .iter()
            .any(|l| matches!(l, Rule::Tool(_) | Rule::Arg { .. }))
    }

    /// True when the rule has a `Result` leaf (it reads tool results' JSON).
    pub fn reads_tool_results(&self) -> bool {
        self.leaves()
            .iter()
            .any(|l| matches!(l, Rule::Result { .. }))
    }
}

/// One token of a `Words` pattern (the syntax; `trac_runtime::label::labeler::WordsPattern` gives it
/// its meaning as a regex).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WordsToken {
    /// A word: a maximal run of letters, digits and `_`.
    Word(String),
    /// `{x}`: a placeholder capturing exactly one word.
    One(String),
    /// `{x...}`: a placeholder capturing one or more words.
    Many(String),
}

/// A malformed `Words` pattern (byte offsets into the pattern).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WordsError {
    /// A `{` without its `}`.
    #[error("unclosed `{{` at byte {at} in Words pattern {pattern:?}")]
    Unclosed {
        /// Byte offset of the `{`.
        at: usize,
        /// The pattern.
        pattern: String,
    },
    /// A `}` without a `{`.
    #[error("stray `}}` at byte {at} in Words pattern {pattern:?}")]
    Stray {
        /// Byte offset of the `}`.
        at: usize,
        /// The pattern.
        pattern: String,
    },
    /// A placeholder that is not `{name}` or `{name...}`.
    #[error("invalid placeholder `{{{inner}}}` in Words pattern {pattern:?}: expected `{{name}}` or `{{name...}}`")]
    Placeholder {
        /// The text between the braces.
        inner: String,
        /// The pattern.
        pattern: String,
    },
    /// A placeholder used twice.
    #[error("placeholder `{{{name}}}` appears twice in Words pattern {pattern:?}")]
    Twice {
        /// The placeholder's name.
        name: String,
        /// The pattern.
        pattern: String,
    },
    /// A pattern without any word or placeholder.
    #[error("Words pattern {pattern:?} has no words")]
    Empty {
        /// The pattern.
        pattern: String,
    },
}

/// A labeling rule's leaf that does not compile (see [`RuleCompiler`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// A malformed `Words` pattern.
    #[error(transparent)]
    Words(#[from] WordsError),
    /// A regex the regex engine rejects, with the engine's one-line message.
    #[error("invalid regex: {0}")]
    Regex(String),
    /// A malformed `Arg` path.
    #[error("invalid argument path: {0}")]
    Path(ArgPathError),
}

/// The tokens of a `Words` pattern such as `"take {item...} from {place}"`.
///
/// # Errors
/// A [`WordsError`]: an unclosed `{` or a stray `}` (with its byte offset), a placeholder name
/// that is not an identifier, a placeholder used twice, a pattern without any word or
/// placeholder.
pub fn words_tokens(pattern: &str) -> Result<Vec<WordsToken>, WordsError> {
    let mut toks = Vec::new();
    let mut chars = pattern.char_indices().peekable();
    let mut word = String::new();
    while let Some((i, c)) = chars.next() {
        if is_word_char(c) {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            toks.push(WordsToken::Word(std::mem::take(&mut word)));
        }
        if c == '{' {
            let mut inner = String::new();
            let mut closed = false;
            for (_, d) in chars.by_ref() {
                if d == '}' {
                    closed = true;
                    break;
                }
                inner.push(d);
            }
            if !closed {
                return Err(WordsError::Unclosed {
                    at: i,
                    pattern: pattern.to_string(),
                });
            }
            let inner = inner.trim();
            let (name, many) = match inner.strip_suffix("...") {
                Some(n) => (n.trim(), true),
                None => (inner, false),
            };
            if !is_identifier(name) {
                return Err(WordsError::Placeholder {
                    inner: inner.to_string(),
                    pattern: pattern.to_string(),
                });
            }
            toks.push(if many {
                WordsToken::Many(name.to_string())
            } else {
                WordsToken::One(name.to_string())
            });
        } else if c == '}' {
            return Err(WordsError::Stray {
                at: i,
                pattern: pattern.to_string(),
            });
        }
    }
    if !word.is_empty() {
        toks.push(WordsToken::Word(word));
    }
    if toks.is_empty() {
        return Err(WordsError::Empty {
            pattern: pattern.to_string(),
        });
    }
    let mut placeholders: Vec<&str> = Vec::new();
    for t in &toks {
        if let WordsToken::One(name) | WordsToken::Many(name) = t {
            if placeholders.contains(&name.as_str()) {
                return Err(WordsError::Twice {
                    name: name.to_string(),
                    pattern: pattern.to_string(),
                });
            }
            placeholders.push(name);
        }
    }
    Ok(toks)
}

/// The placeholder names of a `Words` pattern, in order (see [`words_tokens`]).
///
/// # Errors
/// As [`words_tokens`].
pub fn words_placeholders(pattern: &str) -> Result<Vec<String>, WordsError> {
    Ok(words_tokens(pattern)?
        .into_iter()
        .filter_map(|t| match t {
            WordsToken::One(n) | WordsToken::Many(n) => Some(n),
            WordsToken::Word(_) => None,
        })
        .collect())
}

/// How [`Spec::check_with`](super::Spec::check_with) checks the `Words` and `Regex` leaves of labeling rules.
/// `trac_runtime::label::labeler::RegexRules` compiles them as the labeler will;
/// [`SyntaxRules`] (what [`Spec::check`](super::Spec::check) uses) needs no regex engine.
pub trait RuleCompiler {
    /// Checks one `Words` or `Regex` leaf (matching case-sensitively iff `case_sensitive`) and
    /// returns the names of the parameters it captures.
    ///
    /// # Errors
    /// What is wrong with the leaf (reported after the proposition's name).
    fn leaf(&self, leaf: &Rule, case_sensitive: bool) -> Result<Vec<String>, RuleError>;
}

/// The named groups `(?P<x>` / `(?<x>` written in a regex's text.
pub fn regex_group_names(r: &str) -> Vec<String> {
    ["(?P<", "(?<"]
        .iter()
        .flat_map(|open| r.match_indices(open).map(|(i, _)| &r[i + open.len()..]))
        .filter_map(|rest| rest.split_once('>').map(|(name, _)| name.to_string()))
        .collect()
}

/// The checks [`Spec::check`](super::Spec::check) makes without a regex engine: `Words` patterns fully
/// ([`words_tokens`]); a `Regex` is not compiled, its named groups `(?P<x>` / `(?<x>` are read
/// from the text. Invalid regexes are found by `trac_runtime::label::labeler::check_spec`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SyntaxRules;

impl RuleCompiler for SyntaxRules {
    fn leaf(&self, leaf: &Rule, _case_sensitive: bool) -> Result<Vec<String>, RuleError> {
        match leaf {
            Rule::Words(w) => Ok(words_placeholders(w)?),
            Rule::Regex(r) | Rule::Field(_, r) => Ok(regex_group_names(r)),
            Rule::Arg { path, capture, .. } | Rule::Result { path, capture, .. } => {
                parse_arg_path(path).map_err(RuleError::Path)?;
                Ok(capture.iter().cloned().collect())
            }
            Rule::Tool(t) => Ok(t.capture.iter().cloned().collect()),
            _ => Ok(Vec::new()),
        }
    }
}

pub(super) fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

pub(super) fn is_identifier(s: &str) -> bool {
    let mut cs = s.chars();
    matches!(cs.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && cs.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_tokens_and_errors() {
        let t = words_tokens("take {item...} from {place}").unwrap();
        assert_eq!(
            t,
            [
                WordsToken::Word("take".into()),
                WordsToken::Many("item".into()),
                WordsToken::Word("from".into()),
                WordsToken::One("place".into()),
            ]
        );
        assert!(words_tokens("take {item").is_err());
        assert!(words_tokens("take }").is_err());
        assert!(words_tokens("{a} {a}").is_err());
        assert!(words_tokens(" -- ").is_err());
        let groups = SyntaxRules
            .leaf(&Rule::Regex(r"(?P<a>x)(?<b>y)".into()), false)
            .unwrap();
        assert_eq!(groups, ["a", "b"]);
    }
}
