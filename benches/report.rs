//! The short benchmark report (issue 5): a short version of every workload, printed as one
//! markdown table with absolute times and ratios to the compiled engine of the same run.
//!
//! Run it with `cargo xtask bench-report` (which runs `cargo bench --bench report` and can write
//! the table into BENCHMARKS.md), or directly. It takes about a minute and a half in release mode.
//! Without `--bench` on the command line (as under `cargo test --benches`) it runs a smoke
//! version on tiny inputs. The full-size measurements are the criterion benches
//! (`cargo bench --bench engines|compile|audit`).

mod support;

use std::fmt::Write as _;
use std::time::{Duration, Instant};
use support::*;
use trac_core::table::TableMonitor;
use trac_runtime::engine::lazy::LazyMonitor;
use trac_runtime::engine::Engine;
use trac_runtime::ProgressionMonitor;

/// One cell of the table.
#[derive(Clone, Debug)]
enum Cell {
    /// Nanoseconds per event, and an optional note.
    Time(f64, Option<String>),
    /// Anything else.
    Text(String),
}

struct Row {
    workload: &'static str,
    point: String,
    cells: Vec<Option<Cell>>,
}

impl Row {
    fn new(workload: &'static str, point: impl Into<String>) -> Row {
        Row {
            workload,
            point: point.into(),
            cells: vec![None; Eng::ALL.len()],
        }
    }
    fn set(&mut self, e: Eng, c: Cell) {
        let i = Eng::ALL.iter().position(|x| *x == e).expect("engine");
        self.cells[i] = Some(c);
    }
    fn time(&self, e: Eng) -> Option<f64> {
        let i = Eng::ALL.iter().position(|x| *x == e).expect("engine");
        match &self.cells[i] {
            Some(Cell::Time(t, _)) => Some(*t),
            _ => None,
        }
    }
}

/// Sizes of the run: the short report, or the smoke test.
struct Sizes {
    w1: Vec<usize>,
    w2_len: usize,
    w3_len: usize,
    w4_len: usize,
    w6_events: usize,
    budget: Duration,
}

fn fmt_ns(ns: f64) -> String {
    if ns < 1_000.0 {
        format!("{ns:.1} ns")
    } else if ns < 1_000_000.0 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{:.2} ms", ns / 1e6)
    }
}

fn fmt_count(n: usize) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("10^{}", n.ilog10()),
        n if n >= 1_000 && n.is_power_of_two() => n.to_string(),
        n if n >= 1_000 && 10usize.pow(n.ilog10()) == n => format!("10^{}", n.ilog10()),
        n => n.to_string(),
    }
}

fn progress(msg: &str) {
    eprintln!("[bench-report] {msg}");
}

/// Measures every engine of `props` on `t` into `row` (`macro_runner` for the macro column).
fn measure(
    row: &mut Row,
    props: &[Prop],
    t: &Trace,
    macro_runner: Option<Box<dyn Runner>>,
    budget: Duration,
    skip_compiled: bool,
) {
    let tables = if skip_compiled {
        None
    } else {
        Some(compile_all(props))
    };
    let mut macro_runner = macro_runner;
    for e in Eng::ALL {
        if skip_compiled && matches!(e, Eng::CompiledBits | Eng::CompiledLabels) {
            row.set(e, Cell::Text("not compiled (see W5)".into()));
            continue;
        }
        let r = match runner(e, props, &t.names, tables.as_deref(), POLICY) {
            Some(r) => Some(r),
            None => macro_runner.take(),
        };
        if let Some(mut r) = r {
            row.set(e, Cell::Time(ns_per_step(r.as_mut(), t, budget), None));
        }
    }
}

fn w1(rows: &mut Vec<Row>, s: &Sizes) {
    let props = vec![Prop::parse(W1)];
    for &len in &s.w1 {
        progress(&format!("W1: {len} events"));
        let t = w1_trace(len);
        let mut row = Row::new("W1 trace length", format!("{} events", fmt_count(len)));
        measure(
            &mut row,
            &props,
            &t,
            Some(Box::new(W1Macro::new(&t))),
            s.budget,
            false,
        );
        rows.push(row);
    }
}

