//! Where an LLM labeler's parameter values come from: the step itself.
//!
//! A value of a parametric proposition (`take(knife)`, `loads(package8, a1)`) must name
//! something in the step being labeled, never the model's free text nor a value it copied from a
//! spec example. Labeling by scoring ([`crate::yes_no`]) therefore scores candidate values that
//! [`step_candidates`] takes from the step (spans of its words, and the string values of its tool
//! calls' arguments), one parameter at a time; labeling by JSON drops a value that appears only
//! in the spec's examples ([`leaked_from_examples`]).

use trac_runtime::label::labeler::{exact_value, label_value};
use trac_runtime::trace::Event;
use trac_spec::spec::PropositionDecl;

/// Words a candidate span neither starts nor ends with (articles, prepositions, conjunctions):
/// `knife from table` is a candidate, `knife from` and `the knife` are not (`knife` is).
const EDGE_STOPWORDS: [&str; 20] = [
    "a", "an", "the", "of", "to", "from", "into", "in", "on", "onto", "with", "and", "or", "at",
    "for", "by", "is", "it", "its", "then",
];

/// The parameter names of a proposition's `param` field: `"item"` → `["item"]`,
/// `"pkg, area"` → `["pkg", "area"]` (split at commas, trimmed, blanks dropped).
pub fn param_names(param: &str) -> Vec<&str> {
    param
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// `p`'s description (its name when blank, a trailing period dropped) with each parameter
/// placeholder filled: `fill[i]` replaces `{name_i}` (the `i`-th of [`param_names`]); a
/// parameter without a value (`None`, or `fill` too short) becomes `some name_i`. The
/// placeholder of the whole `param` as written (`{pkg, area}`) is filled likewise, with the
/// values joined by `, `.
///
/// `"the agent loads {pkg} into area {area}"` with `[Some("package8"), None]` gives
/// `the agent loads package8 into area some area`.
pub fn fill_description(p: &PropositionDecl, fill: &[Option<&str>]) -> String {
    let mut desc = if p.description.trim().is_empty() {
        p.name.clone()
    } else {
        p.description.trim().trim_end_matches('.').to_string()
    };
    let Some(param) = &p.param else {
        return desc;
    };
    let names = param_names(param);
    let shown: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| match fill.get(i).copied().flatten() {
            Some(v) => v.to_string(),
            None => format!("some {n}"),
        })
        .collect();
    if names.len() > 1 {
        desc = desc.replace(&format!("{{{param}}}"), &shown.join(", "));
    }
    for (n, v) in names.iter().zip(&shown) {
        desc = desc.replace(&format!("{{{n}}}"), v);
    }
    desc
}

/// One word of a step's text, its leading and trailing punctuation removed (`a1.` → `a1`,
/// `"knife"` → `knife`; inner characters are kept: `package-8`, `l1's`).
fn clean_word(w: &str) -> &str {
    w.trim_matches(|c: char| !c.is_alphanumeric())
}

/// The candidate values of a parameter at `event`: every span of at most `max_words`
/// consecutive words of the step's text (its input, then its output; split at whitespace,
/// edge punctuation removed) that neither starts nor ends with an article or preposition, then
/// the string (and number) values of its tool calls' arguments; normalized as a rule's
/// captures (spans: [`label_value`] with articles dropped, lowercased unless `case_sensitive`;
/// arguments: [`exact_value`]); each once, in order of first appearance (shorter spans first at
/// each position), at most `max` of them.
///
/// `take knife from table` gives `take`, `take knife`, `take knife from table`, `knife`,
/// `knife from table`, `table`.
pub fn step_candidates(
    event: &Event,
    max_words: usize,
    max: usize,
    case_sensitive: bool,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let push = |v: String, out: &mut Vec<String>| {
        if out.len() < max && !out.contains(&v) {
            out.push(v);
        }
    };
    let texts = [event.input.as_deref(), event.output.as_deref()];
    for text in texts.into_iter().flatten() {
        let words: Vec<&str> = text
            .split_whitespace()
            .map(clean_word)
            .filter(|w| !w.is_empty())
            .collect();
        let edge_ok = |w: &str| !EDGE_STOPWORDS.contains(&w.to_lowercase().as_str());
        for i in 0..words.len() {
            if !edge_ok(words[i]) {
                continue;
            }
            for j in i..words.len().min(i + max_words.max(1)) {
                if !edge_ok(words[j]) {
                    continue;
                }
                if let Some(v) = label_value(&words[i..=j].join(" "), 1, case_sensitive, true) {
                    push(v, &mut out);
                }
            }
        }
    }
    for call in &event.tool_calls {
        if let serde_json::Value::Object(args) = &call.arguments {
            for v in args.values() {
                let s = match v {
                    serde_json::Value::String(s) if !s.trim().is_empty() => s.clone(),
                    serde_json::Value::Number(n) => n.to_string(),
                    _ => continue,
                };
                push(exact_value(&s), &mut out);
            }
        }
    }
    out
}

