//! Issue 24's bounded operators, counts and `end` against brute force: random abbreviations
//! (`F[n:m]`, `G[n:m!]`, `F[n:$]`, `X[n]`, `O[n:m]`, `H[n:$]`, `Y[n]`, `Z[n]`,
//! `count(...) CMP k`, `count[w](...) CMP k`, `end`), alone or under `G(c -> ...)`, on random
//! finite traces: after every step the LTLf verdict of plain progression, complete progression
//! and the compiled table equals the formula's truth on the trace so far computed from the
//! operators' definitions (not from their expansion), and the compiled table's LTL3 verdicts
//! equal complete progression's.

use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};
use std::sync::Arc;
use trac_compile::{compile, CompileOptions, Minimize, Semantics};
use trac_core::labels::{LabelSet, StepInput};
use trac_core::table::TableMonitor;
use trac_ltl::parser::parse;
use trac_ltl::Arena;
use trac_runtime::{Monitor, ProgressionMonitor, ResetPolicy, Verdict};

#[derive(Clone, Debug)]
struct Case {
    /// 0 F, 1 G, 2 X, 3 O, 4 H, 5 Y, 6 Z, 7 count, 8 end.
    op: u8,
    lo: u32,
    len: u32,
    /// `$` as the upper bound (F, G, O, H).
    open: bool,
    /// `!]` (F, G, X).
    strong: bool,
    /// count: the comparison (0 >=, 1 >, 2 <=, 3 <, 4 ==, 5 !=) and window.
    cmp: u8,
    window: Option<u32>,
    /// The body is `a & !b` rather than `a`.
    conj: bool,
    /// Checked as `G(c -> φ)` rather than `φ`.
    wrap: bool,
    /// One bitmask over `a`, `b`, `c` per step.
    trace: Vec<u8>,
}

impl Arbitrary for Case {
    fn arbitrary(g: &mut Gen) -> Case {
        let small = |g: &mut Gen| u32::from(u8::arbitrary(g) % 4);
        Case {
            op: u8::arbitrary(g) % 9,
            lo: small(g),
            len: small(g),
            open: u8::arbitrary(g) % 4 == 0,
            strong: bool::arbitrary(g),
            cmp: u8::arbitrary(g) % 6,
            window: (bool::arbitrary(g)).then(|| 1 + small(g)),
            conj: u8::arbitrary(g) % 3 == 0,
            wrap: bool::arbitrary(g),
            trace: (0..1 + usize::arbitrary(g) % 10)
                .map(|_| u8::arbitrary(g) % 8)
                .collect(),
        }
    }
}

const CMPS: [&str; 6] = [">=", ">", "<=", "<", "==", "!="];

impl Case {
    fn text(&self) -> String {
        let body = if self.conj { "(a & !b)" } else { "a" };
        let hi = if self.open {
            "$".to_string()
        } else {
            (self.lo + self.len).to_string()
        };
        let bang = if self.strong { "!" } else { "" };
        let (lo, k) = (self.lo, self.lo + self.len);
        let phi = match self.op {
            0 => format!("F[{lo}:{hi}{bang}] {body}"),
            1 => format!("G[{lo}:{hi}{bang}] {body}"),
            2 => format!("X[{lo}{bang}] {body}"),
            3 => format!("O[{lo}:{hi}] {body}"),
            4 => format!("H[{lo}:{hi}] {body}"),
            5 => format!("Y[{lo}] {body}"),
            6 => format!("Z[{lo}] {body}"),
            7 => {
                let w = self.window.map_or(String::new(), |w| format!("[{w}]"));
                format!("count{w}({body}) {} {k}", CMPS[usize::from(self.cmp)])
            }
            _ => "end".to_string(),
        };
        if self.wrap {
            format!("G(c -> ({phi}))")
        } else {
            phi
        }
    }

    fn body(&self, w: &[u8], j: usize) -> bool {
        w[j] & 1 == 1 && (!self.conj || w[j] & 2 == 0)
    }