fn w2(rows: &mut Vec<Row>, s: &Sizes) {
    for n in [1usize, 11, 55, 110] {
        progress(&format!("W2: {n} properties"));
        let props = dwyer_props(n);
        let t = w2_trace(n, s.w2_len);
        let mac: Option<Box<dyn Runner>> = if n % 55 == 0 {
            Some(Box::new(DwyerMacro::new(&t, n / 55)))
        } else {
            None
        };
        let mut row = Row::new("W2 properties", format!("{n} Dwyer"));
        measure(&mut row, &props, &t, mac, s.budget, false);
        rows.push(row);
    }
    progress("W2: Trucks");
    let t = trucks_trace(s.w2_len);
    let spec = trucks_spec();
    let mut row = Row::new(
        "W2 properties",
        format!("Trucks: 16 ({} instances)", trucks_instances(&t)),
    );
    for e in Eng::ALL {
        if let Some(mut r) = spec_engine(e, &spec) {
            row.set(e, Cell::Time(ns_per_step(r.as_mut(), &t, s.budget), None));
        }
    }
    rows.push(row);
}

fn w3(rows: &mut Vec<Row>, s: &Sizes) {
    let props = vec![Prop::parse(W1)];
    for n in [1usize, 4, 16, 64, 256] {
        progress(&format!("W3: {n} propositions per step"));
        let t = w3_trace(n, s.w3_len);
        let mut row = Row::new("W3 props/step", format!("{n} per step"));
        measure(
            &mut row,
            &props,
            &t,
            Some(Box::new(W1Macro::new(&t))),
            s.budget,
            false,
        );
        rows.push(row);
    }
}

fn w4(rows: &mut Vec<Row>, s: &Sizes) {
    let points: Vec<(usize, usize)> = vec![
        (1, 10),
        (2, 10),
        (3, 10),
        (4, 10),
        (3, 1),
        (3, 100),
        (3, 1000),
    ];
    for (d, gap) in points {
        progress(&format!("W4: tree depth {d}, gap {gap}"));
        let (p, t) = tree_trace(2, d, gap, s.w4_len);
        let mut row = Row::new("W4 tree b=2", format!("d={d}, gap {gap}"));
        measure(&mut row, &[p], &t, None, s.budget, true);
        rows.push(row);
    }
}

/// A named group of properties and a trace over their propositions.
type Group = (String, Vec<(String, Prop)>, Trace);

fn w5(rows: &mut Vec<Row>, s: &Sizes) {
    progress("W5: compiling");
    let mut groups: Vec<Group> = vec![
        (
            "55 Dwyer patterns".into(),
            dwyer_patterns(),
            w2_trace(55, s.w2_len),
        ),
        (
            "Trucks: 16 properties".into(),
            trucks_props(),
            trucks_trace(s.w2_len),
        ),
    ];
    for d in 1..=4 {
        let (p, t) = tree_trace(2, d, 10, s.w4_len);
        groups.push((format!("tree d={d}"), vec![(format!("tree{d}"), p)], t));
    }
    for (name, props, t) in groups {
        let stats: Vec<CompileStat> = props.iter().map(|(id, p)| compile_stat(id, p)).collect();
        let time: Duration = stats.iter().map(|c| c.time).sum();
        let states: usize = stats.iter().map(|c| c.states).sum();
        let aux: usize = stats.iter().map(|c| c.aux_states).sum();
        let max_states = stats.iter().map(|c| c.states).max().unwrap_or(0);
        let max_bits = stats
            .iter()
            .map(|c| state_bits(c.states, c.aux_states))
            .max()
            .unwrap_or(0);
        let slowest = stats
            .iter()
            .max_by_key(|c| c.time)
            .map(|c| format!("{} {:.1} ms", c.id, c.time.as_secs_f64() * 1e3))
            .unwrap_or_default();
        let mut row = Row::new("W5 compile", name.clone());
        row.set(
            Eng::CompiledBits,
            Cell::Text(format!(
                "{:.1} ms total (slowest {slowest}); {states} states + {aux} aux (max {max_states}); ≤ {max_bits} bits of state",
                time.as_secs_f64() * 1e3
            )),
        );
        // The lazy automaton: states it meets on the workload's trace (plain formulas only).
        let mut met = 0;
        for (_, p) in &props {
            let mut m = LazyMonitor::new(p.arena.clone(), p.formula, POLICY);
            let labels: Vec<String> = m.atom_labels().to_vec();
            let ok = labels.iter().all(|l| t.index_of(l).is_some());
            if ok {
                let map: Vec<usize> = labels.iter().map(|l| t.index_of(l).unwrap()).collect();
                for &st in &t.seq {
                    let mut w = 0u64;
                    for (i, &g) in map.iter().enumerate() {
                        w |= u64::from(t.holds(st as usize, g)) << i;
                    }
                    m.step_bits(&[w]);
                }
                met += m.state_count();
            }
        }
        if met > 0 {
            row.set(
                Eng::LazyBits,
                Cell::Text(format!("{met} states met on {} events", fmt_count(t.len()))),
            );
        }
        rows.push(row);
    }
}

