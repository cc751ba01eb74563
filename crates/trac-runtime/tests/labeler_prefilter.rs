//! The Aho–Corasick prefilter of `RuleLabeler` (issue 14) changes no label: on random lines
//! built from a spec's own words, its case variants and noise, the prefiltered labeler gives
//! exactly the labels of the labeler that runs every rule's regex on every line.

use quickcheck::{Arbitrary, Gen, QuickCheck};
use std::path::Path;
use std::sync::OnceLock;
use trac_runtime::label::labeler::RuleLabeler;
use trac_runtime::label::prefilter::Prefilter;
use trac_runtime::trace::Event;
use trac_spec::spec::{PropositionDecl, Rule, Spec};

/// The bundled specs with text rules, and a spec of `Words` rules (case-insensitive and
/// case-sensitive) exercising captures, articles, prepositions and multi-parameter values.
fn specs() -> Vec<Spec> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/specs");
    let mut out: Vec<Spec> = [
        "trucks.ron",
        "trucks-5.ron",
        "scienceworld.ron",
        "textworld.ron",
    ]
    .iter()
    .map(|f| Spec::from_path(&dir.join(f)).expect("bundled spec parses"))
    .collect();
    let prop = |name: &str, param: Option<&str>, rule: Rule| PropositionDecl {
        name: name.into(),
        param: param.map(Into::into),
        rule: Some(rule),
        ..Default::default()
    };
    let words = |s: &str| Rule::Words(s.into());
    let props = vec![
        prop("take", Some("item"), words("take {item...}")),
        prop("put", Some("item, place"), words("put {item} in {place}")),
        prop("cut", Some("item"), words("cut {item...} with knife")),
        prop("look", None, words("look around")),
        prop(
            "open_not_door",
            None,
            Rule::AllOf(vec![words("open"), Rule::Not(Box::new(words("door")))]),
        ),
        prop(
            "either",
            Some("x"),
            Rule::AnyOf(vec![
                words("examine {x...}"),
                Rule::Regex(r"\bsk(?P<x>[a-z]+)\b".into()),
            ]),
        ),
        prop("kelvin", None, Rule::Regex(r"\bkettle\b".into())),
    ];
    for case_sensitive in [false, true] {
        out.push(Spec {
            name: "words".into(),
            propositions: props.clone(),
            case_sensitive,
            ..Spec::default()
        });
    }
    out
}

/// The words of a spec's rules (letters and digits of their sources) and noise.
fn vocabulary(spec: &Spec) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for p in &spec.propositions {
        for leaf in p.rule.iter().flat_map(Rule::leaves) {
            let src = match leaf {
                Rule::Words(s) | Rule::Regex(s) => s.as_str(),
                _ => continue,
            };
            for w in src.split(|c: char| !c.is_alphanumeric()) {
                if w.len() > 1 && !words.iter().any(|x| x == w) {
                    words.push(w.to_string());
                }
            }
        }
    }
    let noise = [
        "the",
        "a",
        "an",
        "from",
        "into",
        "in",
        "with",
        "on",
        "to",
        "of",
        "package1",
        "package12",
        "a1",
        "a3",
        "l2",
        "to-l1",
        "truck1",
        "box",
        "door",
        "b",
        "knife",
        "ta\u{212a}e",
        "\u{212a}ettle",
        "\u{17f}ubstance",
        "skillet",
        "(",
        ")",
        ",",
        ":",
        ";",
        ".",
        "-",
        "'",
        "É",
        "x",
    ];
    words.extend(noise.iter().map(|s| s.to_string()));
    words
}

/// A random line: words of the vocabulary, some upper- or title-cased, some glued to a
/// neighbour or split, joined by random separators.
#[derive(Clone, Debug)]
struct Line(Vec<(u16, u8, u8)>);

