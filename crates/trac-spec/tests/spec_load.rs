//! Loading good specs: RON shapes, defaults, checked formulas, descriptions.

use trac_ltl::formula::Node;
use trac_spec::spec::{PropositionDecl, Rule, Semantics, Spec};

const TEXTWORLD: &str = r#"(
  name: "textworld",
  propositions: [
    (name: "take", param: Some("item"), description: "the agent takes {item}", rule: Some(Words("take {item...}"))),
    (name: "look", description: "the agent looks around", rule: Some(Words("look around"))),
    (name: "examine", param: Some("item"), description: "the agent examines {item}", rule: Some(Words("examine {item...}"))),
  ],
  properties: [
    (id: "R1", description: "take an item, examine it next", formula: "forall item: G(take(item) -> X examine(item))"),
  ],
)"#;

#[test]
fn the_documented_example_loads_and_checks() {
    let spec = Spec::from_str(TEXTWORLD, "textworld.ron").unwrap();
    assert_eq!(spec.name, "textworld");
    assert!(!spec.case_sensitive);
    assert_eq!(spec.propositions.len(), 3);
    assert_eq!(
        spec.propositions[0],
        PropositionDecl {
            name: "take".into(),
            param: Some("item".into()),
            description: "the agent takes {item}".into(),
            rule: Some(Rule::Words("take {item...}".into())),
            ..Default::default()
        }
    );
    let p = &spec.properties[0];
    assert_eq!(
        (p.semantics, p.reset_on_satisfaction),
        (Semantics::Ltl3, false)
    );
    let checked = spec.check().unwrap();
    assert_eq!(checked.properties.len(), 1);
    let cp = &checked.properties[0];
    assert_eq!(cp.var.as_deref(), Some("item"));
    assert_eq!(cp.decl.id, "R1");
    assert!(matches!(cp.arena.node(cp.formula), Node::Globally(_)));
    let atoms: Vec<&str> = cp
        .arena
        .atoms(cp.formula)
        .into_iter()
        .map(|s| cp.arena.sym_name(s))
        .collect();
    assert_eq!(atoms, ["take(item)", "examine(item)"]);
    let d = checked.descriptions();
    assert_eq!(d.len(), 3);
    assert_eq!(d["look"], "the agent looks around");
    assert_eq!(d["take"], "the agent takes {item}");
    assert_eq!(
        spec.propositions[0].describe(Some("the knife")),
        "the agent takes the knife"
    );
    assert_eq!(
        spec.propositions[1].describe(None),
        "the agent looks around"
    );
}

