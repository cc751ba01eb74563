//! The worked examples of the bundled specs (`examples` of a property, shown to few-shot
//! judges) agree with the rules: TRAC_R with the spec's labeling rules finds the example's
//! property violated first at exactly its `violation` step, and never in a compliant example.

use trac_experiments::judge::prepare;
use trac_runtime::audit::AuditOptions;
use trac_runtime::trace::Event;
use trac_spec::spec::Spec;

fn check(file: &str) -> usize {
    let path = format!("{}/../../examples/specs/{file}", env!("CARGO_MANIFEST_DIR"));
    let spec =
        trac_runtime::label::labeler::check_spec(&Spec::from_path(path.as_ref()).unwrap()).unwrap();
    let opts = AuditOptions {
        compiler: Some(trac_compile::Compiler::shared()),
        ..AuditOptions::default()
    };
    let mut n = 0;
    let mut wrong = Vec::new();
    for p in &spec.properties {
        for (k, ex) in p.decl.examples.iter().enumerate() {
            let events: Vec<Event> = ex
                .actions
                .iter()
                .enumerate()
                .map(|(i, a)| Event {
                    step: i + 1,
                    line: i + 1,
                    output: Some(a.clone()),
                    raw: a.clone(),
                    ..Event::default()
                })
                .collect();
            let t = &prepare(&spec, &opts, "example", &events).unwrap()[0];
            let first = t
                .reference
                .iter()
                .filter(|(id, _, _)| *id == p.decl.id)
                .map(|(_, s, _)| *s)
                .min();
            if first != ex.violation {
                wrong.push(format!(
                    "{file} {} example {}: TRAC_R's first violation {first:?}, the example says {:?}",
                    p.decl.id,
                    k + 1,
                    ex.violation
                ));
            }
            n += 1;
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    n
}

#[test]
fn bundled_rule_examples_agree_with_the_rules() {
    assert_eq!(check("trucks.ron"), 32);
    assert_eq!(check("textworld.ron"), 8);
    assert_eq!(check("scienceworld.ron"), 14);
}
