//! Dense transition rows and valuation bits (issue 14) against the decision-diagram walk and
//! the label-set step, on random tables and random traces (quickcheck).
//!
//! The reference for the label-set step is the same table padded with propositions that no
//! diagram tests, so that it has more than [`DENSE_PROPS`] propositions and steps by the walk
//! with per-step label lookups (the path every table took before dense rows).

use quickcheck::{Arbitrary, Gen};
use quickcheck_macros::quickcheck;
use std::sync::Arc;
use trac_core::labels::{LabelSet, StepInput};
use trac_core::monitor::{Monitor, ResetPolicy, Semantics};
use trac_core::table::{FusedMonitor, Table, TableMonitor, TableParts, DENSE_PROPS, LEAF};

/// A small deterministic generator (xorshift64*), seeded by quickcheck.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A random ordered decision diagram over propositions `from..props` leading to `0..states`;
/// returns its reference (children after parents, propositions increasing along paths).
fn diagram(rng: &mut Rng, from: u32, props: u32, states: u32, nodes: &mut Vec<u32>) -> u32 {
    if from >= props || rng.below(3) == 0 {
        return LEAF | rng.below(u64::from(states)) as u32;
    }
    let p = from + rng.below(u64::from(props - from)) as u32;
    let k = nodes.len() / 3;
    nodes.extend([p, 0, 0]);
    let lo = diagram(rng, p + 1, props, states, nodes);
    let hi = diagram(rng, p + 1, props, states, nodes);
    nodes[3 * k + 1] = lo;
    nodes[3 * k + 2] = hi;
    k as u32
}

/// A random table: `props` propositions tested by its diagrams, `pad` more that none tests,
/// `states` main and `aux` auxiliary states.
fn random_table(seed: u64, props: u32, pad: u32, states: u32, aux: u32) -> Table {
    let mut rng = Rng(seed | 1);
    let mut nodes = Vec::new();
    let mut roots = vec![LEAF, LEAF | 1];
    for _ in 2..states {
        roots.push(diagram(&mut rng, 0, props, states, &mut nodes));
    }
    let mut aux_nodes = Vec::new();
    let aux_roots: Vec<u32> = (0..aux)
        .map(|_| diagram(&mut rng, 0, props, aux, &mut aux_nodes))
        .collect();
    let aux_info: Vec<u32> = (0..aux)
        .map(|_| rng.below(2) as u32 | (rng.below(u64::from(states)) as u32) << 1)
        .collect();
    let mut strings = String::new();
    let mut ends = Vec::new();
    for i in 0..props + pad {
        strings.push_str(&format!("a{i}"));
        ends.push(strings.len() as u32);
    }
    for s in 0..states {
        strings.push_str(&format!("r{s}"));
        ends.push(strings.len() as u32);
    }
    Table::from_parts(TableParts {
        semantics: Semantics::Ltl3,
        minimized: false,
        formula: "random".to_string(),
        props: props + pad,
        strings,
        string_ends: ends,
        initial: rng.below(u64::from(states)) as u32,
        roots,
        nodes,
        aux_initial: rng.below(u64::from(aux)) as u32,
        aux_roots,
        aux_nodes,
        aux_info,
    })
    .expect("random tables are well formed")
}

/// A random table's shape and a random trace over its propositions.
#[derive(Clone, Debug)]
struct Case {
    seed: u64,
    props: u32,
    states: u32,
    aux: u32,
    on_violation: bool,
    on_satisfaction: bool,
    trace: Vec<u64>,
}

impl Arbitrary for Case {
    fn arbitrary(g: &mut Gen) -> Case {
        let props = u32::arbitrary(g) % 11;
        let len = usize::arbitrary(g) % 60;
        Case {
            seed: u64::arbitrary(g),
            props,
            states: 2 + u32::arbitrary(g) % 12,
            aux: 1 + u32::arbitrary(g) % 6,
            on_violation: bool::arbitrary(g),
            on_satisfaction: bool::arbitrary(g),
            trace: (0..len).map(|_| u64::arbitrary(g)).collect(),
        }
    }
}

