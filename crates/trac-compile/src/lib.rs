//! `trac-compile`: compiles a property into a deterministic monitor automaton with **complete**
//! verdicts, minimized, as a [`Table`] that [`trac_core::table::TableMonitor`] runs.
//!
//! A monitor is complete when it reports ⊥ as soon as no continuation of the trace can satisfy
//! the property and ⊤ as soon as no continuation can violate it: the LTL3 semantics of Bauer,
//! Leucker & Schallhart, "Runtime verification for LTL and TLTL", TOSEM 20(4), 2011. Progression
//! alone is sound but not complete: it misses `F p & G !p` (violated before any step).
//!
//! # Construction ([`compile`])
//! 1. **States** are interned, normalized residual formulas of the progression closure
//!    (Bacchus & Kabanza 2000), with the bits of the property's past-time subformulas when it has
//!    any (only the bits the residual still depends on). Transitions are symbolic: per state, a
//!    reduced ordered decision diagram over the propositions that state tests, computed by one
//!    symbolic progression step (Shannon expansion, see [`build`](crate::build)); no step
//!    enumerates the `2^|AP|` valuations, so properties over hundreds of propositions compile.
//! 2. **Verdicts.** LTL3: a state is ⊥ iff its residual (with its past bits) is unsatisfiable over
//!    infinite words and ⊤ iff its negation is, decided by [`sat::SatChecker`] (GPVW
//!    tableau with generalized Büchi acceptance, product with the past tracker, Tarjan SCC
//!    emptiness; memoized per residual). LTLf: states also remember whether the trace read so
//!    far is accepted (end-of-trace evaluation of the previous residual on the last step, `X`
//!    weak); ⊥ iff no accepting state is reachable, ⊤ iff every reachable state accepts (SCCs of
//!    the state graph with petgraph's Tarjan).
//! 3. **Minimization** ([`minimize`](crate::minimize), [`Minimize`]): partition refinement of
//!    the Moore machine whose output is, by default, the LTL3 verdict and the LTLf acceptance
//!    (Moore 1956), each class then split by language equivalence decided by the satisfiability
//!    checker where the transitions do not already settle it ([`Minimize::Language`]); or the
//!    verdict alone ([`Minimize::Verdict`], the minimal LTL3 monitor of Bauer, Leucker &
//!    Schallhart). All ⊥ states form one sink with id 0, all ⊤ states one sink with id 1 (so a
//!    runtime test `state <= 1` means "decided"); every state keeps a representative residual
//!    (the first one found, breadth first) for witnesses, which by default has the same models
//!    as every residual it stands for.
//! 4. **Auxiliary automaton.** The run without restarts, over `(residual, past bits, accepting)`,
//!    minimized with output (accepting, restart state): it gives the LTLf verdict of the whole
//!    trace and the state a TRAC_R restart starts from (the initial formula with the current past
//!    bits).
//!
//! The satisfiability checker ([`sat`]) also decides complete progression's verdicts at run
//! time: [`SatOracle`] implements `trac_ltl::compiler::VerdictOracle` for `trac-runtime`.
//!
//! Exports: [`export::dot`] (Graphviz; [`export::dot_clusters`] for several tables in one
//! document), [`export::hoa`] (HOA v1, verdicts in state names), and the table's own RON / JSON
//! ([`Table::to_ron`], [`Table::to_json`]).
#![deny(missing_docs)]

mod build;
mod dd;
pub mod export;
mod layout;
mod minimize;
mod partition;
pub mod sat;
mod verdicts;

use build::{Builder, Kind};
use dd::{Dd, Ref};
use layout::{flatten, main_acceptance, renumber, renumber_plain};
pub use partition::EQUIVALENCE_BUDGET;
use partition::{language_partition, sink_partition};
use sat::SatChecker;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use trac_core::table::{Table, TableParts};
pub use trac_core::Semantics;
use trac_ltl::compiler::{VerdictOracle, VerdictSession};
use trac_ltl::formula::{Arena, Formula, Node};
use trac_ltl::progress::{eval_empty, validate};
use verdicts::{ltl3_verdicts, ltlf_verdicts, StateGraph};