/// ` words of text `, normalized for [`leaked_from_examples`]: lowercased unless
/// `case_sensitive`, every run of characters other than letters and digits made one space,
/// padded with a space at both ends.
fn words_of(text: &str, case_sensitive: bool) -> String {
    let t = if case_sensitive {
        text.to_string()
    } else {
        text.to_lowercase()
    };
    let words: Vec<&str> = t
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    format!(" {} ", words.join(" "))
}

/// Whether `value` (one parameter's value, as a label writes it) is absent from the step
/// (`event`'s input, output and tool-call arguments) but present in one of `p`'s spec examples
/// (an example's text or values): a value the model copied from an example, not read in the
/// step. Compared word by word, ignoring punctuation (and case unless `case_sensitive`).
pub fn leaked_from_examples(
    p: &PropositionDecl,
    value: &str,
    event: &Event,
    case_sensitive: bool,
) -> bool {
    let v = words_of(value, case_sensitive);
    if v.trim().is_empty() {
        return false;
    }
    let mut step = String::new();
    for t in [event.input.as_deref(), event.output.as_deref()]
        .into_iter()
        .flatten()
    {
        step.push_str(&words_of(t, case_sensitive));
    }
    for c in &event.tool_calls {
        step.push_str(&words_of(&c.arguments.to_string(), case_sensitive));
    }
    if step.contains(&v) {
        return false;
    }
    p.examples.iter().any(|ex| {
        words_of(&ex.text, case_sensitive).contains(&v)
            || ex
                .values
                .iter()
                .any(|x| words_of(x, case_sensitive).contains(&v))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use trac_spec::spec::LabelExample;

    fn ev(text: &str) -> Event {
        Event {
            step: 1,
            output: Some(text.into()),
            ..Event::default()
        }
    }

    #[test]
    fn spans_skip_edge_stopwords_and_normalize() {
        assert_eq!(
            step_candidates(&ev("take knife from table"), 4, 32, false),
            [
                "take",
                "take knife",
                "take knife from table",
                "knife",
                "knife from table",
                "table"
            ]
        );
        assert_eq!(
            step_candidates(&ev("LOAD package8 into a1."), 4, 32, false),
            [
                "load",
                "load package8",
                "load package8 into a1",
                "package8",
                "package8 into a1",
                "a1"
            ]
        );
        // At most `max`, at most `max_words` words.
        assert_eq!(step_candidates(&ev("a b c"), 1, 2, false), ["b", "c"]);
    }

    #[test]
    fn tool_call_arguments_are_candidates_as_written() {
        let mut e = ev("");
        e.tool_calls.push(trac_runtime::trace::ToolCall {
            id: None,
            name: "book".into(),
            arguments: serde_json::json!({"flight": "UA 12", "seats": 2, "ok": true}),
        });
        assert_eq!(step_candidates(&e, 4, 32, false), ["UA 12", "2"]);
    }

    #[test]
    fn descriptions_fill_each_parameter() {
        let p = PropositionDecl {
            name: "loads".into(),
            param: Some("pkg, area".into()),
            description: "the agent loads {pkg} into area {area} of the truck.".into(),
            ..Default::default()
        };
        assert_eq!(
            fill_description(&p, &[]),
            "the agent loads some pkg into area some area of the truck"
        );
        assert_eq!(
            fill_description(&p, &[Some("package8"), Some("a1")]),
            "the agent loads package8 into area a1 of the truck"
        );
        let whole = PropositionDecl {
            description: "loads {pkg, area}".into(),
            ..p
        };
        assert_eq!(
            fill_description(&whole, &[Some("package8"), None]),
            "loads package8, some area"
        );
    }

    #[test]
    fn a_value_only_in_an_example_is_a_leak() {
        let p = PropositionDecl {
            name: "take".into(),
            param: Some("item".into()),
            examples: vec![LabelExample {
                text: "take red bell pepper from fridge".into(),
                holds: true,
                values: vec!["red bell pepper".into()],
            }],
            ..Default::default()
        };
        assert!(leaked_from_examples(
            &p,
            "red bell pepper",
            &ev("take knife"),
            false
        ));
        assert!(!leaked_from_examples(
            &p,
            "red bell pepper",
            &ev("Take the Red Bell Pepper."),
            false
        ));
        // Neither in the step nor in an example: not a leak (the model's own reading).
        assert!(!leaked_from_examples(&p, "spoon", &ev("take knife"), false));
    }
}
