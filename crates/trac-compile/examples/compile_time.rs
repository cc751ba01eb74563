//! Compile time of formulas: `cargo run --release -p trac-compile --example compile_time --
//! [--minimize language|verdict|none] 'FORMULA'...`. Prints the wall time, the states and the
//! statistics of each (an informal measurement; the benchmarks are in `benches/`).

use std::time::Instant;
use trac_compile::{compile, CompileOptions, Minimize};
use trac_ltl::Arena;

fn main() {
    let mut opts = CompileOptions::default();
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("--minimize") {
        args.next();
        opts.minimize = match args.next().as_deref() {
            Some("verdict") => Minimize::Verdict,
            Some("none") => Minimize::None,
            _ => Minimize::Language,
        };
    }
    for src in args {
        let mut arena = Arena::new();
        let f = match trac_ltl::parse(&mut arena, &src) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(2);
            }
        };
        let t = Instant::now();
        let c = compile(&mut arena, f, &opts).expect("compiles");
        println!(
            "{:>10.3} ms  {} states, {} aux, stats {:?}  {}",
            t.elapsed().as_secs_f64() * 1e3,
            c.table.state_count(),
            c.table.aux_state_count(),
            c.stats,
            if src.len() > 80 { &src[..80] } else { &src }
        );
    }
}