/// Which pending states [`compile`] merges. Decided states always merge into the two sinks.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Minimize {
    /// Keep every explored pending state apart.
    None,
    /// Merge states with the same verdicts after every continuation: the minimal Moore machine
    /// whose output is the table's verdict (Bauer, Leucker & Schallhart's minimal LTL3 monitor).
    /// The smallest table, but a merged state's representative residual may mean less than the
    /// obligation it stands for: `G(c -> F b)` and `F b & G(c -> F b)` are both pending after
    /// every trace and merge. Use it where only verdicts matter.
    Verdict,
    /// Merge only states whose residuals mean the same (the default): the coarsest congruence
    /// that keeps apart states with a different LTL3 verdict or a different LTLf truth after
    /// some continuation (so the table's residual gives the LTLf verdict of every continuation
    /// too), intersected with language equivalence over infinite words, decided by the
    /// satisfiability checker on `ψ1 xor ψ2` unless the transitions settle it (states whose
    /// past-time bits or past-time cones differ are never merged this way). A state's
    /// representative residual then has the same models, finite and infinite, as the residual
    /// plain progression would show.
    #[default]
    Language,
}

/// Options of [`compile`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    /// LTL3 (infinite continuations, the default) or LTLf (finite continuations) verdicts.
    pub semantics: Semantics,
    /// Which pending states merge (default [`Minimize::Language`]).
    pub minimize: Minimize,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            semantics: Semantics::Ltl3,
            minimize: Minimize::Language,
        }
    }
}

/// A property that cannot be compiled.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    /// A past-time operator contains a future-time one.
    #[error(transparent)]
    Invalid(#[from] trac_ltl::progress::FutureInPast),
    /// The automaton has more states than the budget of [`compile_within`] allows: its size
    /// is exponential in the formula (a window `count[w](a)` or `Y[n] a` remembers up to
    /// `2^w` histories; a conjunction multiplies its conjuncts' sizes). Complete progression
    /// gives the same verdicts and builds only the states a trace visits.
    #[error(
        "the monitor automaton has more than {limit} state{} ({explored} explored when compilation stopped)",
        if *limit == 1 { "" } else { "s" }
    )]
    TooLarge {
        /// The budget: states explored, main and auxiliary automata each.
        limit: usize,
        /// States explored when it stopped.
        explored: usize,
    },
}

/// The state budget of [`Compiler`] (the table compiler the audit, `trac run` and the gateway
/// use): a property whose automaton has more states is monitored by complete progression.
/// Sized so that a table within it compiles in seconds (about 2,300 explored states take 3 s
/// in a release build: `G(count[24](a) <= 3)`), while the exponential cases stop early.
pub const DEFAULT_MAX_STATES: usize = 4096;

/// Sizes measured during a compilation.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Main states explored (before minimization; the sinks not counted separately).
    pub explored: usize,
    /// Auxiliary states explored.
    pub explored_aux: usize,
    /// Main states of the table (the two sinks included).
    pub states: usize,
    /// Auxiliary states of the table.
    pub aux_states: usize,
    /// Decision nodes of the main automaton.
    pub nodes: usize,
    /// Tableau product states explored by the satisfiability checks.
    pub tableau: usize,
}

/// The result of [`compile`].
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The monitor table.
    pub table: Table,
    /// Sizes.
    pub stats: Stats,
}

/// Compiles `formula` (a handle in `arena`, which receives the residual formulas) into a monitor
/// table. See the crate docs for the construction.
///
/// Cost: linear in the number of states times their diagram sizes for exploration and
/// minimization, plus the satisfiability checks (exponential in the formula in the worst case,
/// memoized and usually settled by constant-word witnesses).
///
/// # Errors
/// [`CompileError::Invalid`] if a past-time operator contains a future-time one.
pub fn compile(
    arena: &mut Arena,
    formula: Formula,
    opts: &CompileOptions,
) -> Result<Compiled, CompileError> {
    compile_within(arena, formula, opts, usize::MAX)
}