#[test]
fn every_field_comments_raw_strings_and_implicit_some() {
    let src = r##"// Trucks, with every field.
Spec(
  name: "trucks",
  description: "logistics",
  case_sensitive: true,
  propositions: [
    /* a plain proposition */
    (name: "drive", rule: Words("DRIVE")),
    (name: "load", param: "pkg", rule: AnyOf([Words("LOAD {pkg}"), Regex(r#"LOAD\((?:\w+, )?(?P<pkg>package\d+)"#)])),
    (name: "deliver", param: Some("pkg"), rule: Some(AllOf([Words("DELIVER {pkg}"), Not(Words("failed"))]))),
    (name: "hungry"),
  ],
  properties: [
    (id: "P1", formula: "G(load(package2) -> F deliver(package2))", semantics: Ltlf, reset_on_satisfaction: true),
    (id: "P2", formula: "forall p: G(load(p) -> F deliver(p))", description: "every loaded package is delivered"),
    (id: "P3", formula: "G !hungry & F drive"),
  ],
)"##;
    let spec = Spec::from_str(src, "trucks.ron").unwrap();
    assert!(spec.case_sensitive);
    assert_eq!(spec.description, "logistics");
    assert_eq!(spec.propositions[1].param.as_deref(), Some("pkg"));
    assert_eq!(spec.propositions[3].rule, None);
    assert_eq!(
        spec.propositions[2].rule,
        Some(Rule::AllOf(vec![
            Rule::Words("DELIVER {pkg}".into()),
            Rule::Not(Box::new(Rule::Words("failed".into())))
        ]))
    );
    assert_eq!(spec.properties[0].semantics, Semantics::Ltlf);
    assert!(spec.properties[0].reset_on_satisfaction);
    let checked = spec.check().unwrap();
    assert_eq!(checked.properties[0].var, None);
    assert_eq!(checked.properties[1].var.as_deref(), Some("p"));
    // A proposition without a description is left out, so renderers fall back to its name.
    assert!(!checked.descriptions().contains_key("hungry"));
}

#[test]
fn without_propositions_atoms_are_trace_labels() {
    let src = r#"(name: "free", properties: [(id: "A", formula: "G(open_door -> X go_through)"), (id: "B", formula: "forall x: G(took(x) -> F used(x))")])"#;
    let checked = Spec::from_str(src, "free.ron").unwrap().check().unwrap();
    assert_eq!(checked.properties.len(), 2);
    assert!(checked.descriptions().is_empty());
}

#[test]
fn each_property_has_its_own_arena() {
    let src =
        r#"(name: "two", properties: [(id: "A", formula: "G a"), (id: "B", formula: "F b")])"#;
    let checked = Spec::from_str(src, "two.ron").unwrap().check().unwrap();
    let b = &checked.properties[1];
    assert_eq!(b.arena.lookup_sym("a"), None);
    assert!(b.arena.lookup_sym("b").is_some());
}

#[test]
fn serialize_round_trip() {
    let spec = Spec::from_str(TEXTWORLD, "textworld.ron").unwrap();
    let text = ron::ser::to_string_pretty(&spec, ron::ser::PrettyConfig::default()).unwrap();
    let back = Spec::from_str(&text, "again.ron").unwrap();
    assert_eq!(back.propositions, spec.propositions);
    assert_eq!(back.properties, spec.properties);
    assert_eq!(back.name, spec.name);
}

#[test]
fn from_path_reads_files_and_reports_missing_ones() {
    let dir = std::env::temp_dir().join(format!("trac-spec-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("tw.ron");
    std::fs::write(&p, TEXTWORLD).unwrap();
    let spec = Spec::from_path(&p).unwrap();
    assert_eq!(spec.source.as_ref().unwrap().file, p.display().to_string());
    spec.check().unwrap();
    let missing = dir.join("nope.ron");
    let e = Spec::from_path(&missing).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("{}: cannot read spec: ", missing.display())),
        "{e}"
    );
}

#[test]
fn the_example_specs_check() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/specs");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "ron") {
            let checked = Spec::from_path(&p)
                .and_then(|s| s.check())
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(!checked.properties.is_empty(), "{}", p.display());
            n += 1;
        }
    }
    assert!(n >= 1);
}

#[test]
fn labeler_choice_and_examples_load_and_default() {
    use trac_spec::spec::{LabelExample, LabelerChoice};
    let src = r#"(
      name: "x",
      propositions: [
        (name: "greet", description: "the agent warmly greets", labeler: Llm,
         examples: [(text: "Hello there!", holds: true), (text: "Go away.", holds: false)]),
        (name: "take", param: Some("item"), rule: Some(Words("take {item}")), labeler: Both,
         examples: [(text: "take the knife", values: ["knife"])]),
        (name: "look", rule: Some(Words("look"))),
      ],
      properties: [(id: "R", formula: "G(greet -> F look)")],
    )"#;
    let spec = Spec::from_str(src, "x.ron").unwrap();
    let choices: Vec<LabelerChoice> = spec.propositions.iter().map(|p| p.labeler).collect();
    assert_eq!(
        choices,
        [LabelerChoice::Llm, LabelerChoice::Both, LabelerChoice::Rule]
    );
    assert_eq!(
        spec.propositions[0].examples,
        [
            LabelExample {
                text: "Hello there!".into(),
                holds: true,
                values: vec![]
            },
            LabelExample {
                text: "Go away.".into(),
                holds: false,
                values: vec![]
            }
        ]
    );
    assert_eq!(spec.propositions[1].examples[0].values, ["knife"]);
    assert!(spec.propositions[2].examples.is_empty());
    spec.check().unwrap();
}
