//! Compile time of one formula: `cargo run --release -p trac-compile --example compile_time -- 'FORMULA'`.
//! Prints the states, explored states and wall time (informal measurement, see BENCHMARKS.md).

use std::time::Instant;
use trac_compile::{compile, CompileOptions};
use trac_spec::Arena;

fn main() {
    for src in std::env::args().skip(1) {
        let mut arena = Arena::new();
        let f = match trac_spec::parse(&mut arena, &src) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(2);
            }
        };
        let t = Instant::now();
        let c = compile(&mut arena, f, &CompileOptions::default()).expect("compiles");
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