/// [`compile`], giving up once either automaton (the main one or the auxiliary one) has more
/// than `max_states` explored states.
///
/// Cost: as [`compile`], bounded by `max_states` states' transitions (the satisfiability checks
/// of the states explored are not otherwise bounded).
///
/// # Errors
/// As [`compile`], and [`CompileError::TooLarge`] past the budget.
pub fn compile_within(
    arena: &mut Arena,
    formula: Formula,
    opts: &CompileOptions,
    max_states: usize,
) -> Result<Compiled, CompileError> {
    validate(arena, formula)?;
    let too_large = |explored| CompileError::TooLarge {
        limit: max_states,
        explored,
    };
    let acc0 = eval_empty(arena, formula);
    let mut b = Builder::new(arena, formula);
    let bits0 = b.initial_bits();
    let aux_start = b.key(Kind::Aux, formula, &bits0, acc0);
    let aux = b
        .explore(Kind::Aux, &[aux_start], max_states)
        .map_err(too_large)?;
    let kind = match opts.semantics {
        Semantics::Ltl3 => Kind::Ltl3,
        Semantics::Ltlf => Kind::Ltlf,
    };
    // The main seeds: the initial state, then every restart state (the initial formula with the
    // bits of some auxiliary state).
    let mut seeds = vec![b.key(kind, formula, &bits0, acc0)];
    let mut restart_seed = Vec::with_capacity(aux.keys.len());
    for (_, bits, _) in &aux.keys {
        let k = b.key(kind, formula, bits, acc0);
        let i = match seeds.iter().position(|s| *s == k) {
            Some(i) => i,
            None => {
                seeds.push(k);
                seeds.len() - 1
            }
        };
        restart_seed.push(i);
    }
    let main = b.explore(kind, &seeds, max_states).map_err(too_large)?;
    let graph = StateGraph::new(&b.dd, &main);
    let ltl3 = match (kind, opts.minimize) {
        (Kind::Ltl3, _) | (_, Minimize::Language) => ltl3_verdicts(&mut b, &main, &graph),
        _ => Vec::new(),
    };
    let verdicts = match kind {
        Kind::Ltl3 => ltl3.clone(),
        _ => ltlf_verdicts(&main, &graph),
    };
    // Main partition.
    let class = match opts.minimize {
        Minimize::None => sink_partition(&verdicts),
        Minimize::Verdict => {
            let outputs: Vec<u64> = verdicts.iter().map(|&v| u64::from(v)).collect();
            minimize::refine(&mut b.dd, &main.roots, &outputs)
        }
        Minimize::Language => language_partition(&mut b, &main, &verdicts, &ltl3),
    };
    let (new_id, reps) = renumber(&b.dd, &main.roots, &class, &verdicts, 0);
    let state_of = |s: u32| new_id[class[s as usize] as usize];
    let mut roots: Vec<Ref> = vec![Dd::leaf(0), Dd::leaf(1)];
    let mut memo = rustc_hash::FxHashMap::default();
    for &rep in reps.iter().skip(2) {
        let r = b.dd.map(main.roots[rep], &mut |p| state_of(p), &mut memo);
        roots.push(r);
    }
    let initial = state_of(0);
    // Auxiliary automaton: output (accepting, restart state).
    let aux_out: Vec<u64> = aux
        .keys
        .iter()
        .enumerate()
        .map(|(i, (_, _, acc))| u64::from(*acc) | u64::from(state_of(restart_seed[i] as u32)) << 1)
        .collect();
    let aux_class = if opts.minimize != Minimize::None {
        minimize::refine(&mut b.dd, &aux.roots, &aux_out)
    } else {
        (0..aux.keys.len() as u32).collect()
    };
    let (aux_new, aux_reps) = renumber_plain(&b.dd, &aux.roots, &aux_class);
    let aux_state_of = |s: u32| aux_new[aux_class[s as usize] as usize];
    let mut aux_roots = Vec::with_capacity(aux_reps.len());
    let mut memo = rustc_hash::FxHashMap::default();
    for &rep in &aux_reps {
        aux_roots.push(b.dd.map(aux.roots[rep], &mut |p| aux_state_of(p), &mut memo));
    }
    let aux_info: Vec<u32> = aux_reps.iter().map(|&rep| aux_out[rep] as u32).collect();
    // Strings: propositions, then one residual per main state.
    let mut strings = String::new();
    let mut ends = Vec::new();
    for &s in &b.ctx.props {
        strings.push_str(b.ctx.arena.sym_name(s));
        ends.push(strings.len() as u32);
    }
    for (id, &rep) in reps.iter().enumerate() {
        let text = match id {
            0 => "false".to_string(),
            1 => "true".to_string(),
            // The initial state shows the property as written.
            _ if id as u32 == initial => trac_ltl::print(b.ctx.arena, formula),
            _ => trac_ltl::print(b.ctx.arena, main.keys[rep].0),
        };
        strings.push_str(&text);
        ends.push(strings.len() as u32);
    }
    let (nodes, roots) = flatten(&b.dd, &roots);
    let (aux_nodes, aux_roots) = flatten(&b.dd, &aux_roots);
    let stats = Stats {
        explored: main.keys.len(),
        explored_aux: aux.keys.len(),
        states: roots.len(),
        aux_states: aux_roots.len(),
        nodes: nodes.len() / 3,
        tableau: b.ctx.sat.explored(),
    };
    let parts = TableParts {
        semantics: opts.semantics,
        minimized: opts.minimize != Minimize::None,
        formula: trac_ltl::print(b.ctx.arena, formula),
        props: b.ctx.props.len() as u32,
        strings,
        string_ends: ends,
        initial,
        roots,
        nodes,
        aux_initial: aux_state_of(0),
        aux_roots,
        aux_nodes,
        aux_info,
    };
    let mut table = Table::from_parts(parts).expect("compiled tables are well formed");
    if let Some(acc) = main_acceptance(kind, &main, &class, &new_id, reps.len()) {
        table = table
            .with_accepting(acc)
            .expect("one acceptance flag per state");
    }
    Ok(Compiled { table, stats })
}

