#[test]
fn dwyer_timing() {
    let spec =
        trac_spec::spec::Spec::from_path(std::path::Path::new("../../benches/data/dwyer.ron"))
            .unwrap()
            .check()
            .unwrap();
    for p in &spec.properties {
        let t = std::time::Instant::now();
        let mut arena = p.arena.clone();
        let opts = trac_compile::CompileOptions {
            semantics: p.decl.semantics,
            minimize: true,
        };
        let c = trac_compile::compile(&mut arena, p.formula, &opts).unwrap();
        eprintln!(
            "{} {:?} states {} nodes {}",
            p.decl.id,
            t.elapsed(),
            c.table.state_count(),
            c.table.node_count()
        );
    }
    let t = std::time::Instant::now();
    let opts = trac_codegen::SpecOptions {
        type_name: "D",
        krate: "",
        file: None,
    };
    let ts = trac_codegen::generate_spec(&spec, &opts).unwrap();
    eprintln!("generate {:?} {} chars", t.elapsed(), ts.to_string().len());
}