    /// φ at position `i` of the finite word `w`, from the definitions.
    fn phi(&self, w: &[u8], i: usize) -> bool {
        let n = w.len();
        let (lo, hi) = (self.lo as usize, (self.lo + self.len) as usize);
        let b = |j: usize| self.body(w, j);
        match self.op {
            // F[lo:hi]: some step i+lo..=i+hi in the trace; weak: or the window passes the end.
            0 if self.open => {
                if i + lo >= n {
                    !self.strong
                } else {
                    (i + lo..n).any(b)
                }
            }
            0 => (i + lo..=(i + hi).min(n - 1)).any(b) || (!self.strong && i + hi >= n),
            // G[lo:hi]: every step of the window in the trace; strong: the window fits in it.
            1 if self.open => {
                if i + lo >= n {
                    !self.strong
                } else {
                    (i + lo..n).all(b)
                }
            }
            1 => (i + lo..=(i + hi).min(n - 1)).all(b) && (!self.strong || i + hi < n),
            2 => {
                if i + lo >= n {
                    !self.strong
                } else {
                    b(i + lo)
                }
            }
            // O[lo:hi]: some step lo..=hi back that exists; H: every such step.
            3 => {
                let first = if self.open { 0 } else { i.saturating_sub(hi) };
                i >= lo && (first..=i - lo).any(b)
            }
            4 => {
                let first = if self.open { 0 } else { i.saturating_sub(hi) };
                i < lo || (first..=i - lo).all(b)
            }
            5 => i >= lo && b(i - lo),
            6 => i < lo || b(i - lo),
            7 => {
                let first = self
                    .window
                    .map_or(0, |w| (i + 1).saturating_sub(w as usize));
                let c = (first..=i).filter(|&j| b(j)).count();
                let k = hi;
                match self.cmp {
                    0 => c >= k,
                    1 => c > k,
                    2 => c <= k,
                    3 => c < k,
                    4 => c == k,
                    _ => c != k,
                }
            }
            _ => i + 1 == n,
        }
    }

    /// The checked property on the finite word `w` (at its first position).
    fn holds(&self, w: &[u8]) -> bool {
        if self.wrap {
            (0..w.len()).all(|i| w[i] & 4 == 0 || self.phi(w, i))
        } else {
            self.phi(w, 0)
        }
    }
}

fn labels(mask: u8) -> LabelSet {
    ["a", "b", "c"]
        .iter()
        .enumerate()
        .filter(|(i, _)| mask >> i & 1 == 1)
        .map(|(_, p)| *p)
        .collect()
}

/// After each step: (LTL3 verdict, LTLf verdict of the trace so far).
fn run(m: &mut dyn Monitor, trace: &[u8]) -> Vec<(Verdict, Verdict)> {
    let mut out = Vec::new();
    for (i, &mask) in trace.iter().enumerate() {
        let set = labels(mask);
        m.step(&StepInput {
            step: i + 1,
            text: "",
            labels: &set,
        });
        out.push((m.verdict(), m.ltlf()));
    }
    out
}

fn check(c: Case) -> TestResult {
    let src = c.text();
    let mut arena = Arena::new();
    let f = match parse(&mut arena, &src) {
        Ok(f) => f,
        Err(e) => return TestResult::error(e.render(&src)),
    };
    let expected: Vec<Verdict> = (1..=c.trace.len())
        .map(|n| Verdict::of_bool(c.holds(&c.trace[..n])))
        .collect();
    let policy = ResetPolicy {
        on_violation: false,
        on_satisfaction: false,
    };
    let mut runs = Vec::new();
    for sem in [Semantics::Ltlf, Semantics::Ltl3] {
        let mut a = arena.clone();
        let opts = CompileOptions {
            semantics: sem,
            minimize: Minimize::Language,
        };
        let table = Arc::new(compile(&mut a, f, &opts).unwrap().table);
        let mut monitors: Vec<(&str, Box<dyn Monitor>)> = vec![
            ("compiled", Box::new(TableMonitor::new(table, policy))),
            (
                "complete progression",
                Box::new(ProgressionMonitor::with_semantics(
                    arena.clone(),
                    f,
                    policy,
                    Some(&trac_compile::SatOracle),
                    sem,
                )),
            ),
        ];
        if sem == Semantics::Ltl3 {
            monitors.push((
                "progression",
                Box::new(ProgressionMonitor::new(arena.clone(), f, policy)),
            ));
        }
        for (name, m) in &mut monitors {
            let got = run(m.as_mut(), &c.trace);
            let ltlf: Vec<Verdict> = got.iter().map(|x| x.1).collect();
            if ltlf != expected {
                return TestResult::error(format!(
                    "`{src}` ({sem:?}, {name}) on {:?}: LTLf {ltlf:?}, brute force {expected:?}",
                    c.trace
                ));
            }
            runs.push((sem, *name, got));
        }
    }
    // LTL3 verdicts: the table and complete progression agree (plain progression may stay
    // pending longer, never contradict).
    let ltl3: Vec<_> = runs.iter().filter(|r| r.0 == Semantics::Ltl3).collect();
    for (step, ((t, p), q)) in ltl3[0].2.iter().zip(&ltl3[1].2).zip(&ltl3[2].2).enumerate() {
        if t.0 != p.0 || (q.0 != Verdict::Pending && q.0 != p.0) {
            return TestResult::error(format!(
                "`{src}` on {:?} at step {}: compiled {:?}, complete {:?}, progression {:?}",
                c.trace,
                step + 1,
                t.0,
                p.0,
                q.0
            ));
        }
    }
    TestResult::passed()
}