/// The monitorability class of a property (Peled & Havelund, "Refining the safety–liveness
/// classification of temporal properties according to monitorability", 2018).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Monitorability {
    /// Every violation has a finite bad prefix (and some satisfaction does not have a good one).
    Safety,
    /// Every satisfaction has a finite good prefix (and some violation does not have a bad one).
    CoSafety,
    /// Safety and co-safety: every trace is eventually decided.
    Both,
    /// Neither, but from every reachable state a verdict remains reachable.
    Monitorable,
    /// Some reachable state can never reach a verdict (`GF p`).
    NonMonitorable,
}

impl Monitorability {
    /// `safety`, `co-safety`, `both`, `monitorable`, `non-monitorable`.
    pub fn as_str(self) -> &'static str {
        match self {
            Monitorability::Safety => "safety",
            Monitorability::CoSafety => "co-safety",
            Monitorability::Both => "safety and co-safety",
            Monitorability::Monitorable => "monitorable",
            Monitorability::NonMonitorable => "non-monitorable",
        }
    }
}

/// The monitorability class of `formula`, given its LTL3 table (from [`compile`]), with no
/// bound on the search: [`monitorability_within`] with an unbounded budget. A formula with a
/// large tableau can take minutes (see [`monitorability_within`]).
pub fn monitorability(arena: &mut Arena, formula: Formula, table: &Table) -> Monitorability {
    monitorability_within(arena, formula, table, usize::MAX)
        .expect("an unbounded search always decides")
}

/// The class of [`monitorability_within`] in words, as `trac check` and the Python `check()`
/// print it: [`Monitorability::as_str`], or, when the search ran out of `budget`,
/// `monitorable (whether safety or co-safety: unknown within BUDGET tableau states per check)`.
pub fn monitorability_text(
    arena: &mut Arena,
    formula: Formula,
    table: &Table,
    budget: usize,
) -> String {
    match monitorability_within(arena, formula, table, budget) {
        Some(class) => class.as_str().to_string(),
        None => format!(
            "monitorable (whether safety or co-safety: unknown within {budget} tableau states per check)"
        ),
    }
}

