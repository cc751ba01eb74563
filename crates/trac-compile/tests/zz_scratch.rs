use trac_compile::{compile, CompileOptions};
use trac_spec::Arena;
#[test]
fn scratch() {
    let src = std::env::var("F")
        .unwrap_or("((d -> X false) xor ((b <-> c) M H d <-> (d W b) R c)) U X[!]F(b & Gd)".into());
    let mut arena = Arena::new();
    let f = trac_spec::parse(&mut arena, &src).unwrap();
    let t = std::time::Instant::now();
    let mut sat = trac_spec::sat::SatChecker::new(&arena, f);
    let bits = sat.initial_bits();
    let v = sat.verdict(&mut arena, f, &bits);
    eprintln!(
        "verdict {v:?} tableau {} in {:?}",
        sat.explored(),
        t.elapsed()
    );
    let c = compile(&mut arena, f, &CompileOptions::default()).unwrap();
    eprintln!("{:?} in {:?}", c.stats, t.elapsed());
}
