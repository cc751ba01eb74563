//! Labeling rules: Words token semantics, captures, case, Regex, AnyOf / AllOf / Not, trace labels.

use trac_runtime::label::labeler::{Labeler, RuleLabeler, TraceLabels};
use trac_runtime::trace::Event;
use trac_spec::spec::{PropositionDecl, Rule, Spec};

fn prop(name: &str, param: Option<&str>, rule: Rule) -> PropositionDecl {
    PropositionDecl {
        name: name.into(),
        param: param.map(Into::into),
        description: String::new(),
        rule: Some(rule),
        ..Default::default()
    }
}

fn spec(props: Vec<PropositionDecl>) -> Spec {
    Spec {
        name: "t".into(),
        propositions: props,
        ..Spec::default()
    }
}

fn words(s: &str) -> Rule {
    Rule::Words(s.into())
}

fn re(s: &str) -> Rule {
    Rule::Regex(s.into())
}

fn event(text: &str) -> Event {
    Event {
        step: 1,
        output: Some(text.into()),
        raw: text.into(),
        line: 1,
        ..Event::default()
    }
}

fn labels(s: &Spec, text: &str) -> Vec<String> {
    RuleLabeler::new(s).unwrap().label(&event(text), &[])
}

#[test]
fn words_match_whole_tokens_only() {
    let s = spec(vec![
        prop("load1", None, words("LOAD package1")),
        prop("load", Some("pkg"), words("LOAD {pkg}")),
    ]);
    assert_eq!(labels(&s, "LOAD package10 into a1"), ["load(package10)"]);
    assert_eq!(
        labels(&s, "LOAD package1 into a1"),
        ["load1", "load(package1)"]
    );
    assert_eq!(labels(&s, "UNLOAD package1 from a1"), Vec::<String>::new());
    assert_eq!(labels(&s, "xLOAD package1"), Vec::<String>::new());
    // Any non-word characters separate tokens, in the text and in the pattern.
    let s = spec(vec![
        prop("to_l1", None, words("to l1")),
        prop("dash", None, words("to-l1")),
    ]);
    assert_eq!(labels(&s, "DRIVE truck1 from l3 to-l1."), ["to_l1", "dash"]);
    assert_eq!(
        labels(&s, "DRIVE truck1 from l3 to-l10"),
        Vec::<String>::new()
    );
    assert_eq!(
        labels(&s, "to_l1"),
        Vec::<String>::new(),
        "`_` is a word character"
    );
}

#[test]
fn case_insensitive_by_default_and_values_lowercased() {
    let s = spec(vec![
        prop("measure", None, words("temperature of substance B")),
        prop("use", Some("what"), words("use thermometer on {what...}")),
    ]);
    assert_eq!(
        labels(&s, "Use THERMOMETER on Unknown   Substance B"),
        ["use(unknown substance b)"]
    );
    assert_eq!(
        labels(&s, "measure the temperature of substance b"),
        ["measure"]
    );
    let mut cs = s.clone();
    cs.case_sensitive = true;
    assert_eq!(
        labels(&cs, "measure the temperature of substance b"),
        Vec::<String>::new()
    );
    assert_eq!(
        labels(&cs, "use thermometer on Unknown   Substance B"),
        ["use(Unknown Substance B)"]
    );
    assert_eq!(labels(&cs, "Use thermometer on x"), Vec::<String>::new());
}

#[test]
fn multi_word_captures() {
    let s = spec(vec![prop("take", Some("item"), words("take {item...}"))]);
    assert_eq!(labels(&s, "take red hot pepper"), ["take(red hot pepper)"]);
    assert_eq!(
        labels(&s, "Step: 5 take  Red Hot Pepper."),
        ["take(red hot pepper)"]
    );
    assert_eq!(
        labels(&s, "take"),
        Vec::<String>::new(),
        "{{x...}} needs a word"
    );
    // Lazily up to the next pattern word.
    let s = spec(vec![prop(
        "take",
        Some("item"),
        words("take {item...} from {place}"),
    )]);
    assert_eq!(
        labels(&s, "take red hot pepper from counter"),
        ["take(red hot pepper)"]
    );
    assert_eq!(labels(&s, "take red hot pepper"), Vec::<String>::new());
    // `{x}` is exactly one word.
    let s = spec(vec![prop("go", Some("dir"), words("go {dir}"))]);
    assert_eq!(labels(&s, "go west"), ["go(west)"]);
    assert_eq!(labels(&s, "go door to the hallway"), ["go(door)"]);
}