/// The monitorability class of `formula`, given its LTL3 table (from [`compile`]), exploring at
/// most `budget` tableau product states per satisfiability check; `None` when that was not
/// enough to tell safety or co-safety (the property is then monitorable: the table showed it).
///
/// From the table first (linear in its size): a reachable pending state that reaches no sink
/// makes the property non-monitorable; if no cycle joins reachable pending states, every trace
/// is decided within a bounded number of steps, so the property is safety and co-safety (and
/// conversely, by König's lemma). Then syntax: a formula in the syntactic safety fragment (NNF
/// over literals, past subformulas, `&`, `|`, `X`, `G`, `R`, `W`) is safety, one in the
/// syntactic co-safety fragment (`&`, `|`, `X`, `X[!]`, `F`, `U`, `M`) co-safety (Sistla 1994),
/// and, as it is not both, not the other. Otherwise safety is decided by
/// [`SatChecker::is_safety`] (emptiness of the safety closure of the formula against its
/// negation), co-safety as the safety of the negation.
pub fn monitorability_within(
    arena: &mut Arena,
    formula: Formula,
    table: &Table,
    budget: usize,
) -> Option<Monitorability> {
    let (reach, decides, acyclic) = pending_graph(table);
    if (0..table.state_count()).any(|s| reach[s] && !decides[s]) {
        return Some(Monitorability::NonMonitorable);
    }
    if acyclic {
        return Some(Monitorability::Both);
    }
    let mut sat = SatChecker::new(arena, formula);
    let nnf = sat.nnf(arena, formula, false);
    if syntactic(arena, nnf, true) {
        return Some(Monitorability::Safety);
    }
    if syntactic(arena, nnf, false) {
        return Some(Monitorability::CoSafety);
    }
    let bits = sat.initial_bits();
    let safety = sat.is_safety_within(arena, formula, &bits, budget)?;
    let neg = arena.not(formula);
    let cosafety = sat.is_safety_within(arena, neg, &bits, budget)?;
    Some(match (safety, cosafety) {
        (true, true) => Monitorability::Both,
        (true, false) => Monitorability::Safety,
        (false, true) => Monitorability::CoSafety,
        (false, false) => Monitorability::Monitorable,
    })
}

/// Whether `formula` is in the syntactic safety fragment and whether it is in the syntactic
/// co-safety fragment (of its negation normal form; see [`monitorability_within`]), read from its
/// syntax alone, with no table: for formulas whose table is over the state budget. In the safety
/// fragment: safety or both (every violation has a finite bad prefix); in the co-safety one:
/// co-safety or both; in both fragments: both (only `X` and past-time operators over literals);
/// in neither: unknown (the class needs the table or a search). Linear in the formula.
pub fn syntactic_fragments(arena: &mut Arena, formula: Formula) -> (bool, bool) {
    let mut sat = SatChecker::new(arena, formula);
    let nnf = sat.nnf(arena, formula, false);
    (syntactic(arena, nnf, true), syntactic(arena, nnf, false))
}

/// Whether the NNF formula `f` is in the syntactic safety fragment (`safety`) or co-safety
/// fragment (not `safety`): literals and past subformulas (decided at each step), `&`, `|`, `X`
/// and, for safety, `G`, `R`, `W`; for co-safety, `X[!]`, `F`, `U`, `M`.
fn syntactic(arena: &Arena, f: Formula, safety: bool) -> bool {
    let node = arena.node(f);
    let ok = match node {
        Node::True | Node::False | Node::Atom(_) | Node::Not(_) => true,
        n if n.is_past_operator() => true,
        Node::And(_) | Node::Or(_) | Node::Next(_) => true,
        Node::StrongNext(_) | Node::Finally(_) | Node::Until(..) | Node::StrongRelease(..) => {
            !safety
        }
        Node::Globally(_) | Node::Release(..) | Node::WeakUntil(..) => safety,
        _ => false,
    };
    // A negation in NNF is over a literal or a past subformula: nothing below it to check.
    ok && (matches!(node, Node::Not(_)) || node.is_past_operator() || {
        node.operands()
            .into_iter()
            .all(|g| syntactic(arena, g, safety))
    })
}

