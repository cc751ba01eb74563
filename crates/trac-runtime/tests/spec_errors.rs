//! Spec errors: every kind, with its full message and position in the RON file, as
//! `trac_runtime::label::labeler::check_spec` reports them (the spec checks of `trac-spec` and the
//! labelers' regex compile step).

use trac_runtime::label::labeler::check_spec;
use trac_spec::spec::Spec;

/// The error text of loading and checking `src` as `s.ron`.
fn errors(src: &str) -> String {
    match Spec::from_str(src, "s.ron") {
        Err(e) => e.to_string(),
        Ok(spec) => match check_spec(&spec) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("expected errors"),
        },
    }
}

#[test]
fn ron_syntax_and_shape_errors() {
    assert_eq!(
        errors("(name: \"x\", properties: [], extra: 1)"),
        "s.ron:1:34: Unexpected field named `extra` in `Spec`, expected one of `name`, `description`, `case_sensitive`, `propositions`, `properties` instead"
    );
    assert_eq!(
        errors("(name: \"x\")"),
        "s.ron:1:11: Unexpected missing field `properties` in `Spec`"
    );
    assert_eq!(
        errors("(name: \"x\",\n properties: [\n  (id: \"R1\", formula: 3),\n ])"),
        "s.ron:3:23: Expected string"
    );
    assert_eq!(
        errors("(name: \"x\",\n properties: [\n  (id: \"R1\", formula: \"p\" ,\n ])"),
        "s.ron:4:2: Expected identifier"
    );
    assert_eq!(
        errors("(name: \"x\", propositions: [(name: \"a\", rule: Some(Word(\"x\")))], properties: [])"),
        "s.ron:1:55: Unexpected variant named `Word` in enum `Rule`, expected one of `Words`, `Regex`, `AnyOf`, `AllOf`, `Not`, `Role`, `Tool`, `Arg`, `Result`, `Field`, `Input`, `Output` instead"
    );
    assert_eq!(
        errors("(name: \"x\", properties: [(id: \"R1\", formula: \"p\", semantics: LTLf)])"),
        "s.ron:1:66: Unexpected variant named `LTLf` in enum `Semantics`, expected either `Ltl3` or `Ltlf` instead"
    );
}

#[test]
fn proposition_and_rule_errors_are_all_reported() {
    let src = r#"(
  name: "rules",
  propositions: [
    (name: "take", param: Some("item"), rule: Some(Words("take {item...}"))),
    (name: "take", rule: Some(Regex("take (knife"))),
    (name: "look", rule: Words("look {x}")),
    (name: "go", param: Some("dir"), rule: AnyOf([Words("go {dir}"), Regex("walk \\w+")])),
    (name: "put", param: Some("obj"), rule: Some(Not(Words("put {obj}")))),
    (name: "open", param: Some("2x"), rule: Some(Words("open {door}"))),
    (name: "bad(x)", rule: Some(Words("a } b"))),
    (name: "drop", param: Some("obj"), rule: Some(AnyOf([Words("drop {obj}"), Regex("(?P<obj>\\w+) falls")]))),
    (name: "", rule: Some(Words("x {y"))),
  ],
  properties: [],
)"#;
    assert_eq!(
        errors(src),
        r#"s.ron:5:12: duplicate proposition `take` (first declared at 4:12)
s.ron:5:37: proposition `take`: invalid regex: unclosed group
s.ron:6:32: proposition `look`: placeholder `{x}` but the proposition has no `param`
s.ron:7:44: proposition `go`: the rule does not capture parameter `dir`: use `{dir}` or `{dir...}` in Words, `(?P<dir>...)` in Regex (every alternative of AnyOf must capture it)
s.ron:8:45: proposition `put`: the rule does not capture parameter `obj`: use `{obj}` or `{obj...}` in Words, `(?P<obj>...)` in Regex
s.ron:9:27: proposition `open`: parameter `2x` is not an identifier
s.ron:9:56: proposition `open`: placeholder `{door}` is not its parameter `2x`
s.ron:10:12: invalid proposition name `bad(x)`: use `param` for a parameter, not parentheses
s.ron:10:39: proposition `bad(x)`: stray `}` at byte 2 in Words pattern "a } b"
s.ron:12:12: empty proposition name
s.ron:12:33: proposition ``: unclosed `{` at byte 2 in Words pattern "x {y""#
    );
}