#[test]
fn bounded_operators_and_counts_match_brute_force_on_every_engine() {
    // TRAC_QC_TESTS=5000 for a longer run.
    let tests = std::env::var("TRAC_QC_TESTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    QuickCheck::new()
        .tests(tests)
        .quickcheck(check as fn(Case) -> TestResult);
}

/// Overlapping deadlines: progressing `G(a -> F[1:m] b)` (or `G[1:m]`) leaves one chain per
/// pending deadline; the arena keeps the one that implies the others, so the progression states
/// explored are the `m + 1` distances to the earliest deadline (plus the sinks and the start),
/// not the sets of deadlines. Counted, not timed: without the subsumption `m = 12` explored
/// 2,050 states (15 kept after minimizing) and `m = 20` did not compile in minutes.
#[test]
fn overlapping_deadlines_explore_linearly_many_states() {
    for (src, m) in [
        ("G(a -> F[1:12] b)", 12),
        ("G(a -> G[1:12] b)", 12),
        ("G(a -> F[1:20] b)", 20),
        ("G(a -> F[2:9!] b)", 9),
        ("G(a -> O[1:3] c) & G(a -> F[1:16] b)", 16),
    ] {
        let mut arena = Arena::new();
        let f = parse(&mut arena, src).unwrap();
        for sem in [Semantics::Ltlf, Semantics::Ltl3] {
            let opts = CompileOptions {
                semantics: sem,
                minimize: Minimize::Language,
            };
            let c = compile(&mut arena, f, &opts).unwrap();
            assert!(
                c.stats.explored <= 4 * (m + 3),
                "`{src}` ({sem:?}): {} states explored, {} kept",
                c.stats.explored,
                c.stats.states
            );
        }
    }
}

/// A conjunction of two deadlines on the same proposition is the earlier one; a disjunction
/// the later one; and `G[1:4] b & G[1:6] b` is the longer obligation.
#[test]
fn the_earlier_deadline_subsumes_the_later_one() {
    let mut arena = Arena::new();
    for (src, same_as) in [
        ("F[1:4] b & F[1:6] b", "F[1:4] b"),
        ("F[1:4] b | F[1:6] b", "F[1:6] b"),
        ("G[1:4] b & G[1:6] b", "G[1:6] b"),
        ("G[1:4] b | G[1:6] b", "G[1:4] b"),
        ("X[!] b & X b", "X[!] b"),
        // A strong deadline implies a weak one that ends no earlier.
        ("F[1:4!] b & F[1:6] b", "F[1:4!] b"),
    ] {
        let f = parse(&mut arena, src).unwrap();
        let g = parse(&mut arena, same_as).unwrap();
        assert_eq!(f, g, "`{src}` should be `{same_as}`");
    }
    // Not subsumed: different propositions, or a weak deadline against a strong one that ends
    // later (at the end of a finite trace the weak one holds, the strong one not; and `b` at
    // step 5 satisfies the strong one only).
    for src in ["F[1:4] b & F[1:6] c", "F[1:4] b & F[1:6!] b"] {
        let f = parse(&mut arena, src).unwrap();
        assert!(matches!(arena.node(f), trac_ltl::Node::And(_)), "`{src}`");
    }
}