fn memory(rows: &mut Vec<Row>) {
    let p = Prop::parse(W1);
    let table = compile_all(std::slice::from_ref(&p)).remove(0);
    let tm = TableMonitor::new(table.clone(), POLICY);
    let mut row = Row::new("Memory per property", "W1, struct + state");
    row.set(
        Eng::CompiledBits,
        Cell::Text(format!(
            "{} B struct; mutable state: 2 × u32 (state, aux) = 8 B; needs {} bits ({} + {} states)",
            std::mem::size_of_val(&tm),
            state_bits(table.state_count(), table.aux_state_count()),
            table.state_count(),
            table.aux_state_count()
        )),
    );
    row.set(
        Eng::Macro,
        Cell::Text(format!(
            "{} B (the monitor struct, static tables)",
            std::mem::size_of::<W1Monitor>()
        )),
    );
    let mut lm = LazyMonitor::new(p.arena.clone(), p.formula, POLICY);
    let t = w1_trace(10_000);
    let names = lm.atom_labels().to_vec();
    for &st in &t.seq {
        let mut w = 0u64;
        for (i, n) in names.iter().enumerate() {
            w |= u64::from(t.holds(st as usize, t.index_of(n).unwrap())) << i;
        }
        lm.step_bits(&[w]);
    }
    row.set(
        Eng::LazyBits,
        Cell::Text(format!(
            "{} B struct + {} B cache ({} states, {} transitions)",
            std::mem::size_of_val(&lm),
            lm.cache_bytes(),
            lm.state_count(),
            lm.transition_count()
        )),
    );
    let mut pm = ProgressionMonitor::new(p.arena.clone(), p.formula, POLICY);
    for (i, &st) in t.seq.iter().enumerate() {
        let input = trac_core::labels::StepInput {
            step: i + 1,
            text: "",
            labels: &t.labels[st as usize],
        };
        trac_runtime::Monitor::step(&mut pm, &input);
    }
    row.set(
        Eng::Progression,
        Cell::Text(format!(
            "{} B struct + arena ({} formula nodes after 10^4 events)",
            std::mem::size_of_val(&pm),
            pm.arena().len()
        )),
    );
    rows.push(row);
}