#[test]
fn a_regex_error_points_at_the_right_alternative() {
    let src = "(name: \"x\", propositions: [\n  (name: \"a\", rule: AnyOf([\n    Words(\"a\"),\n    Regex(\"a[\"),\n  ])),\n], properties: [])";
    assert_eq!(
        errors(src),
        "s.ron:4:11: proposition `a`: invalid regex: unclosed character class"
    );
}

#[test]
fn property_errors_point_into_the_formula() {
    let src = r#"(
  name: "p",
  propositions: [
    (name: "take", param: Some("item")),
    (name: "look"),
  ],
  properties: [
    (id: "R1", formula: "G(look -> X jump)"),
    (id: "R1", formula: "G look(x)"),
    (id: "R3", formula: "F take"),
    (id: "R4", formula: "G(take(item) -> X look)"),
    (id: "R5", formula: "forall x: G look"),
    (id: "R6", formula: "forall x: G(take(x) -> X !take(item))"),
    (id: "R7", formula: "G(take(knife) -> X look)"),
    (formula: "G(look -> X \"jump high\")", id: "R8"),
  ],
)"#;
    assert_eq!(
        errors(src),
        r#"s.ron:8:38: property `R1`: unknown proposition `jump`; declared: look, take
s.ron:9:10: duplicate property id `R1` (first declared at 8:10)
s.ron:9:28: property `R1`: proposition `look` has no parameter, but is used as `look(x)`
s.ron:10:28: property `R3`: proposition `take` has parameter `item`: write `take(<value>)`, or quantify it: `forall item: ... take(item) ...`
s.ron:11:28: property `R4`: variable `item` in `take(item)` is not quantified: write `forall item: ...`
s.ron:12:33: property `R5`: quantified variable `x` is not used in the formula
s.ron:13:52: property `R6`: variable `item` in `take(item)` is not quantified: write `forall item: ...` (the formula quantifies `x`)
s.ron:15:30: property `R8`: unknown proposition `jump high`; declared: look, take"#
    );
}

#[test]
fn formula_syntax_errors_show_the_file_position_and_a_caret() {
    let src = r###"(
  name: "p",
  properties: [
    (id: "R1", formula: "G(look -> )"),
    (id: "R2",
     formula: "F \"a b\" U"),
    (id: "R3", formula: r#"G("x" -> X ))"#),
  ],
)"###;
    // Columns count characters of the RON file: escapes (`\"`) and raw strings are accounted for;
    // the caret rendering shows the file's line, the caret under the error's column.
    assert_eq!(
        errors(src),
        r##"s.ron:4:36: property `R1`: expected a formula after `->`
      |
    4 |     (id: "R1", formula: "G(look -> )"),
      |                                    ^
s.ron:6:27: property `R2`: expected a formula after `U`
      |
    6 |      formula: "F \"a b\" U"),
      |                           ^
s.ron:7:39: property `R3`: expected a formula after `X`
      |
    7 |     (id: "R3", formula: r#"G("x" -> X ))"#),
      |                                       ^"##
    );
}