#[test]
fn all_matches_deduplicated_in_order_of_appearance() {
    let s = spec(vec![prop(
        "pkg",
        Some("p"),
        Rule::AnyOf(vec![words("DELIVER {p}"), words("UNLOAD {p}")]),
    )]);
    assert_eq!(
        labels(
            &s,
            "UNLOAD package1 from a1 (DELIVER package1 at l1), unload package7, deliver Package3"
        ),
        ["pkg(package1)", "pkg(package7)", "pkg(package3)"]
    );
}

#[test]
fn real_truck_formats() {
    let s = spec(vec![
        prop(
            "load",
            Some("pkg"),
            Rule::AnyOf(vec![
                words("LOAD {pkg} into"),
                re(r"LOAD\((?:\w+,\s*)?(?P<pkg>package\d+)"),
                re(r"\bLoad (?P<pkg>package\d+) into area"),
            ]),
        ),
        prop("in_a1", None, re(r"\b(?:into|in|area)\s+(?:area\s+)?a1\b")),
        prop("drive", None, words("DRIVE")),
    ]);
    assert_eq!(
        labels(&s, "LOAD package1 into a1 of truck1 at l1"),
        ["load(package1)", "in_a1"]
    );
    assert_eq!(
        labels(&s, "**LOAD**: Load package1 into area a1 of truck1 at l1."),
        ["load(package1)", "in_a1"]
    );
    assert_eq!(
        labels(&s, "LOAD(truck1, package16, a3, l1)"),
        ["load(package16)"]
    );
    assert_eq!(
        labels(&s, "LOAD package6 into a2 of truck1 at l1"),
        ["load(package6)"]
    );
    assert_eq!(labels(&s, "DRIVE(truck1, l3, to-l1) [Time: 1]"), ["drive"]);
    assert_eq!(
        labels(&s, "UNLOAD package1 from a1 of truck1 at l2"),
        Vec::<String>::new()
    );
}

#[test]
fn regex_named_group_and_case() {
    let s = spec(vec![prop(
        "go",
        Some("room"),
        re(r"go (?:to )?(?:door to )?(?:the )?(?P<room>[a-z ]+)$"),
    )]);
    assert_eq!(
        labels(&s, "Go door to the Living Room"),
        ["go(living room)"]
    );
    let mut cs = s.clone();
    cs.case_sensitive = true;
    assert_eq!(
        labels(&cs, "Go door to the living room"),
        Vec::<String>::new()
    );
}

#[test]
fn all_of_and_not() {
    let s = spec(vec![
        prop(
            "go_out",
            None,
            Rule::AllOf(vec![words("go"), Rule::Not(Box::new(words("kitchen")))]),
        ),
        prop(
            "open_to",
            Some("room"),
            Rule::AllOf(vec![words("open door"), words("to the {room...}")]),
        ),
        prop("not_look", None, Rule::Not(Box::new(words("look around")))),
    ]);
    assert_eq!(labels(&s, "go west"), ["go_out", "not_look"]);
    assert_eq!(labels(&s, "go to kitchen"), ["not_look"]);
    assert_eq!(
        labels(&s, "open door to the living room"),
        ["open_to(living room)", "not_look"]
    );
    assert_eq!(labels(&s, "open window to the living room"), ["not_look"]);
    assert_eq!(labels(&s, "look around"), Vec::<String>::new());
}

#[test]
fn explicit_trace_labels_are_kept() {
    let s = spec(vec![
        prop("look", None, words("look around")),
        PropositionDecl {
            name: "hungry".into(),
            ..PropositionDecl::default()
        },
    ]);
    let mut l = RuleLabeler::new(&s).unwrap();
    let mut ev = event("look around");
    ev.labels = Some(vec!["hungry".into(), "look".into()]);
    assert_eq!(l.label(&ev, &[]), ["look", "hungry"]);
    ev.output = Some("wait".into());
    assert_eq!(l.label(&ev, &[]), ["hungry", "look"]);
    assert_eq!(TraceLabels.label(&ev, &[]), ["hungry", "look"]);
    assert_eq!(TraceLabels.label(&event("x"), &[]), Vec::<String>::new());
}

#[test]
fn input_is_used_when_there_is_no_output() {
    let s = spec(vec![prop("look", None, words("look around"))]);
    let ev = Event {
        input: Some("Look around.".into()),
        ..Event::default()
    };
    assert_eq!(RuleLabeler::new(&s).unwrap().label(&ev, &[]), ["look"]);
}