fn w6(rows: &mut Vec<Row>, s: &Sizes, notes: &mut Vec<String>) {
    let path = target_dir()
        .join("bench-data")
        .join(format!("trucks-{}.jsonl", s.w6_events));
    progress(&format!("W6: generating {}", path.display()));
    if let Err(e) = audit_log(&path, s.w6_events) {
        notes.push(format!("W6: cannot write {}: {e}", path.display()));
        return;
    }
    let spec_path = root().join("examples/specs/trucks.ron");
    let spec = trucks_spec();
    let events = s.w6_events as f64;
    progress("W6: building trac (release)");
    match trac_binary() {
        Err(e) => notes.push(format!("W6: {e}")),
        Ok(bin) => {
            let engines = cli_engines(&bin);
            let mut row = Row::new(
                "W6 audit e2e",
                format!("`trac audit`, {} events × 61", fmt_count(s.w6_events)),
            );
            let runs: Vec<(Eng, Vec<String>)> = engines
                .into_iter()
                .map(|(name, args)| {
                    let col = match name {
                        "progression" => Eng::Progression,
                        "complete-progression" => Eng::Complete,
                        _ => Eng::CompiledLabels,
                    };
                    if name == "default" {
                        notes.push(
                            "W6: this `trac audit` has no `--engine` option; its default engine is shown in the compiled (labels) column.".into(),
                        );
                    }
                    (col, args)
                })
                .collect();
            for (col, extra) in runs {
                progress(&format!("W6: trac audit {}", extra.join(" ")));
                let mut args: Vec<String> = vec![
                    "--spec".into(),
                    spec_path.display().to_string(),
                    "--format".into(),
                    "jsonl".into(),
                ];
                args.extend(extra);
                args.push(path.display().to_string());
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                match run_audit(&bin, &args) {
                    Ok(r) => {
                        let ns = r.time.as_nanos() as f64 / events;
                        row.set(
                            col,
                            Cell::Time(
                                ns,
                                Some(format!(
                                    "{:.0}k ev/s, peak {:.1} MiB, exit {}",
                                    1e6 / ns,
                                    r.peak_kib as f64 / 1024.0,
                                    r.code.map_or("?".into(), |c| c.to_string())
                                )),
                            ),
                        );
                    }
                    Err(e) => notes.push(format!("W6: {e}")),
                }
            }
            rows.push(row);
        }
    }
    let mut row = Row::new(
        "W6 audit e2e",
        format!("audit loop in-process, {} events", fmt_count(s.w6_events)),
    );
    for (col, engine) in [
        (Eng::CompiledLabels, Engine::Compiled),
        (Eng::Progression, Engine::Progression),
        (Eng::Complete, Engine::CompleteProgression),
    ] {
        progress(&format!("W6: in-process audit, {}", engine.as_str()));
        let (time, verdicts) = audit_in_process(&spec, &path, engine);
        let ns = time.as_nanos() as f64 / events;
        row.set(
            col,
            Cell::Time(
                ns,
                Some(format!("{:.0}k ev/s, {verdicts} verdicts", 1e6 / ns)),
            ),
        );
    }
    rows.push(row);
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let rustc =
        std::process::Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
            .arg("--version")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
    format!("{cores} cores ({cpu}), {rustc}")
}

fn render(rows: &[Row], notes: &[String], elapsed: Duration) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Machine: {}. Report run time: {:.0} s.",
        machine(),
        elapsed.as_secs_f64()
    );
    let _ = writeln!(out);
    let _ = write!(out, "| workload | point |");
    for e in Eng::ALL {
        let _ = write!(
            out,
            " {} |",
            match e {
                Eng::CompiledBits => "compiled (bits)",
                Eng::CompiledLabels => "compiled (labels)",
                Eng::Macro => "macro",
                Eng::LazyBits => "lazy (bits)",
                Eng::LazyLabels => "lazy (labels)",
                Eng::Progression => "progression",
                Eng::Complete => "complete progression",
            }
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "|---|---|{}", "---|".repeat(Eng::ALL.len()));
    for r in rows {
        let reference = r.time(Eng::CompiledBits).or(r.time(Eng::CompiledLabels));
        let _ = write!(out, "| {} | {} |", r.workload, r.point);
        for c in &r.cells {
            let text = match c {
                None => "—".to_string(),
                Some(Cell::Text(t)) => t.clone(),
                Some(Cell::Time(t, note)) => {
                    let mut s = fmt_ns(*t);
                    if let Some(base) = reference {
                        let _ = write!(s, " ({:.2}×)", t / base);
                    }
                    if let Some(n) = note {
                        let _ = write!(s, "; {n}");
                    }
                    s
                }
            };
            let _ = write!(out, " {text} |");
        }
        let _ = writeln!(out);
    }
    if !notes.is_empty() {
        let _ = writeln!(out);
        for n in notes {
            let _ = writeln!(out, "- {n}");
        }
    }
    out
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let s = if full {
        Sizes {
            w1: vec![1_000, 10_000, 100_000, 1_000_000],
            w2_len: 5_000,
            w3_len: 10_000,
            w4_len: 20_000,
            w6_events: 100_000,
            budget: Duration::from_millis(300),
        }
    } else {
        Sizes {
            w1: vec![100, 1_000],
            w2_len: 100,
            w3_len: 100,
            w4_len: 200,
            w6_events: 1_000,
            budget: Duration::from_millis(1),
        }
    };
    let t0 = Instant::now();
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    w1(&mut rows, &s);
    w2(&mut rows, &s);
    w3(&mut rows, &s);
    w4(&mut rows, &s);
    w5(&mut rows, &s);
    memory(&mut rows);
    w6(&mut rows, &s, &mut notes);
    let table = render(&rows, &notes, t0.elapsed());
    println!("<!-- bench-report:begin -->");
    print!("{table}");
    println!("<!-- bench-report:end -->");
}