impl Arbitrary for Line {
    fn arbitrary(g: &mut Gen) -> Line {
        let n = usize::arbitrary(g) % 12;
        Line(
            (0..n)
                .map(|_| (u16::arbitrary(g), u8::arbitrary(g), u8::arbitrary(g)))
                .collect(),
        )
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Line>> {
        Box::new(self.0.shrink().map(Line))
    }
}

impl Line {
    fn render(&self, vocab: &[String]) -> String {
        let seps = [
            " ", " ", " ", "  ", ", ", ": ", "(", ") ", "-", "", "\t", " the ",
        ];
        let mut s = String::new();
        for (w, case, sep) in &self.0 {
            let word = &vocab[*w as usize % vocab.len()];
            let word = match case % 5 {
                0 => word.to_uppercase(),
                1 => {
                    let mut c = word.chars();
                    c.next()
                        .map(|f| f.to_uppercase().chain(c).collect())
                        .unwrap_or_default()
                }
                // A piece of a word (a literal cut in two must not be found).
                2 if word.len() > 3 && word.is_char_boundary(2) => word[..2].to_string(),
                _ => word.clone(),
            };
            s.push_str(&word);
            s.push_str(seps[*sep as usize % seps.len()]);
        }
        s
    }
}

/// Every spec: the prefiltered labels equal the plain ones, for `label_text` and for events
/// whose input and output differ (rules reading `Input` / `Output`).
#[test]
fn prefilter_gives_the_labels_of_every_regex() {
    static LABELERS: OnceLock<Vec<(RuleLabeler, Vec<String>)>> = OnceLock::new();
    fn prop(k: usize, out: Line, inp: Line) -> bool {
        let labelers = LABELERS.get_or_init(|| {
            specs()
                .iter()
                .map(|s| (RuleLabeler::new(s).expect("spec compiles"), vocabulary(s)))
                .collect()
        });
        let (fast, vocab) = &labelers[k % labelers.len()];
        let plain = fast.clone().without_prefilter();
        let text = out.render(vocab);
        let event = Event {
            step: 1,
            output: Some(text.clone()),
            input: Some(inp.render(vocab)),
            raw: text.clone(),
            line: 1,
            ..Event::default()
        };
        let same = fast.label_text(&text) == plain.label_text(&text)
            && fast.label_event(&event) == plain.label_event(&event);
        if !same {
            eprintln!(
                "spec {} on {text:?}: {:?} vs {:?}",
                k % labelers.len(),
                fast.label_text(&text),
                plain.label_text(&text)
            );
        }
        same
    }
    QuickCheck::new()
        .tests(3000)
        .quickcheck(prop as fn(usize, Line, Line) -> bool);
}

/// The property can fail: a prefilter that skipped a regex wrongly would change labels. Here
/// the lines do hit the rules (the comparison is not vacuous): most bundled rules label some
/// line of the shared-vocabulary lines, and the prefilter skips most regexes on them.
#[test]
fn prefilter_skips_regexes_and_rules_still_fire() {
    let trucks = &specs()[0];
    let labeler = RuleLabeler::new(trucks).unwrap();
    let line = "LOAD package12 into a3 of truck1 at l1";
    assert_eq!(
        labeler.label_text(line),
        vec![
            "load_into(a3)",
            "load_pkg(package12)",
            "loads(package12, a3)"
        ]
    );
    // Of the 11 Trucks rule regexes, those of `drive`, `unload` and `deliver` need their verb.
    let sources: Vec<String> = trucks
        .propositions
        .iter()
        .filter_map(|p| match &p.rule {
            Some(Rule::Regex(r)) => Some(format!("(?i){r}")),
            _ => None,
        })
        .collect();
    let pre = Prefilter::new(sources.iter().map(String::as_str));
    let mut found = Default::default();
    pre.scan(line, &mut found);
    let run = (0..sources.len())
        .filter(|&k| pre.may_match(k, &found))
        .count();
    assert_eq!(run, 3, "only the three `load` regexes run");
}