fn labels_of(v: u64, props: u32) -> LabelSet {
    (0..props)
        .filter(|&i| v >> i & 1 == 1)
        .map(|i| format!("a{i}"))
        .collect()
}

/// Every (state, valuation): the dense successor equals the walk's, main and auxiliary.
#[quickcheck]
fn dense_rows_equal_the_walk(case: Case) -> bool {
    let t = random_table(case.seed, case.props, 0, case.states, case.aux);
    assert_eq!(t.is_dense(), case.props as usize <= DENSE_PROPS);
    for v in 0..1u64 << case.props {
        let holds = |i: u32| v >> i & 1 == 1;
        for s in 0..case.states {
            if t.next_valuation(s, v) != t.next(s, holds) {
                return false;
            }
            // Bits above the table's propositions are ignored.
            if t.next_valuation(s, v | u64::MAX << case.props.min(63) << 1) != t.next(s, holds)
                && case.props < 63
            {
                return false;
            }
        }
        for a in 0..case.aux {
            if t.aux_next_valuation(a, v) != t.aux_next(a, holds) {
                return false;
            }
        }
    }
    true
}

/// On a random trace: the label-set step (walk, per-step lookups, on the padded table), the
/// dense label-set step, `step_valuation`, `step_bits` and `step_index` give the same verdict,
/// state and LTLf verdict at every step, and the same witnesses and explanations (the first
/// three, which record them).
#[quickcheck]
fn dense_steps_equal_the_label_set_step(case: Case) -> bool {
    let policy = ResetPolicy {
        on_violation: case.on_violation,
        on_satisfaction: case.on_satisfaction,
    };
    let pad = DENSE_PROPS as u32 + 1;
    let walk_table = Arc::new(random_table(
        case.seed,
        case.props,
        pad,
        case.states,
        case.aux,
    ));
    assert!(!walk_table.is_dense());
    let table = Arc::new(random_table(
        case.seed,
        case.props,
        0,
        case.states,
        case.aux,
    ));
    let mut reference = TableMonitor::new(walk_table, policy);
    let mut dense = TableMonitor::new(table.clone(), policy);
    let mut by_valuation = TableMonitor::new(table.clone(), policy);
    let mut by_bits = TableMonitor::new(table.clone(), policy);
    let mut by_index = TableMonitor::new(table.clone(), policy);
    // Verdicts only: the fused monitor (dense tables) and a table monitor recording no witness.
    let mut fused = FusedMonitor::new(&*table, policy);
    assert_eq!(fused.is_some(), case.props as usize <= DENSE_PROPS);
    let mut quiet = TableMonitor::new(table, policy);
    quiet.set_witnesses(false);
    for (k, &raw) in case.trace.iter().enumerate() {
        let v = raw & ((1u64 << case.props) - 1);
        let labels = labels_of(v, case.props);
        let text = format!("step {}", k + 1);
        let input = StepInput {
            step: k + 1,
            text: &text,
            labels: &labels,
        };
        let holding: Vec<u32> = (0..case.props).filter(|&i| v >> i & 1 == 1).collect();
        let r = reference.step(&input);
        let verdicts = [
            dense.step(&input),
            by_valuation.step_valuation(&input, raw),
            by_bits.step_bits(&[v]),
            by_index.step_index(&holding),
        ];
        if verdicts.iter().any(|&x| x != r) || quiet.step(&input) != r {
            return false;
        }
        if let Some(f) = &mut fused {
            // Bits above the table's propositions are ignored.
            if f.step(raw) != r
                || f.state() != reference.state()
                || f.verdict() != reference.verdict()
            {
                return false;
            }
        }
        if quiet.state() != reference.state()
            || quiet.verdict() != reference.verdict()
            || !quiet.witness().is_empty()
            || !quiet.explanation().is_empty()
        {
            return false;
        }
        for m in [&dense, &by_valuation, &by_bits, &by_index] {
            if m.state() != reference.state()
                || m.verdict() != reference.verdict()
                || m.ltlf() != reference.ltlf()
            {
                return false;
            }
        }
        for m in [&dense, &by_valuation] {
            if m.witness() != reference.witness() || m.explanation() != reference.explanation() {
                return false;
            }
        }
    }
    true
}