#[test]
fn specs_built_in_code_name_the_spec_instead_of_a_position() {
    use trac_spec::spec::PropertyDecl;
    let spec = Spec {
        name: "inline".into(),
        properties: vec![
            PropertyDecl {
                id: "A".into(),
                formula: "forall x: G p".into(),
                ..PropertyDecl::default()
            },
            PropertyDecl {
                id: "B".into(),
                formula: "G(".into(),
                ..PropertyDecl::default()
            },
        ],
        ..Spec::default()
    };
    let e = spec.check().unwrap_err();
    assert_eq!(e.diagnostics.len(), 2);
    assert_eq!(
        e.diagnostics[0].to_string(),
        "spec `inline`: property `A`: quantified variable `x` is not used in the formula"
    );
    assert!(
        e.diagnostics[1]
            .to_string()
            .starts_with("spec `inline`: property `B`: "),
        "{e}"
    );
    assert_eq!(e.diagnostics[1].position, None);
}

#[test]
fn labeler_choice_errors() {
    assert_eq!(
        errors("(name: \"x\",\n propositions: [\n  (name: \"a\", labeler: Both),\n ],\n properties: [])"),
        "s.ron:3:24: proposition `a`: `labeler: Both` needs a `rule` (use `Llm` for a proposition without one)"
    );
    assert_eq!(
        errors("(name: \"x\",\n propositions: [\n  (name: \"a\", labeler: Llm, examples: [(text: \"t\", values: [\"v\"])]),\n ],\n properties: [])"),
        "s.ron:3:40: proposition `a`: example 1 gives `values`, but the proposition has no `param`"
    );
    assert_eq!(
        errors("(name: \"x\", propositions: [(name: \"a\", labeler: Gpt)], properties: [])"),
        "s.ron:1:52: Unexpected variant named `Gpt` in enum `LabelerChoice`, expected one of `Rule`, `Llm`, `Both` instead"
    );
}

#[test]
fn label_examples_say_whether_they_hold_once_and_have_a_text() {
    // Each error is positioned at the example's `(`.
    assert_eq!(
        errors("(name: \"x\",\n propositions: [\n  (name: \"a\", labeler: Llm, examples: [(text: \"t\", holds: true), (text: \"u\")]),\n ],\n properties: [])"),
        "s.ron:3:66: proposition `a`: example 2 says neither `holds` nor `values`: write `holds: true` (the proposition holds at such a step) or `holds: false`"
    );
    assert_eq!(
        errors("(name: \"x\",\n propositions: [\n  (name: \"a\", param: Some(\"x\"), examples: [(text: \"t\", holds: false, values: [\"v\"])]),\n ],\n properties: [])"),
        "s.ron:3:44: proposition `a`: example 1 says `holds: false` but gives `values` (the values it holds for): keep one of them"
    );
    // `values: []` written and no `holds`: not "says neither".
    assert_eq!(
        errors("(name: \"x\",\n propositions: [\n  (name: \"a\", param: Some(\"x\"), examples: [(text: \"t\", values: [])]),\n ],\n properties: [])"),
        "s.ron:3:44: proposition `a`: example 1 gives empty `values` and no `holds`: list the values it holds for, or write `holds: false`"
    );
    assert_eq!(
        errors("(name: \"x\",\n propositions: [\n  (name: \"a\", examples: [(text: \" \", holds: false)]),\n ],\n properties: [])"),
        "s.ron:3:26: proposition `a`: example 1 has an empty `text`"
    );
    // `values` alone say that it holds (for them); `holds: false` alone that it does not.
    let ok = "(name: \"x\", propositions: [(name: \"a\", param: Some(\"x\"), rule: Some(Words(\"a {x}\")), examples: [(text: \"a b\", values: [\"b\"]), (text: \"c\", holds: false)])], properties: [(id: \"P\", formula: \"G !a(x1)\")])";
    check_spec(&Spec::from_str(ok, "s.ron").unwrap()).unwrap();
}