/// Per state of `table`: reachable from the initial state; reaches a sink (states 0 and 1);
/// and whether no cycle joins reachable pending states. O(states + transitions).
fn pending_graph(table: &Table) -> (Vec<bool>, Vec<bool>, bool) {
    let n = table.state_count();
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut succs: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut reach = vec![false; n];
    let mut queue = VecDeque::from([table.initial()]);
    reach[table.initial() as usize] = true;
    while let Some(s) = queue.pop_front() {
        for (_, t) in table.paths(s) {
            preds[t as usize].push(s);
            succs[s as usize].push(t);
            if !reach[t as usize] {
                reach[t as usize] = true;
                queue.push_back(t);
            }
        }
    }
    let mut decides = vec![false; n];
    let mut stack = vec![0u32, 1];
    decides[0] = true;
    decides[1] = true;
    while let Some(s) = stack.pop() {
        for &p in &preds[s as usize] {
            if !decides[p as usize] {
                decides[p as usize] = true;
                stack.push(p);
            }
        }
    }
    // Kahn's algorithm over the reachable pending states: acyclic iff all get removed.
    let pending = |s: usize| s >= 2 && reach[s];
    let mut indeg = vec![0usize; n];
    for s in (0..n).filter(|&s| pending(s)) {
        for &t in &succs[s] {
            if pending(t as usize) {
                indeg[t as usize] += 1;
            }
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|&s| pending(s) && indeg[s] == 0).collect();
    let mut removed = 0;
    while let Some(s) = ready.pop() {
        removed += 1;
        for &t in &succs[s] {
            let t = t as usize;
            if pending(t) {
                indeg[t] -= 1;
                if indeg[t] == 0 {
                    ready.push(t);
                }
            }
        }
    }
    let acyclic = removed == (0..n).filter(|&s| pending(s)).count();
    (reach, decides, acyclic)
}

/// The key of a compiled table in a [`Compiler`]'s cache: the formula printed in Spot syntax,
/// and the verdict semantics.
pub type TableKey = (String, Semantics);

/// A [`trac_ltl::compiler::TableCompiler`] backed by [`compile`], caching tables by formula
/// text and semantics (parametric instances share their template's table anyway). Thread-safe;
/// the cache can be read and filled from outside ([`Compiler::cached`], [`Compiler::insert`]),
/// e.g. to ship compiled tables to the workers of a distributed audit.
///
/// Tables are compiled within a state budget ([`DEFAULT_MAX_STATES`], or
/// [`Compiler::with_max_states`]); a formula over it fails with [`CompileError::TooLarge`],
/// marked [`trac_ltl::compiler::CompileError::is_too_large`], so the engines monitor it by
/// complete progression instead. Such failures are cached too: asking again costs nothing.
#[derive(Debug)]
pub struct Compiler {
    cache: Mutex<HashMap<TableKey, Arc<Table>>>,
    too_large: Mutex<HashMap<TableKey, trac_ltl::compiler::CompileError>>,
    max_states: usize,
    fallback: BoundedSatOracle,
}

impl Default for Compiler {
    fn default() -> Self {
        Compiler::with_max_states(DEFAULT_MAX_STATES)
    }
}

impl Compiler {
    /// A compiler with an empty cache and the default state budget ([`DEFAULT_MAX_STATES`]).
    pub fn new() -> Compiler {
        Compiler::default()
    }

    /// A compiler with an empty cache that gives up on tables with more than `max_states`
    /// explored states (`usize::MAX`: no budget).
    pub fn with_max_states(max_states: usize) -> Compiler {
        Compiler {
            cache: Mutex::default(),
            too_large: Mutex::default(),
            max_states,
            fallback: BoundedSatOracle {
                check_budget: DEFAULT_CHECK_BUDGET,
            },
        }
    }

    /// The state budget.
    pub fn max_states(&self) -> usize {
        self.max_states
    }

    /// A shared compiler, to put in `trac_runtime::audit::AuditOptions::compiler`.
    pub fn shared() -> Arc<dyn trac_ltl::compiler::TableCompiler> {
        Arc::new(Compiler::new())
    }

    /// The cache, locked. A panic under the lock cannot leave the map half-updated (one
    /// insert), so a poisoned lock is still usable.
    fn cache(&self) -> std::sync::MutexGuard<'_, HashMap<TableKey, Arc<Table>>> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The formulas refused for their size, locked (as [`Compiler::cache`]).
    fn failed(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<TableKey, trac_ltl::compiler::CompileError>> {
        self.too_large.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Number of tables cached.
    pub fn len(&self) -> usize {
        self.cache().len()
    }

    /// Whether no table is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The cached table of `key`, if any.
    pub fn cached(&self, key: &TableKey) -> Option<Arc<Table>> {
        self.cache().get(key).cloned()
    }

    /// Caches `table` as the table of `key`, unless one is cached already (which is kept and
    /// returned).
    pub fn insert(&self, key: TableKey, table: Arc<Table>) -> Arc<Table> {
        self.cache().entry(key).or_insert(table).clone()
    }
}

impl trac_ltl::compiler::TableCompiler for Compiler {
    fn compile(
        &self,
        arena: &Arena,
        formula: Formula,
        semantics: Semantics,
    ) -> Result<Arc<Table>, trac_ltl::compiler::CompileError> {
        let key = (trac_ltl::print(arena, formula), semantics);
        if let Some(t) = self.cached(&key) {
            return Ok(t);
        }
        // Compiled outside the lock: another thread may compile the same table meanwhile; the
        // first one inserted wins, and both are the same table.
        let mut arena = arena.clone();
        let opts = CompileOptions {
            semantics,
            minimize: Minimize::Language,
        };
        if let Some(e) = self.failed().get(&key) {
            return Err(e.clone());
        }
        match compile_within(&mut arena, formula, &opts, self.max_states) {
            Ok(c) => Ok(self.insert(key, Arc::new(c.table))),
            Err(e @ CompileError::TooLarge { .. }) => {
                let e = trac_ltl::compiler::CompileError::too_large(e);
                self.failed().insert(key, e.clone());
                Err(e)
            }
            Err(e) => Err(trac_ltl::compiler::CompileError::new(e)),
        }
    }

    fn oracle(&self) -> Option<&dyn VerdictOracle> {
        Some(&SatOracle)
    }

    fn fallback_oracle(&self) -> Option<&dyn VerdictOracle> {
        Some(&self.fallback)
    }
}

/// The [`VerdictOracle`] of complete progression: one [`SatChecker`] per property (GPVW
/// tableau, SCC emptiness; see [`sat`]). Stateless: the memo lives in each session, and a
/// session's clones (`clone_session`, as every audit session of a plan is) share its LTL3 verdicts.
#[derive(Clone, Copy, Debug, Default)]
pub struct SatOracle;

impl SatOracle {
    /// The oracle, shared, to pass to `trac_runtime::engine::monitor::ProgressionMonitor::with_semantics`.
    pub fn shared() -> Arc<dyn VerdictOracle> {
        Arc::new(SatOracle)
    }
}

impl VerdictOracle for SatOracle {
    fn session(&self, arena: &Arena, property: Formula) -> Box<dyn VerdictSession> {
        Box::new(SatChecker::new(arena, property))
    }
}

/// The work one satisfiability check of the compiled engine's fallback may do
/// ([`BoundedSatOracle`], [`SatChecker::with_check_budget`]: tableau product states times
/// past-time subformulas): a few tenths of a second per check in a release build.
pub const DEFAULT_CHECK_BUDGET: usize = 200_000;

/// [`SatOracle`] with a budget of tableau product states per check
/// ([`SatChecker::with_check_budget`]): sound verdicts that may come late. The oracle of the
/// properties the compiled engine runs by progression because their table is over the state
/// budget ([`Compiler::with_max_states`]), whose tableaux can be as large.
#[derive(Clone, Copy, Debug)]
pub struct BoundedSatOracle {
    /// Product states per check.
    pub check_budget: usize,
}

impl VerdictOracle for BoundedSatOracle {
    fn session(&self, arena: &Arena, property: Formula) -> Box<dyn VerdictSession> {
        Box::new(SatChecker::new(arena, property).with_check_budget(self.check_budget))
    }
}

impl VerdictSession for SatChecker {
    fn initial_bits(&self) -> Box<[bool]> {
        SatChecker::initial_bits(self)
    }

    fn ltl3(&mut self, arena: &mut Arena, f: Formula, bits: &[bool]) -> Option<bool> {
        self.verdict(arena, f, bits)
    }

    fn ltlf(
        &mut self,
        arena: &mut Arena,
        f: Formula,
        bits: &[bool],
        accepted: bool,
    ) -> Option<bool> {
        self.ltlf_verdict(arena, f, bits, accepted)
    }

    fn fresh(&self, arena: &Arena, property: Formula) -> Box<dyn VerdictSession> {
        let mut c = SatChecker::new(arena, property);
        // The give-up count is the property's, kept over restarts (see `with_check_budget`).
        c.over_budget = self.over_budget.clone();
        // The verdicts too, for the same property (a reset); an instance gets its own.
        if c.shared.borrow().property == self.shared.borrow().property {
            c.shared = self.shared.clone();
        }
        Box::new(match self.check_budget {
            Some(b) => c.with_check_budget(b),
            None => c,
        })
    }

    fn clone_session(&self) -> Box<dyn VerdictSession> {
        Box::new(self.clone())
    }
}