#[test]
fn bad_rules_are_errors() {
    let s = spec(vec![prop("bad", None, re("take (knife"))]);
    let e = RuleLabeler::new(&s).unwrap_err();
    assert_eq!(e.proposition, "bad");
    assert!(
        e.to_string()
            .starts_with("proposition `bad`: invalid regex: "),
        "{e}"
    );
    let s = spec(vec![prop("bad", Some("x"), words("take {x"))]);
    assert_eq!(
        RuleLabeler::new(&s).unwrap_err().to_string(),
        "proposition `bad`: unclosed `{` at byte 5 in Words pattern \"take {x\""
    );
}

/// The spec example of `docs/reference/spec-files.md` on realistic lines: a `{x...}` capture skips a leading article and
/// ends before a prepositional phrase or clause punctuation; `{x}` skips the article too.
#[test]
fn captures_skip_articles_and_end_before_prepositional_phrases() {
    let s = spec(vec![
        prop("take", Some("item"), words("take {item...}")),
        prop("examine", Some("item"), words("examine {item...}")),
        prop("go", Some("dir"), words("go {dir}")),
    ]);
    for (line, want) in [
        ("take yellow potato from fridge", "take(yellow potato)"),
        ("take the knife", "take(knife)"),
        ("Take The Knife", "take(knife)"),
        (
            "take a red hot pepper from the counter",
            "take(red hot pepper)",
        ),
        ("take an apple into the kitchen", "take(apple)"),
        ("take knife with gloves", "take(knife)"),
        ("take the chef's knife on the table", "take(chef's knife)"),
        ("take bag of chips", "take(bag of chips)"),
        ("take salt, then look", "take(salt)"),
        ("take another knife", "take(another knife)"),
        ("take theodolite", "take(theodolite)"),
    ] {
        assert_eq!(labels(&s, line), [want], "{line}");
    }
    // `examine onion: examine the onion` (the TextWorld agents' label-then-action lines):
    // both captures end at the colon and give one value.
    assert_eq!(
        labels(&s, "examine yellow onion: examine the yellow onion"),
        ["examine(yellow onion)"]
    );
    // A value's first word is never cut; an article alone is not a value.
    assert_eq!(labels(&s, "take on stove"), ["take(on stove)"]);
    assert_eq!(labels(&s, "go the west"), ["go(west)"]);
    // A lazy capture before a pattern word is cut too.
    let s = spec(vec![prop(
        "put",
        Some("what"),
        words("put {what...} in {where...}"),
    )]);
    assert_eq!(
        labels(&s, "put the apple with a worm in the box"),
        ["put(apple)"]
    );
    // Case-sensitive specs skip articles in any case, and keep the value's case.
    let mut cs = spec(vec![prop("take", Some("item"), words("take {item...}"))]);
    cs.case_sensitive = true;
    assert_eq!(labels(&cs, "take The Knife From fridge"), ["take(Knife)"]);
}

/// Every label the rule labeler produces is well-formed ([`check_label`]), whatever the text
/// (values with commas or parentheses, from `Regex` groups too): a trace written with them
/// (`trac run --log`, `--show-labels`) reads back. Texts: 2,000 sequences of tricky tokens from
/// a fixed-seed generator.
#[test]
fn every_produced_label_is_well_formed() {
    use trac_runtime::label::labeler::check_label;
    let s = spec(vec![
        prop("take", Some("item"), words("take {item...}")),
        prop("put", Some("what"), words("put {what} in {where...}")),
        prop("say", Some("x"), re(r"say (?P<x>.*)")),
        prop("look", None, words("look")),
        prop(
            "loads",
            Some("p, a"),
            re(r"load (?P<p>\S+) into (?P<a>\S+)"),
        ),
    ]);
    let toks = [
        "load", "into", "take", "put", "say", "look", "in", "the", "a", "from", "(", ")", ",",
        "knife", "x(y)", "a,b", ":", "-", "  ", "Knife", "é", "()", ".", "on",
    ];
    let mut labeler = RuleLabeler::new(&s).unwrap();
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    for _ in 0..2000 {
        let mut text = String::new();
        for _ in 0..8 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            text.push_str(toks[(seed % toks.len() as u64) as usize]);
            if seed & 16 != 0 {
                text.push(' ');
            }
        }
        for l in labeler.label(&event(&text), &[]) {
            assert_eq!(check_label(&l), Ok(()), "text {text:?} gave {l:?}");
        }
    }
}