#[test]
fn several_parameters_and_quantifier_errors() {
    let src = r#"(
  name: "m",
  propositions: [
    (name: "loads", param: Some("pkg, area"), rule: Some(Regex("load (?P<pkg>\\w+) (?P<area>\\w+)"))),
    (name: "half", param: Some("pkg, area"), rule: Some(Regex("half (?P<pkg>\\w+)"))),
    (name: "go", param: Some("room"), rule: Some(Words("go {room}"))),
    (name: "upd", param: Some("rid, f"), rule: Some(AllOf([Arg(path: "$.rid", capture: Some("rid")), Field("f", "(?P<f>.+) (?P<rid>.+)")]))),
  ],
  properties: [
    (id: "arity", formula: "G !loads(p1)"),
    (id: "free", formula: "G !loads(pkg, a1)"),
    (id: "forall2", formula: "forall pkg: G !loads(pkg, a1)"),
    (id: "inner", formula: "forall area: G !(exists p: O loads(p, area))"),
    (id: "ok", formula: "G((exists p: O loads(p, *)) -> go(*) | go(a|b))"),
    (id: "tuple", formula: "forall pkg, area: G(loads(pkg, area) -> go(area))"),
    (id: "unused", formula: "forall pkg, room: G !loads(pkg, a1)"),
    (id: "twice", formula: "forall pkg, area, pkg: G !loads(pkg, area)"),
    (id: "reuse", formula: "forall area: G !(exists area: O loads(p1, area))"),
    (id: "arity2", formula: "forall pkg, area: G !loads(pkg, area, a1)"),
    (id: "two", formula: "forall pkg, area: G !(exists q: O loads(pkg, area))"),
  ],
)"#;
    assert_eq!(
        errors(src),
        r#"s.ron:5:52: proposition `half`: the rule does not capture parameter `area`: use `{area}` or `{area...}` in Words, `(?P<area>...)` in Regex
s.ron:7:48: proposition `upd`: its parameters (rid, f) must be captured together by one match of a Words, Regex or Field leaf; an `Arg`, `Result` or `Tool` capture gives one value
s.ron:10:32: property `arity`: proposition `loads` has 2 parameters (pkg, area), but `loads(p1)` gives 1
s.ron:11:31: property `free`: variable `pkg` in `loads(pkg, a1)` is not quantified: write `forall pkg: ...`
s.ron:16:42: property `unused`: quantified variable `room` is not used in the formula
s.ron:17:47: property `twice`: variable `pkg` is quantified twice in this `forall`
       |
    17 |     (id: "twice", formula: "forall pkg, area, pkg: G !loads(pkg, area)"),
       |                                               ^^^
s.ron:18:36: property `reuse`: quantified variable `area` is not used in the formula
s.ron:18:46: property `reuse`: `exists area: ...` reuses `area`, a variable of the `forall`: name the quantifier's variable differently
s.ron:19:51: property `arity2`: proposition `loads` has 2 parameters (pkg, area), but `loads(pkg, area, a1)` gives 3
s.ron:20:49: property `two`: `exists q: ...` mentions 2 variables of the `forall` (pkg, area): a quantifier's body may mention one of them (not supported yet)"#
    );
}

/// From a new-user trial: `AllOf([])` was accepted and held at every step (a property on it
/// reported a violation per step); `AnyOf([])` would hold at none. Both are errors at the rule.
#[test]
fn empty_all_of_and_any_of_are_errors_at_their_rule() {
    assert_eq!(
        errors("(name: \"x\", propositions: [(name: \"p\", rule: Some(AllOf([])))], properties: [(id: \"R\", formula: \"G !p\")])"),
        "s.ron:1:46: proposition `p`: an empty AllOf([]) (it would hold at every step); give it at least one rule"
    );
    assert_eq!(
        errors("(name: \"x\", propositions: [(name: \"p\", rule: Some(Not(AnyOf([Words(\"a\"), AllOf([])]))))], properties: [])"),
        "s.ron:1:46: proposition `p`: an empty AllOf([]) (it would hold at every step); give it at least one rule"
    );
    assert_eq!(
        errors("(name: \"x\", propositions: [(name: \"p\", rule: Some(Input(AnyOf([]))))], properties: [])"),
        "s.ron:1:46: proposition `p`: an empty AnyOf([]) (it would hold at no step); give it at least one rule"
    );
}
