//! Compiled monitor tables and the table monitor ([`TableMonitor`]).
//!
//! A [`Table`] is a deterministic LTL3 (or LTLf) monitor automaton compiled ahead of time by
//! `trac-compile` (or generated as a `static` by a proc macro): reading one trace step costs a
//! walk down one small decision diagram, with no formula manipulation and no allocation.
//!
//! # Format (version 1)
//! All numbers are `u32`. The automaton reads valuations of the table's propositions
//! `0..props` (their names are the first `props` strings).
//!
//! - **References.** A reference `r` with the high bit set (`r & LEAF != 0`, [`LEAF`] = 2^31) is a
//!   *leaf*: the target state `r & !LEAF`. Otherwise `r` is the index of a decision node.
//! - **Decision nodes.** `nodes` is a flat array of triples `(prop, lo, hi)`: test proposition
//!   `prop`; go to reference `lo` if it is false, `hi` if it is true. A child node always has a
//!   larger index than its parent (so every walk ends), and along a path propositions are tested
//!   in increasing order, each at most once (reduced, ordered diagrams: Bryant 1986).
//! - **Main automaton** (`roots`, `nodes`): per state, the reference of its transition diagram.
//!   State 0 is the ⊥ sink (violated), state 1 the ⊤ sink (satisfied), both looping on every
//!   valuation; every other state is pending (?). So "decided" is `state <= 1`.
//! - **Strings.** `strings` is the concatenation of the proposition names, then of one
//!   representative residual formula per main state (Spot syntax); `string_ends[i]` is the end
//!   offset of string `i`.
//! - **Auxiliary automaton** (`aux_roots`, `aux_nodes`, `aux_info`), run alongside the main one
//!   without restarts. Per state, `aux_info = accepting | restart << 1`: `accepting` is the LTLf
//!   verdict of the trace read so far (the end-of-trace evaluation of the last step, `X` weak; for
//!   the initial state, of the empty trace), and `restart` is the main state of the property's
//!   initial formula with the current past-time bits (always `initial` for a property without
//!   past operators). A TRAC_R restart after a violation at step `t` takes step `t`'s transition
//!   from the restart state of the auxiliary state before `t`; if that is decided again, the
//!   monitor starts afresh at the restart state of the auxiliary state after `t`. A monitor
//!   resting in a decided state that restarts (the run from the next position, decided before
//!   it) does not read that run again: the next step goes to the restart state of the
//!   auxiliary state after it (each failing position counts once, see [`crate::monitor`]).
//!
//! - **Main-state acceptance** (optional, LTLf tables): per main state, whether the run that
//!   reached it accepts the trace it read ([`Table::accepting`]), so a TRAC_R monitor can judge
//!   the run since its last restart at the end of a finite trace. Files without it still load.
//!
//! Files ([`TableFile`], RON or JSON) carry the label [`FORMAT`] and [`VERSION`] and spell the
//! strings out; loading checks every reference, state id and proposition index
//! ([`Table::from_parts`]) and rejects a bad table with a message saying what is wrong.
//!
//! The storage is generic: `Table<Vec<u32>, String>` (loaded, compiled) or
//! `Table<&'static [u32], &'static str>` (generated code, [`Table::from_parts_unchecked`] is a
//! `const fn`), like regex-automata's dense DFAs.

use crate::labels::StepInput;
use crate::monitor::{
    Change, Monitor, PastCitation, PastWitness, ResetPolicy, Semantics, Verdict, MAX_EXPLANATION,
};
use crate::parametric::{conjunction, Instantiate};
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, OnceLock};

/// The format label of table files.
pub const FORMAT: &str = "trac-monitor-table";
/// The format version of table files.
pub const VERSION: u32 = 1;
/// The high bit of a reference: set for a leaf (a target state), clear for a decision node.
pub const LEAF: u32 = 1 << 31;
/// The id of the ⊥ (violated) sink.
pub const VIOLATED: u32 = 0;
/// The id of the ⊤ (satisfied) sink.
pub const SATISFIED: u32 = 1;

/// A table that fails the checks of [`Table::from_parts`] or cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableError(pub String);

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid monitor table: {}", self.0)
    }
}

impl std::error::Error for TableError {}

/// The raw arrays of a table (see the module docs for their meaning).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableParts<S, T> {
    /// Whether verdicts are LTL3 (infinite continuations) or LTLf (finite continuations).
    pub semantics: Semantics,
    /// Whether the pending states were minimized.
    pub minimized: bool,
    /// The property, in Spot syntax.
    pub formula: T,
    /// The number of propositions.
    pub props: u32,
    /// Proposition names, then one representative residual per main state, concatenated.
    pub strings: T,
    /// End offset in `strings` of each string (`props + roots.len()` entries).
    pub string_ends: S,
    /// The main automaton's initial state.
    pub initial: u32,
    /// Per main state: the reference of its transition diagram.
    pub roots: S,
    /// The main automaton's decision nodes, as `(prop, lo, hi)` triples.
    pub nodes: S,
    /// The auxiliary automaton's initial state.
    pub aux_initial: u32,
    /// Per auxiliary state: the reference of its transition diagram.
    pub aux_roots: S,
    /// The auxiliary automaton's decision nodes.
    pub aux_nodes: S,
    /// Per auxiliary state: `accepting | restart << 1`.
    pub aux_info: S,
}

/// A compiled monitor automaton (see the module docs).
///
/// Besides its arrays, a table keeps its dense transition rows ([`Table::next_valuation`]),
/// built on first use: equality and the serialized forms ignore them.
#[derive(Clone, Debug)]
pub struct Table<S = Vec<u32>, T = String> {
    parts: TableParts<S, T>,
    /// Dense transition rows, built on first use (`None`: too many propositions).
    rows: OnceLock<Option<StepRows>>,
    /// Optional, per main state: whether the run that reached it accepts the trace it read
    /// (LTLf, `X` weak at the end); see [`Table::with_accepting`].
    accepting: Option<Vec<bool>>,
    /// Per reset policy (`on_violation | on_satisfaction << 1`): the fused step, built on first
    /// use by [`TableMonitor::step_bits`] (`None`: not dense, or too large).
    fused: [OnceLock<Option<Arc<FusedStep>>>; 4],
}

impl<S: PartialEq, T: PartialEq> PartialEq for Table<S, T> {
    fn eq(&self, other: &Self) -> bool {
        self.parts == other.parts && self.accepting == other.accepting
    }
}

impl<S: Eq, T: Eq> Eq for Table<S, T> {}

/// The largest number of propositions for which a table's transitions are stored as dense rows
/// indexed by the whole valuation (2^8 = 256 entries per state).
pub const DENSE_PROPS: usize = 8;

/// The dense transition rows of a table's main and auxiliary automata (internal).
#[derive(Clone, Debug)]
struct StepRows {
    main: Targets,
    aux: Targets,
}

/// Per state `s` and valuation `v` (bit `i` = proposition `i` holds), the successor at index
/// `s << props | v`, in the smallest unsigned integer type that holds every state id.
#[derive(Clone, Debug)]
enum Targets {
    U8(Box<[u8]>),
    U16(Box<[u16]>),
    U32(Box<[u32]>),
}

impl Targets {
    /// The rows of one automaton: `states` states, diagrams `roots` / `nodes`, `props`
    /// propositions (at most [`DENSE_PROPS`]). O(states · 2^props · diagram depth).
    fn build(roots: &[u32], nodes: &[u32], props: usize) -> Targets {
        let width = 1usize << props;
        let all = roots
            .iter()
            .flat_map(|&r| (0..width).map(move |v| walk(r, nodes, |i| v >> i & 1 == 1)));
        match roots.len() {
            n if n <= 1 << 8 => Targets::U8(all.map(|t| t as u8).collect()),
            n if n <= 1 << 16 => Targets::U16(all.map(|t| t as u16).collect()),
            _ => Targets::U32(all.collect()),
        }
    }

    #[inline(always)]
    fn get(&self, i: usize) -> u32 {
        match self {
            Targets::U8(t) => u32::from(t[i]),
            Targets::U16(t) => u32::from(t[i]),
            Targets::U32(t) => t[i],
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Targets::U8(t) => t.len(),
            Targets::U16(t) => 2 * t.len(),
            Targets::U32(t) => 4 * t.len(),
        }
    }
}

/// The serialized form of a table (RON or JSON).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`].
    pub version: u32,
    /// The property, in Spot syntax.
    pub formula: String,
    /// LTL3 or LTLf verdicts.
    pub semantics: Semantics,
    /// Whether the pending states were minimized.
    pub minimized: bool,
    /// Proposition names, by index.
    pub props: Vec<String>,
    /// The main automaton's initial state.
    pub initial: u32,
    /// One representative residual formula per main state.
    pub residuals: Vec<String>,
    /// Per main state: the reference of its transition diagram.
    pub roots: Vec<u32>,
    /// Decision nodes of the main automaton, flat `(prop, lo, hi)` triples.
    pub nodes: Vec<u32>,
    /// The auxiliary automaton.
    pub aux: AuxFile,
    /// Optional (LTLf tables): per main state, whether the run that reached it accepts the
    /// trace it read ([`Table::accepting`]); absent in tables written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepting: Option<Vec<bool>>,
}

/// The auxiliary automaton of a [`TableFile`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuxFile {
    /// Initial state.
    pub initial: u32,
    /// Per state: the reference of its transition diagram.
    pub roots: Vec<u32>,
    /// Decision nodes, flat `(prop, lo, hi)` triples.
    pub nodes: Vec<u32>,
    /// Per state: the LTLf verdict of the trace read so far.
    pub accepting: Vec<bool>,
    /// Per state: the main state a TRAC_R restart starts from.
    pub restart: Vec<u32>,
}

fn check_diagram(
    what: &str,
    roots: &[u32],
    nodes: &[u32],
    props: u32,
    states: u32,
) -> Result<(), TableError> {
    if nodes.len() / 3 * 3 != nodes.len() {
        return Err(TableError(format!(
            "{what}: the node array has {} entries, not a multiple of 3",
            nodes.len()
        )));
    }
    let n_nodes = (nodes.len() / 3) as u64;
    let check_ref = |r: u32, parent: Option<u64>, at: &dyn Fn() -> String| {
        if r & LEAF != 0 {
            let s = r & !LEAF;
            if s >= states {
                return Err(TableError(format!(
                    "{what}: {} leads to state {s}, but there are {states} states",
                    at()
                )));
            }
        } else {
            let n = u64::from(r);
            if n >= n_nodes {
                return Err(TableError(format!(
                    "{what}: {} refers to node {n}, but there are {n_nodes} nodes",
                    at()
                )));
            }
            if let Some(p) = parent {
                if n <= p {
                    return Err(TableError(format!(
                        "{what}: {} refers to node {n}, not after its parent (a cycle?)",
                        at()
                    )));
                }
            }
        }
        Ok(())
    };
    for (s, &r) in roots.iter().enumerate() {
        check_ref(r, None, &|| format!("the root of state {s}"))?;
    }
    for (k, t) in nodes.chunks(3).enumerate() {
        if t[0] >= props {
            return Err(TableError(format!(
                "{what}: node {k} tests proposition {}, but there are {props} propositions",
                t[0]
            )));
        }
        check_ref(t[1], Some(k as u64), &|| {
            format!("the low edge of node {k}")
        })?;
        check_ref(t[2], Some(k as u64), &|| {
            format!("the high edge of node {k}")
        })?;
    }
    Ok(())
}

impl<S: AsRef<[u32]>, T: AsRef<str>> Table<S, T> {
    /// A table from its arrays, after checking every reference, state id, proposition index and
    /// string offset, and the sinks (state 0 loops as ⊥, state 1 as ⊤).
    ///
    /// # Errors
    /// A [`TableError`] naming the first inconsistency found. O(size of the table).
    pub fn from_parts(parts: TableParts<S, T>) -> Result<Self, TableError> {
        let p = &parts;
        let roots = p.roots.as_ref();
        let n = roots.len();
        if n < 2 {
            return Err(TableError(format!(
                "the main automaton has {n} states; it needs at least the two sinks 0 (violated) and 1 (satisfied)"
            )));
        }
        if n as u64 >= u64::from(LEAF) {
            return Err(TableError("too many states".into()));
        }
        if roots[0] != LEAF | VIOLATED || roots[1] != LEAF | SATISFIED {
            return Err(TableError(
                "states 0 and 1 must be the violated and satisfied sinks, looping on every valuation"
                    .into(),
            ));
        }
        let n = n as u32;
        check_diagram("main automaton", roots, p.nodes.as_ref(), p.props, n)?;
        if p.initial >= n {
            return Err(TableError(format!(
                "the initial state is {}, but there are {n} states",
                p.initial
            )));
        }
        let aux_n = p.aux_roots.as_ref().len();
        if aux_n == 0 || aux_n as u64 >= u64::from(LEAF) {
            return Err(TableError(format!(
                "the auxiliary automaton has {aux_n} states"
            )));
        }
        if p.aux_info.as_ref().len() != aux_n {
            return Err(TableError(format!(
                "the auxiliary automaton has {aux_n} states but {} info entries",
                p.aux_info.as_ref().len()
            )));
        }
        check_diagram(
            "auxiliary automaton",
            p.aux_roots.as_ref(),
            p.aux_nodes.as_ref(),
            p.props,
            aux_n as u32,
        )?;
        if p.aux_initial as usize >= aux_n {
            return Err(TableError(format!(
                "the auxiliary initial state is {}, but there are {aux_n} auxiliary states",
                p.aux_initial
            )));
        }
        for (s, &info) in p.aux_info.as_ref().iter().enumerate() {
            if info >> 1 >= n {
                return Err(TableError(format!(
                    "auxiliary state {s} restarts from state {}, but there are {n} states",
                    info >> 1
                )));
            }
        }
        let ends = p.string_ends.as_ref();
        let want = p.props as usize + n as usize;
        if ends.len() != want {
            return Err(TableError(format!(
                "{} string offsets for {} propositions and {n} states",
                ends.len(),
                p.props
            )));
        }
        let strings = p.strings.as_ref();
        let mut start = 0usize;
        for (i, &e) in ends.iter().enumerate() {
            let e = e as usize;
            if e < start || e > strings.len() || !strings.is_char_boundary(e) {
                return Err(TableError(format!("string {i} has a bad end offset {e}")));
            }
            start = e;
        }
        Ok(Table {
            parts,
            rows: OnceLock::new(),
            accepting: None,
            fused: [const { OnceLock::new() }; 4],
        })
    }

    /// A table from its arrays without any check, for generated `static` tables that were checked
    /// when generated. A bad table makes the monitor panic (index out of bounds) or loop; it is
    /// never undefined behaviour.
    pub const fn from_parts_unchecked(parts: TableParts<S, T>) -> Self {
        Table {
            parts,
            rows: OnceLock::new(),
            accepting: None,
            fused: [const { OnceLock::new() }; 4],
        }
    }

    /// The raw arrays.
    pub fn parts(&self) -> &TableParts<S, T> {
        &self.parts
    }

    /// LTL3 or LTLf verdicts.
    pub fn semantics(&self) -> Semantics {
        self.parts.semantics
    }

    /// The property, in Spot syntax.
    pub fn formula(&self) -> &str {
        self.parts.formula.as_ref()
    }

    /// The number of propositions.
    pub fn prop_count(&self) -> usize {
        self.parts.props as usize
    }

    fn string(&self, i: usize) -> &str {
        let ends = self.parts.string_ends.as_ref();
        let start = if i == 0 { 0 } else { ends[i - 1] as usize };
        &self.parts.strings.as_ref()[start..ends[i] as usize]
    }

    /// The name of proposition `i`.
    pub fn prop_name(&self, i: usize) -> &str {
        self.string(i)
    }

    /// The proposition names, by index.
    pub fn prop_names(&self) -> impl Iterator<Item = &str> {
        (0..self.prop_count()).map(|i| self.string(i))
    }

    /// The number of main states (the two sinks included).
    pub fn state_count(&self) -> usize {
        self.parts.roots.as_ref().len()
    }

    /// The number of auxiliary states.
    pub fn aux_state_count(&self) -> usize {
        self.parts.aux_roots.as_ref().len()
    }

    /// The number of decision nodes of the main automaton.
    pub fn node_count(&self) -> usize {
        self.parts.nodes.as_ref().len() / 3
    }

    /// The main initial state.
    pub fn initial(&self) -> u32 {
        self.parts.initial
    }

    /// A representative residual formula of a main state (Spot syntax).
    pub fn residual(&self, state: u32) -> &str {
        self.string(self.prop_count() + state as usize)
    }

    /// The verdict of a main state: ⊥ for 0, ⊤ for 1, ? otherwise.
    pub fn verdict(state: u32) -> Verdict {
        match state {
            VIOLATED => Verdict::Violated,
            SATISFIED => Verdict::Satisfied,
            _ => Verdict::Pending,
        }
    }

    /// The reference of a main state's transition diagram.
    pub fn root(&self, state: u32) -> u32 {
        self.parts.roots.as_ref()[state as usize]
    }

    /// The main successor of `state` when proposition `i` holds iff `holds(i)`. Evaluates one
    /// decision-diagram path: at most one call of `holds` per proposition the state depends on.
    #[inline]
    pub fn next(&self, state: u32, holds: impl Fn(u32) -> bool) -> u32 {
        walk(
            self.parts.roots.as_ref()[state as usize],
            self.parts.nodes.as_ref(),
            holds,
        )
    }

    /// The auxiliary successor of `aux`.
    #[inline]
    pub fn aux_next(&self, aux: u32, holds: impl Fn(u32) -> bool) -> u32 {
        walk(
            self.parts.aux_roots.as_ref()[aux as usize],
            self.parts.aux_nodes.as_ref(),
            holds,
        )
    }

    /// The dense rows, built on first use; `None` for a table of more than [`DENSE_PROPS`]
    /// propositions.
    #[inline(always)]
    fn rows(&self) -> Option<&StepRows> {
        match self.rows.get() {
            Some(r) => r.as_ref(),
            None => self.init_rows(),
        }
    }

    #[cold]
    #[inline(never)]
    fn init_rows(&self) -> Option<&StepRows> {
        self.rows
            .get_or_init(|| {
                let n = self.prop_count();
                (n <= DENSE_PROPS).then(|| StepRows {
                    main: Targets::build(self.parts.roots.as_ref(), self.parts.nodes.as_ref(), n),
                    aux: Targets::build(
                        self.parts.aux_roots.as_ref(),
                        self.parts.aux_nodes.as_ref(),
                        n,
                    ),
                })
            })
            .as_ref()
    }

    /// Whether this table steps by dense rows ([`Table::next_valuation`] is one load): at most
    /// [`DENSE_PROPS`] propositions.
    pub fn is_dense(&self) -> bool {
        self.rows().is_some()
    }

    /// Bytes taken by the dense rows (0 for a table that is not dense; builds them on first
    /// call): `2^props` entries per main and auxiliary state, each of 1, 2 or 4 bytes (the
    /// smallest type holding every state id).
    pub fn dense_bytes(&self) -> usize {
        self.rows().map_or(0, |r| r.main.bytes() + r.aux.bytes())
    }

    /// The fused step of a dense table under `policy`: per (main state, auxiliary state,
    /// valuation), at index `(state · aux_states + aux) << props | v`, the main state after the
    /// step (bits 0..14), the auxiliary state (bits 14..28) and the verdict reported (bits
    /// 28..30: 0 none, 1 violated, 2 satisfied), as `transition` computes them. Built on first
    /// use, O(states · aux states · 2^props); `None` for a table that is not dense or whose
    /// array would exceed 2^20 entries, and for an LTLf table (its monitors track the run since
    /// the last restart, `ltlf_since_restart`, which the fused entry does not hold).
    /// (`FusedStep::entries`; its `next` and `event` hold the same step for [`FusedMonitor`].)
    fn fused_step(&self, policy: ResetPolicy) -> Option<&Arc<FusedStep>> {
        if self.semantics() == Semantics::Ltlf {
            return None;
        }
        let k = usize::from(policy.on_violation) | usize::from(policy.on_satisfaction) << 1;
        match self.fused[k].get() {
            Some(f) => f.as_ref(),
            None => self.init_fused(policy, k),
        }
    }

    #[cold]
    #[inline(never)]
    fn init_fused(&self, policy: ResetPolicy, k: usize) -> Option<&Arc<FusedStep>> {
        self.fused[k]
            .get_or_init(|| {
                self.rows()?;
                let (n, a, props) = (
                    self.state_count(),
                    self.aux_state_count(),
                    self.prop_count(),
                );
                if n > 1 << FUSED_STATE_BITS
                    || a > 1 << FUSED_STATE_BITS
                    || (n * a) << props > FUSED_MAX
                {
                    return None;
                }
                let len = (n * a) << props;
                let mut entries = Vec::with_capacity(len);
                let mut next = Vec::with_capacity(len);
                let mut event = Vec::with_capacity(len);
                for s in 0..n as u32 {
                    for x in 0..a as u32 {
                        for v in 0..1u64 << props {
                            let (s2, x2, st) = transition(self, policy, s, x, false, Bits(v));
                            let ev = match st.event {
                                None => 0,
                                Some(Verdict::Violated) => 1,
                                Some(Verdict::Satisfied) => 2,
                                Some(Verdict::Pending) => 3,
                            };
                            debug_assert_eq!(fused_event(ev), st.event);
                            entries
                                .push(s2 | x2 << FUSED_STATE_BITS | ev << (2 * FUSED_STATE_BITS));
                            next.push((s2 * a as u32 + x2) << props);
                            event.push(ev as u8);
                        }
                    }
                }
                Some(Arc::new(FusedStep {
                    entries: entries.into_boxed_slice(),
                    next: next.into_boxed_slice(),
                    event: event.into_boxed_slice(),
                    props: props as u32,
                    aux_states: a as u32,
                }))
            })
            .as_ref()
    }

    /// The fused step of this table under `policy` packed for generated code: per index `i`
    /// as in [`FusedMonitor`] (`(state · aux_states + aux) << props | v`), one `u64` whose low
    /// 32 bits are the successor's row index (`next`, as [`FusedMonitor::step`] reads it) and
    /// whose high 32 bits are the entry [`TableMonitor::apply_fused_entry`] decodes (next main
    /// and auxiliary states, verdict). With the table's proposition count and auxiliary state
    /// count. `None` where [`FusedMonitor::new`] is (not dense, too large, LTLf).
    /// O(states · aux states · 2^props), built from the same transition function as
    /// [`Monitor::step`].
    pub fn fused_packed(&self, policy: ResetPolicy) -> Option<FusedPacked> {
        let f = self.fused_step(policy)?;
        let steps = f
            .entries
            .iter()
            .zip(f.next.iter())
            .map(|(&e, &n)| u64::from(n) | u64::from(e) << 32)
            .collect();
        Some(FusedPacked {
            steps,
            props: f.props,
            aux_states: f.aux_states,
        })
    }

    /// The main successor of `state` under the valuation `v` of the table's propositions
    /// (proposition `i` holds iff bit `i` of `v` is set; bits from [`Table::prop_count`] on are
    /// ignored). Equal to [`Table::next`] with that valuation. For a table of at most
    /// [`DENSE_PROPS`] propositions, one load from a dense row (`2^props` entries per state,
    /// built on first use: O(states · 2^props)); otherwise a decision-diagram walk.
    #[inline(always)]
    pub fn next_valuation(&self, state: u32, v: u64) -> u32 {
        match self.rows() {
            Some(r) => r.main.get(dense_index(state, v, self.parts.props)),
            None => self.next(state, |i| i < 64 && v >> i & 1 == 1),
        }
    }

    /// The auxiliary successor of `aux` under the valuation `v` (as [`Table::next_valuation`]).
    #[inline(always)]
    pub fn aux_next_valuation(&self, aux: u32, v: u64) -> u32 {
        match self.rows() {
            Some(r) => r.aux.get(dense_index(aux, v, self.parts.props)),
            None => self.aux_next(aux, |i| i < 64 && v >> i & 1 == 1),
        }
    }

    /// The auxiliary initial state.
    pub fn aux_initial(&self) -> u32 {
        self.parts.aux_initial
    }

    /// Whether the trace that led to auxiliary state `aux` satisfies the property as a finite
    /// trace (LTLf, `X` weak).
    pub fn aux_accepting(&self, aux: u32) -> bool {
        self.parts.aux_info.as_ref()[aux as usize] & 1 == 1
    }

    /// The main state a TRAC_R restart starts from in auxiliary state `aux`.
    pub fn aux_restart(&self, aux: u32) -> u32 {
        self.parts.aux_info.as_ref()[aux as usize] >> 1
    }

    /// Whether the run that reached main state `state` accepts the trace it read (LTLf, `X`
    /// weak at the end: the end-of-trace evaluation of the previous residual on the last
    /// step), when the table knows it ([`Table::with_accepting`]; `None` otherwise).
    pub fn accepting(&self, state: u32) -> Option<bool> {
        self.accepting.as_ref()?.get(state as usize).copied()
    }

    /// This table with the LTLf acceptance of each main state (`accepting[s]` for state `s`),
    /// as `trac-compile` computes it for LTLf tables whose minimization kept it a function of
    /// the state. It lets a TRAC_R monitor judge the run since its last restart at the end of a
    /// finite trace ([`Monitor::ltlf_since_restart`]).
    ///
    /// # Errors
    /// A length other than the number of main states.
    pub fn with_accepting(mut self, accepting: Vec<bool>) -> Result<Self, TableError> {
        if accepting.len() != self.state_count() {
            return Err(TableError(format!(
                "{} acceptance flags for {} states",
                accepting.len(),
                self.state_count()
            )));
        }
        self.accepting = Some(accepting);
        Ok(self)
    }

    /// The main transitions of `state` as `(constraints, target)` pairs, one per diagram path:
    /// constraints are `(prop, value)` in increasing prop order. For exports and tests;
    /// exponential only in the diagram's depth.
    pub fn paths(&self, state: u32) -> Vec<(Vec<(u32, bool)>, u32)> {
        let mut out = Vec::new();
        let mut stack = vec![(self.root(state), Vec::new())];
        let nodes = self.parts.nodes.as_ref();
        while let Some((r, path)) = stack.pop() {
            if r & LEAF != 0 {
                out.push((path, r & !LEAF));
                continue;
            }
            let i = 3 * r as usize;
            let mut lo = path.clone();
            lo.push((nodes[i], false));
            let mut hi = path;
            hi.push((nodes[i], true));
            stack.push((nodes[i + 2], hi));
            stack.push((nodes[i + 1], lo));
        }
        out
    }

    /// An owned copy.
    pub fn to_owned_table(&self) -> Table {
        Table {
            parts: TableParts {
                semantics: self.parts.semantics,
                minimized: self.parts.minimized,
                formula: self.formula().to_string(),
                props: self.parts.props,
                strings: self.parts.strings.as_ref().to_string(),
                string_ends: self.parts.string_ends.as_ref().to_vec(),
                initial: self.parts.initial,
                roots: self.parts.roots.as_ref().to_vec(),
                nodes: self.parts.nodes.as_ref().to_vec(),
                aux_initial: self.parts.aux_initial,
                aux_roots: self.parts.aux_roots.as_ref().to_vec(),
                aux_nodes: self.parts.aux_nodes.as_ref().to_vec(),
                aux_info: self.parts.aux_info.as_ref().to_vec(),
            },
            rows: OnceLock::new(),
            accepting: self.accepting.clone(),
            fused: [const { OnceLock::new() }; 4],
        }
    }

    /// The serializable form.
    pub fn to_file(&self) -> TableFile {
        let info = self.parts.aux_info.as_ref();
        TableFile {
            format: FORMAT.to_string(),
            version: VERSION,
            formula: self.formula().to_string(),
            semantics: self.parts.semantics,
            minimized: self.parts.minimized,
            props: self.prop_names().map(str::to_string).collect(),
            initial: self.parts.initial,
            residuals: (0..self.state_count() as u32)
                .map(|s| self.residual(s).to_string())
                .collect(),
            roots: self.parts.roots.as_ref().to_vec(),
            nodes: self.parts.nodes.as_ref().to_vec(),
            aux: AuxFile {
                initial: self.parts.aux_initial,
                roots: self.parts.aux_roots.as_ref().to_vec(),
                nodes: self.parts.aux_nodes.as_ref().to_vec(),
                accepting: info.iter().map(|&i| i & 1 == 1).collect(),
                restart: info.iter().map(|&i| i >> 1).collect(),
            },
            accepting: self.accepting.clone(),
        }
    }

    /// The table as pretty-printed JSON (feature `formats`).
    #[cfg(feature = "formats")]
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.to_file()).expect("tables serialize")
    }

    /// The table as pretty-printed RON (feature `formats`).
    #[cfg(feature = "formats")]
    pub fn to_ron(&self) -> String {
        let cfg = ron::ser::PrettyConfig::default().compact_arrays(true);
        ron::ser::to_string_pretty(&self.to_file(), cfg).expect("tables serialize")
    }
}

/// Index of `(state, v)` in dense rows of `props` propositions (`props` ≤ [`DENSE_PROPS`]).
#[inline(always)]
fn dense_index(state: u32, v: u64, props: u32) -> usize {
    ((state as usize) << props) | (v as usize & ((1usize << props) - 1))
}

#[inline]
fn walk(mut r: u32, nodes: &[u32], holds: impl Fn(u32) -> bool) -> u32 {
    while r & LEAF == 0 {
        let i = 3 * r as usize;
        r = if holds(nodes[i]) {
            nodes[i + 2]
        } else {
            nodes[i + 1]
        };
    }
    r & !LEAF
}

impl Table {
    /// A table from its serialized form, checked.
    ///
    /// # Errors
    /// A wrong format label or version, mismatched array lengths, or any inconsistency found
    /// by [`Table::from_parts`].
    pub fn from_file(file: TableFile) -> Result<Table, TableError> {
        if file.format != FORMAT {
            return Err(TableError(format!(
                "format `{}`, expected `{FORMAT}`",
                file.format
            )));
        }
        if file.version != VERSION {
            return Err(TableError(format!(
                "version {}, this build reads version {VERSION}",
                file.version
            )));
        }
        if file.residuals.len() != file.roots.len() {
            return Err(TableError(format!(
                "{} residuals for {} states",
                file.residuals.len(),
                file.roots.len()
            )));
        }
        let aux = &file.aux;
        if aux.accepting.len() != aux.roots.len() || aux.restart.len() != aux.roots.len() {
            return Err(TableError(format!(
                "the auxiliary automaton has {} states but {} accepting flags and {} restart states",
                aux.roots.len(),
                aux.accepting.len(),
                aux.restart.len()
            )));
        }
        if aux.restart.iter().any(|&r| r >= LEAF) {
            return Err(TableError("a restart state is out of range".into()));
        }
        let mut strings = String::new();
        let mut ends = Vec::new();
        for s in file.props.iter().chain(file.residuals.iter()) {
            strings.push_str(s);
            ends.push(
                u32::try_from(strings.len()).map_err(|_| TableError("strings too long".into()))?,
            );
        }
        let props = u32::try_from(file.props.len())
            .map_err(|_| TableError("too many propositions".into()))?;
        let accepting = file.accepting;
        let table = Table::from_parts(TableParts {
            semantics: file.semantics,
            minimized: file.minimized,
            formula: file.formula,
            props,
            strings,
            string_ends: ends,
            initial: file.initial,
            roots: file.roots,
            nodes: file.nodes,
            aux_initial: aux.initial,
            aux_roots: aux.roots.clone(),
            aux_nodes: aux.nodes.clone(),
            aux_info: aux
                .accepting
                .iter()
                .zip(aux.restart.iter())
                .map(|(&a, &r)| u32::from(a) | r << 1)
                .collect(),
        })?;
        match accepting {
            Some(a) => table.with_accepting(a),
            None => Ok(table),
        }
    }

    /// Reads a table from JSON (feature `formats`).
    ///
    /// # Errors
    /// Malformed JSON or a table rejected by [`Table::from_file`].
    #[cfg(feature = "formats")]
    pub fn from_json(src: &str) -> Result<Table, TableError> {
        let file: TableFile =
            serde_json::from_str(src).map_err(|e| TableError(format!("JSON: {e}")))?;
        Table::from_file(file)
    }

    /// Reads a table from RON (feature `formats`).
    ///
    /// # Errors
    /// Malformed RON or a table rejected by [`Table::from_file`].
    #[cfg(feature = "formats")]
    pub fn from_ron(src: &str) -> Result<Table, TableError> {
        let file: TableFile = ron::from_str(src).map_err(|e| TableError(format!("RON: {e}")))?;
        Table::from_file(file)
    }
}

/// A monitor running a compiled [`Table`]: TRAC / TRAC_R with the same semantics, witnesses and
/// LTLf verdict as `trac_runtime::ProgressionMonitor` (restart after a violation at step `t` from the
/// initial formula at step `t`, at most one verdict per step), with complete verdicts.
///
/// Per step: one diagram walk in the main automaton and one in the auxiliary one (two when a
/// TRAC_R restart happens); no allocation on the fast paths ([`TableMonitor::step_bits`],
/// [`TableMonitor::step_index`]); [`Monitor::step`] allocates only to record witness entries
/// when the state changes: one compact entry (step, state, propositions held as bits, shared
/// text), turned into [`Change`]s only when a witness or explanation is read. The windows are
/// bounded: at most [`MAX_EXPLANATION`] entries each. The residual formulas shown in witnesses are the states'
/// representatives: with trac-compile's default minimization (by language), a formula with the
/// same models as the one progression would show; with verdict-only minimization, one with the
/// same verdicts after every continuation.
#[derive(Clone, Debug)]
pub struct TableMonitor<S = Vec<u32>, T = String> {
    table: Arc<Table<S, T>>,
    /// Per proposition: the label that makes it hold (renamed in parametric instances).
    labels: Arc<[String]>,
    /// `(var, value)` of a parametric instance: residual strings are instantiated when shown.
    instance: Option<(String, String)>,
    policy: ResetPolicy,
    state: u32,
    aux: u32,
    verdict: Verdict,
    steps: usize,
    explanation: Window,
    dropped: usize,
    witness: Window,
    /// Parametric templates: monitors of the formula instantiated with the values whose
    /// instantiation makes two propositions one (see [`TableMonitor::with_shadows`]), run from
    /// the first step by [`Monitor::step`].
    shadows: Vec<(String, TableMonitor<S, T>)>,
    /// A shadow that became an instance in a decided state while the template was pending: its
    /// verdict is reported at its first step, as a progression instance would.
    announce: bool,
    /// Instantiated residual strings of a parametric instance, by state (parsing and printing
    /// them at every change was a tenth of the audit's time).
    residual_cache: HashMap<u32, Arc<str>>,
    /// How a residual string is instantiated for a parametric instance (see
    /// [`TableMonitor::with_renamer`]).
    renamer: RenameResidual,
    /// The current run has read no step yet (it starts at the next position).
    run_empty: bool,
    /// The current run started at the first position (no restart so far).
    first_run: bool,
    /// The side evaluator of the past-time subformulas, for properties that have some
    /// ([`TableMonitor::with_past`]).
    past: Option<Box<dyn PastWitness>>,
    /// The past-time citations of the last verdict.
    past_cited: Vec<PastCitation>,
    /// [`Monitor::step`] records witness entries (see [`TableMonitor::set_witnesses`]).
    witnesses: bool,
    /// The table's fused step under `policy`, looked up at the first [`TableMonitor::step_bits`]
    /// (`None` inside: the table has none, or is an LTLf table).
    fused: OnceLock<Option<Arc<FusedStep>>>,
}

/// The run state of a [`TableMonitor`] ([`TableMonitor::run_state`]): what a monitor that
/// records no witness, citation or instance holds besides its table. 24 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunState {
    state: u32,
    aux: u32,
    steps: usize,
    verdict: Verdict,
    run_empty: bool,
    first_run: bool,
    announce: bool,
}

/// How a table monitor writes a residual formula (Spot syntax) of its table for a parametric
/// instance: `rename(residual, var, value)` replaces the propositions `base(var)` by
/// `base(value)`. trac-core has no parser, so the default ([`rename_residual_text`]) works on
/// the text; `trac-runtime` installs one that parses, instantiates and prints the formula.
pub type RenameResidual = fn(&str, &str, &str) -> String;

/// The default [`RenameResidual`]: every `(var)` of the residual's text becomes `(value)`.
/// Several parameters and variables as [`crate::names::instantiate_name`] reads them.
pub fn rename_residual_text(residual: &str, var: &str, value: &str) -> String {
    crate::names::instantiate_text(residual, var, value)
}

/// One recorded witness entry (internal): the step, the main state after it and the
/// propositions that held, by index; rendered as a [`Change`] when read.
#[derive(Clone, Debug)]
enum Entry {
    /// As recorded by this monitor (its labels and residuals render it).
    Compact {
        step: usize,
        state: u32,
        /// Propositions `0..64` that held, as bits.
        held: u64,
        /// Propositions from 64 on that held (empty for nearly every property).
        held_more: Vec<u32>,
        /// The step's text, shared by the monitors that record the same step.
        text: Arc<str>,
        /// The residual as shown, for a parametric instance (cached instantiated string).
        residual: Option<Arc<str>>,
    },
    /// Rendered already: entries a parametric instance inherited from its template, whose
    /// labels and residuals were the template's.
    Rendered(Change),
}

/// A bounded window of witness entries and, once read, their rendering (internal). A ring
/// buffer: when it holds [`MAX_EXPLANATION`] entries, recording one more drops the oldest in
/// O(1) (a `Vec` moved the other 31 entries at every such step: a tenth of an audit's time when
/// nearly every step changes some monitor's state).
#[derive(Debug, Default)]
struct Window {
    entries: VecDeque<Entry>,
    view: OnceLock<Vec<Change>>,
}

impl Clone for Window {
    fn clone(&self) -> Self {
        // The common case when a fresh auditor is cloned per session: nothing to copy.
        if self.entries.is_empty() && self.view.get().is_none() {
            return Window::default();
        }
        Window {
            entries: self.entries.clone(),
            view: self.view.clone(),
        }
    }
}

impl Window {
    fn len(&self) -> usize {
        self.entries.len()
    }

    fn clear(&mut self) {
        if !self.entries.is_empty() {
            self.entries.clear();
        }
        if self.view.get().is_some() {
            self.view = OnceLock::new();
        }
    }

    fn push(&mut self, e: Entry) {
        self.entries.push_back(e);
        if self.view.get().is_some() {
            self.view = OnceLock::new();
        }
    }

    fn remove_first(&mut self) {
        self.entries.pop_front();
        if self.view.get().is_some() {
            self.view = OnceLock::new();
        }
    }

    fn copy_from(&mut self, other: &Window) {
        self.entries.clone_from(&other.entries);
        self.view = other.view.clone();
    }

    /// Takes `other`'s entries and rendering, leaving `other` empty (its buffer is reused: the
    /// two windows trade allocations).
    fn take_from(&mut self, other: &mut Window) {
        std::mem::swap(self, other);
        other.clear();
    }
}

thread_local! {
    /// The text of the last step recorded on this thread: every monitor that records the same
    /// step shares one allocation (compared by content, so never a wrong text).
    static LAST_TEXT: RefCell<Option<Arc<str>>> = const { RefCell::new(None) };
}

/// `text` as a shared string, reusing the last one recorded on this thread if equal: the
/// witness entries of every monitor (and past-time citer) that records the same step share one
/// allocation. O(|text|) for the comparison.
pub fn shared_text(text: &str) -> Arc<str> {
    LAST_TEXT.with(|last| {
        let mut last = last.borrow_mut();
        match &*last {
            Some(t) if &**t == text => t.clone(),
            _ => {
                let t: Arc<str> = Arc::from(text);
                *last = Some(t.clone());
                t
            }
        }
    })
}

/// How one step's valuation is read (internal): by a predicate on proposition indices (a
/// decision-diagram walk) or as bits (dense rows).
trait Valuation: Copy {
    fn next<S: AsRef<[u32]>, T: AsRef<str>>(self, t: &Table<S, T>, state: u32) -> u32;
    fn aux_next<S: AsRef<[u32]>, T: AsRef<str>>(self, t: &Table<S, T>, aux: u32) -> u32;
}

/// A valuation read by a predicate: `holds(i)`.
#[derive(Clone, Copy)]
struct Pred<F>(F);

impl<F: Fn(u32) -> bool + Copy> Valuation for Pred<F> {
    #[inline]
    fn next<S: AsRef<[u32]>, T: AsRef<str>>(self, t: &Table<S, T>, state: u32) -> u32 {
        t.next(state, self.0)
    }
    #[inline]
    fn aux_next<S: AsRef<[u32]>, T: AsRef<str>>(self, t: &Table<S, T>, aux: u32) -> u32 {
        t.aux_next(aux, self.0)
    }
}

/// A valuation as bits of the table's propositions (at most 64).
#[derive(Clone, Copy)]
struct Bits(u64);

impl Valuation for Bits {
    #[inline(always)]
    fn next<S: AsRef<[u32]>, T: AsRef<str>>(self, t: &Table<S, T>, state: u32) -> u32 {
        t.next_valuation(state, self.0)
    }
    #[inline(always)]
    fn aux_next<S: AsRef<[u32]>, T: AsRef<str>>(self, t: &Table<S, T>, aux: u32) -> u32 {
        t.aux_next_valuation(aux, self.0)
    }
}

/// The bits `0..n` set (all 64 from `n` = 64 on).
#[inline]
fn low_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// Whether `policy` restarts after verdict `v`.
#[inline(always)]
fn restarts_with(policy: ResetPolicy, v: Verdict) -> bool {
    match v {
        Verdict::Violated => policy.on_violation,
        Verdict::Satisfied => policy.on_satisfaction,
        Verdict::Pending => false,
    }
}

/// One step of a table monitor (TRAC / TRAC_R), as a function: from main state `before` and
/// auxiliary state `aux` (and `announce`, see `TableMonitor::instantiate`), the main and
/// auxiliary states after the step and what the step did.
#[inline(always)]
fn transition<S: AsRef<[u32]>, T: AsRef<str>>(
    t: &Table<S, T>,
    policy: ResetPolicy,
    before: u32,
    aux: u32,
    announce: bool,
    holds: impl Valuation,
) -> (u32, u32, Stepped) {
    if restarts_with(policy, Table::<S, T>::verdict(before)) {
        // Each failing position counts once (see `crate::monitor`): a monitor resting in a
        // decided state that restarts holds a run from the next position whose verdict was
        // known before that position, and already reported (at step 0, or at a gap step)
        // or merged into the verdict of the step that knew it. It is not read again: the
        // next run starts at the next position, with this step in its history, and its
        // verdict, if already known, is this step's.
        let aux = holds.aux_next(t, aux);
        let state = t.aux_restart(aux);
        let reached = Table::<S, T>::verdict(state);
        let event = if announce {
            Some(Table::<S, T>::verdict(before))
        } else {
            (state <= SATISFIED).then_some(reached)
        };
        let st = Stepped {
            before,
            after: state,
            event,
            restarted: false,
            gap: true,
            afresh: true,
        };
        return (state, aux, st);
    }
    let after = holds.next(t, before);
    let mut event = None;
    let mut restarted = false;
    let mut state = after;
    if after <= SATISFIED {
        let reached = Table::<S, T>::verdict(after);
        let restart = restarts_with(policy, reached);
        if before > SATISFIED || restart || announce {
            event = Some(reached);
        }
        if restart {
            restarted = true;
            state = holds.next(t, t.aux_restart(aux));
        }
    }
    let aux = holds.aux_next(t, aux);
    let afresh = restarted && state <= SATISFIED;
    if afresh {
        // Decided again at the same step: at most one verdict per step, start afresh from
        // the initial formula (with the current past bits) at the next position. If that
        // run is decided already, it is the same failure, known at this same step: merged.
        state = t.aux_restart(aux);
    }
    let st = Stepped {
        before,
        after,
        event,
        restarted,
        gap: false,
        afresh,
    };
    (state, aux, st)
}

/// The fused step of a dense table under one reset policy (internal; see `Table::fused_step`), in
/// two encodings of the same transition function: `entries` (next main and auxiliary states
/// and the verdict in one `u32`, read by [`TableMonitor::step_bits`]) and `next` / `event`
/// (read by [`FusedMonitor::step`]).
#[derive(Debug)]
struct FusedStep {
    /// Per `(state · aux_states + aux) << props | v`: as documented at `Table::fused_step`.
    entries: Box<[u32]>,
    /// Per index as in `entries`: the index of the successor's row, `(state' · aux_states +
    /// aux') << props`, so that the next step's index is `next[i] + v` (one add, no decoding).
    next: Box<[u32]>,
    /// Per index: the verdict reported (0 none, 1 violated, 2 satisfied, 3 pending).
    event: Box<[u8]>,
    /// Propositions of the table.
    props: u32,
    /// Auxiliary states of the table.
    aux_states: u32,
}

/// The verdict reported, from its code in a fused step (0 none, 1 violated, 2 satisfied,
/// 3 pending; see `Table::fused_step`).
#[inline]
fn fused_event(code: u32) -> Option<Verdict> {
    match code {
        0 => None,
        1 => Some(Verdict::Violated),
        2 => Some(Verdict::Satisfied),
        _ => Some(Verdict::Pending),
    }
}

/// Bits of a main or auxiliary state in a fused entry (see `Table::fused_step`).
const FUSED_STATE_BITS: u32 = 14;
/// The largest fused array, in entries (4 MiB).
const FUSED_MAX: usize = 1 << 20;

/// What one step did (internal).
struct Stepped {
    before: u32,
    after: u32,
    event: Option<Verdict>,
    restarted: bool,
    /// The step skipped a run decided before its position (see `TableMonitor::advance`).
    gap: bool,
    /// The run that goes on starts at the next position (it read nothing yet): after a gap, or
    /// a restart decided again at the same step.
    afresh: bool,
}

impl<S: AsRef<[u32]>, T: AsRef<str>> TableMonitor<S, T> {
    /// A monitor running `table` under `policy`.
    pub fn new(table: Arc<Table<S, T>>, policy: ResetPolicy) -> Self {
        let labels: Arc<[String]> = table.prop_names().map(str::to_string).collect();
        let state = table.initial();
        let aux = table.aux_initial();
        TableMonitor {
            table,
            labels,
            instance: None,
            policy,
            state,
            aux,
            verdict: Table::<S, T>::verdict(state),
            steps: 0,
            explanation: Window::default(),
            dropped: 0,
            witness: Window::default(),
            shadows: Vec::new(),
            announce: false,
            residual_cache: HashMap::new(),
            renamer: rename_residual_text,
            run_empty: true,
            first_run: true,
            past: None,
            past_cited: Vec::new(),
            witnesses: true,
            fused: OnceLock::new(),
        }
    }

    /// Whether [`Monitor::step`] and [`TableMonitor::step_valuation`] record witness entries
    /// and past-time citations (default `true`). Off, the monitor reaches the same states and
    /// verdicts, and its witnesses, explanations and citations stay empty: for reports that
    /// print only counts (`trac audit --summary`), where recording entries at every state change
    /// would be most of a step's cost. Shadows of a parametric template follow the setting. Set
    /// it before the first step (the past-time evaluator is not stepped while it is off).
    pub fn set_witnesses(&mut self, on: bool) {
        self.witnesses = on;
        for (_, m) in &mut self.shadows {
            m.set_witnesses(on);
        }
        if !on {
            self.explanation.clear();
            self.witness.clear();
            self.past_cited.clear();
        }
    }

    /// This monitor with `past` explaining its verdicts by the steps that gave its past-time
    /// subformulas their values ([`Monitor::past_citations`]); stepped by [`Monitor::step`]
    /// only (the fast paths [`TableMonitor::step_bits`] / [`TableMonitor::step_index`] record
    /// no witnesses). Give it only to properties with past-time operators.
    pub fn with_past(mut self, past: Box<dyn PastWitness>) -> Self {
        self.past = Some(past);
        self
    }

    /// Whether a [`PastWitness`] explains this monitor's verdicts ([`TableMonitor::with_past`]).
    pub fn has_past(&self) -> bool {
        self.past.is_some()
    }

    /// The monitor's whole state when it is nothing but its run state ([`RunState`]: main and
    /// auxiliary states, verdict, steps, run flags): `None` when it also holds witness entries,
    /// past-time citations or a past-time evaluator, shadows, or a parametric instance's value.
    /// A monitor of the same table and policy, otherwise fresh, given this state by
    /// [`TableMonitor::set_run_state`] is then indistinguishable from this one (compacting the
    /// monitors of idle sessions; see `trac_runtime::audit::driver`). O(1).
    pub fn run_state(&self) -> Option<RunState> {
        let bare = self.explanation.len() == 0
            && self.witness.len() == 0
            && self.dropped == 0
            && self.shadows.is_empty()
            && self.instance.is_none()
            && self.past.is_none()
            && self.past_cited.is_empty();
        bare.then_some(RunState {
            state: self.state,
            aux: self.aux,
            steps: self.steps,
            verdict: self.verdict,
            run_empty: self.run_empty,
            first_run: self.first_run,
            announce: self.announce,
        })
    }

    /// Gives this monitor the run state `s` taken from a monitor of the same table and policy by
    /// [`TableMonitor::run_state`] (call it on a fresh monitor: witness windows and citations
    /// are left as they are). O(1).
    pub fn set_run_state(&mut self, s: RunState) {
        self.state = s.state;
        self.aux = s.aux;
        self.steps = s.steps;
        self.verdict = s.verdict;
        self.run_empty = s.run_empty;
        self.first_run = s.first_run;
        self.announce = s.announce;
    }

    /// This monitor with `renamer` writing the residuals of its parametric instances (kept by
    /// [`TableMonitor::instantiate`] and by the shadows given afterwards is not: give each its
    /// own). The default is [`rename_residual_text`].
    pub fn with_renamer(mut self, renamer: RenameResidual) -> Self {
        self.renamer = renamer;
        self
    }

    /// A parametric template with *shadows*: for each value `v` in `shadows`, a monitor of the
    /// formula instantiated with `v`, compiled separately. Renaming propositions (what
    /// [`TableMonitor::instantiate`] does) is exact only when it keeps them distinct: with
    /// `forall x: G(go(x) -> go(hall) | go(kitchen))`, the value `hall` makes `go(x)` and
    /// `go(hall)` one proposition, and the instantiated formula is valid while the template is
    /// not. Such values are the constants of the formula's parametric propositions; their shadows
    /// run from the first step (stepped by [`Monitor::step`] only) and become the instances.
    pub fn with_shadows(mut self, shadows: Vec<(String, TableMonitor<S, T>)>) -> Self {
        self.shadows = shadows;
        self
    }

    /// For a parametric template: the index of the shadow of `value` (its position in
    /// [`TableMonitor::with_shadows`]'s list), if `value` has one.
    pub fn shadow_index(&self, value: &str) -> Option<usize> {
        self.shadows.iter().position(|(v, _)| v == value)
    }

    /// For a parametric template: steps every shadow by a bitset, as
    /// [`TableMonitor::step_bits`] (shadow `k` reads `bits(k)`; [`Monitor::step`] steps them
    /// from labels). No allocation.
    pub fn step_shadows_bits<B: AsRef<[u64]>>(&mut self, bits: impl Fn(usize) -> B) {
        for (k, (_, m)) in self.shadows.iter_mut().enumerate() {
            m.step_bits(bits(k).as_ref());
        }
    }

    /// For a parametric template: the LTL3 verdict of every value not seen yet (`seen(v)`
    /// tells whether `v` was seen): the conjunction of this monitor's verdict (values not
    /// written in the formula) and of its shadows' for values not seen yet.
    pub fn unseen_verdict(&self, seen: &dyn Fn(&str) -> bool) -> Verdict {
        conjunction(
            std::iter::once(self.verdict).chain(
                self.shadows
                    .iter()
                    .filter(|(v, _)| !seen(v))
                    .map(|(_, m)| m.verdict),
            ),
        )
    }

    /// For a parametric template: the LTLf verdict of every value not seen yet (see
    /// [`TableMonitor::unseen_verdict`]).
    pub fn unseen_ltlf(&self, seen: &dyn Fn(&str) -> bool) -> Verdict {
        conjunction(
            std::iter::once(self.ltlf()).chain(
                self.shadows
                    .iter()
                    .filter(|(v, _)| !seen(v))
                    .map(|(_, m)| m.ltlf()),
            ),
        )
    }

    /// A plain TRAC monitor (no reset) of the same table that starts at the next position,
    /// with this monitor's history (its auxiliary state): the run of the formula from the next
    /// step on (for the cross-check engine).
    pub fn run_from_here(&self) -> Self
    where
        S: Clone,
        T: Clone,
    {
        let mut m = self.clone();
        m.policy = ResetPolicy {
            on_violation: false,
            on_satisfaction: false,
        };
        m.state = self.table.aux_restart(self.aux);
        m.verdict = Table::<S, T>::verdict(m.state);
        m.steps = 0;
        m.explanation.clear();
        m.dropped = 0;
        m.witness.clear();
        m.shadows = Vec::new();
        m.announce = false;
        m.run_empty = true;
        m.first_run = false;
        m.past_cited.clear();
        m
    }

    /// The table.
    pub fn table(&self) -> &Arc<Table<S, T>> {
        &self.table
    }

    /// The reset policy this monitor runs under.
    pub fn policy(&self) -> ResetPolicy {
        self.policy
    }

    /// The current main state (0 = ⊥ sink, 1 = ⊤ sink).
    pub fn state(&self) -> u32 {
        self.state
    }

    /// The current auxiliary state (LTLf acceptance and TRAC_R restart tracking).
    pub fn aux(&self) -> u32 {
        self.aux
    }

    /// Takes one step given as an entry of the table's fused step under this monitor's policy
    /// (see [`Table::fused_packed`]: the high 32 bits of the packed word read at this step), as
    /// the fused path of [`TableMonitor::step_bits`] does: the next main and auxiliary states and
    /// the verdict reported. For generated monitors (`trac_core::generated::StaticFused`), whose
    /// fused steps are `static` arrays computed at compile time. Records no witness. An entry
    /// of another table or policy leaves the monitor in a wrong state (never a panic).
    #[inline(always)]
    pub fn apply_fused_entry(&mut self, entry: u32) -> Option<Verdict> {
        let mask = (1 << FUSED_STATE_BITS) - 1;
        self.steps += 1;
        self.state = entry & mask;
        self.aux = entry >> FUSED_STATE_BITS & mask;
        self.verdict = Table::<S, T>::verdict(self.state);
        fused_event(entry >> (2 * FUSED_STATE_BITS))
    }

    /// How many explanation entries were dropped because of [`MAX_EXPLANATION`].
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// A copy of this monitor (state included) for the value `value` of the parametric variable
    /// `var`: every proposition `base(var)` now reads the label `base(value)`. The automaton of
    /// the instantiated formula is the same automaton with renamed propositions (two
    /// propositions may then read the same label, which is exactly the instantiated formula's
    /// meaning), so the table is shared, not recompiled.
    pub fn instantiate(&self, var: &str, value: &str) -> Self
    where
        S: Clone,
        T: Clone,
    {
        if let Some((_, shadow)) = self.shadows.iter().find(|(v, _)| v == value) {
            let mut m = shadow.clone();
            if self.verdict == Verdict::Pending && m.verdict != Verdict::Pending {
                m.verdict = Verdict::Pending;
                m.announce = true;
            }
            return m;
        }
        let mut m = self.clone();
        m.shadows = Vec::new();
        // Inherited entries keep the template's labels and residuals.
        m.explanation = self.rendered(&self.explanation);
        m.witness = self.rendered(&self.witness);
        m.labels = self
            .labels
            .iter()
            .map(|l| {
                if l.starts_with("exists ") {
                    // A past-time quantifier atom: its body is a formula, renamed by the
                    // renamer (the runtime's parses and prints it as the parser names it).
                    let r = (self.renamer)(l, var, value);
                    match r.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
                        Some(inner) if inner.starts_with("exists ") => inner.to_string(),
                        _ => r,
                    }
                } else {
                    crate::names::instantiate_name(l, var, value)
                }
            })
            .collect();
        // An instance instantiated again (a partial tuple of `forall x, y: φ` given its next
        // variable) renames both: the variables and values are joined as lists.
        m.instance = Some(match &self.instance {
            None => (var.to_string(), value.to_string()),
            Some((v0, x0)) => (format!("{v0}, {var}"), format!("{x0}, {value}")),
        });
        m.residual_cache.clear();
        m.past = self.past.as_ref().map(|p| p.instantiate(var, value));
        m
    }

    fn restarts(&self, v: Verdict) -> bool {
        match v {
            Verdict::Violated => self.policy.on_violation,
            Verdict::Satisfied => self.policy.on_satisfaction,
            Verdict::Pending => false,
        }
    }

    #[inline]
    fn advance(&mut self, holds: impl Valuation) -> Stepped {
        self.steps += 1;
        let (state, aux, st) = transition(
            &self.table,
            self.policy,
            self.state,
            self.aux,
            self.announce,
            holds,
        );
        self.announce = false;
        if st.gap {
            // The step skipped a decided run: the next run starts at the next position.
            self.run_empty = true;
            self.first_run = false;
        } else {
            // The run (restarted at this step, or going on) read this step, unless it was
            // decided again at once and starts afresh at the next position.
            self.run_empty = st.afresh;
            self.first_run &= !st.restarted;
        }
        self.state = state;
        self.aux = aux;
        self.verdict = Table::<S, T>::verdict(state);
        st
    }

    /// Reads one step given as a bitset (proposition `i` holds iff bit `i % 64` of word `i / 64`
    /// is set); returns the verdict reached, as [`Monitor::step`] would, without witnesses.
    /// No allocation.
    #[inline]
    pub fn step_bits(&mut self, bits: &[u64]) -> Option<Verdict> {
        if self.labels.len() <= 64 {
            let v = bits.first().copied().unwrap_or(0) & low_mask(self.labels.len());
            // Tables without a fused step (LTLf ones among them) take the transition path.
            let fused = self
                .fused
                .get_or_init(|| self.table.fused_step(self.policy).cloned());
            if let (Some(f), false) = (fused, self.announce) {
                // One load: the next main and auxiliary states and the verdict reported.
                let i = ((self.state * f.aux_states + self.aux) as usize) << f.props | v as usize;
                let e = f.entries[i];
                let mask = (1 << FUSED_STATE_BITS) - 1;
                self.steps += 1;
                self.state = e & mask;
                self.aux = e >> FUSED_STATE_BITS & mask;
                self.verdict = Table::<S, T>::verdict(self.state);
                return fused_event(e >> (2 * FUSED_STATE_BITS));
            }
            return self.advance(Bits(v)).event;
        }
        self.advance(Pred(|i: u32| {
            bits.get(i as usize / 64)
                .is_some_and(|w| w >> (i % 64) & 1 == 1)
        }))
        .event
    }

    /// Reads one step given as the sorted indices of the propositions that hold; returns the
    /// verdict reached, without witnesses. No allocation.
    #[inline]
    pub fn step_index(&mut self, holding: &[u32]) -> Option<Verdict> {
        self.advance(Pred(|i: u32| holding.binary_search(&i).is_ok()))
            .event
    }

    /// The representative residual of a main state, instantiated for a parametric instance.
    pub fn state_residual(&self, state: u32) -> String {
        let r = self.table.residual(state);
        match &self.instance {
            None => r.to_string(),
            Some((var, value)) => (self.renamer)(r, var, value),
        }
    }

    /// What [`Monitor::step`] does after the transition: witness entries and the returned
    /// verdict. `known` / `held`: the propositions (0..64) read at this step, and which held.
    fn finish_step(
        &mut self,
        input: &StepInput<'_>,
        st: &Stepped,
        known: u64,
        held: u64,
    ) -> Option<Verdict> {
        if !self.witnesses {
            return st.event;
        }
        if let Some(p) = &mut self.past {
            p.step(input);
        }
        if st.gap {
            // A new run: its explanation starts empty; a verdict known before its position is
            // explained by this step (the history it completes).
            self.explanation.clear();
            self.dropped = 0;
            if let Some(v) = st.event {
                let shown = if v == Table::<S, T>::verdict(st.after) {
                    st.after
                } else {
                    st.before
                };
                let c = self.change(input, shown, known, held);
                self.record(c);
                if self.restarts(self.verdict) {
                    // The explanation starts afresh: the witness takes it whole.
                    self.witness.take_from(&mut self.explanation);
                } else {
                    self.witness.copy_from(&self.explanation);
                }
                self.cite_past(input);
            } else if self.restarts(self.verdict) {
                self.explanation.clear();
            }
            return st.event;
        }
        if st.before != st.after || st.after <= SATISFIED {
            let c = self.change(input, st.after, known, held);
            self.record(c);
        }
        if st.event.is_some() {
            if st.restarted {
                // The explanation is cleared below: the witness takes it whole.
                self.witness.take_from(&mut self.explanation);
            } else {
                self.witness.copy_from(&self.explanation);
            }
            self.cite_past(input);
        }
        let fresh_start = self.table.aux_restart(self.aux);
        if st.restarted {
            self.explanation.clear();
            self.dropped = 0;
            if self.state != fresh_start {
                let c = self.change(input, self.state, known, held);
                self.record(c);
            }
        } else if self.state == fresh_start && self.verdict == Verdict::Pending {
            self.explanation.clear();
            self.dropped = 0;
        }
        st.event
    }

    /// [`Monitor::step`] with the step's valuation of this table's propositions given as bits:
    /// proposition `i` (its label `self.labels[i]`) holds iff bit `i` of `v` is set; only
    /// propositions from 64 on, if any, are looked up in `input.labels` (the shadows of a
    /// parametric template, too, read `input.labels`). Same verdicts, states and witnesses as
    /// [`Monitor::step`] when `v` agrees with `input.labels`; for a table of at most
    /// [`DENSE_PROPS`] propositions the transition is one load per automaton. The caller
    /// computes `v` once per step from an interned valuation (trac-runtime's audit loop), so no
    /// label string is hashed per proposition.
    pub fn step_valuation(&mut self, input: &StepInput<'_>, v: u64) -> Option<Verdict> {
        for (_, m) in &mut self.shadows {
            m.step(input);
        }
        let n = self.labels.len();
        if n <= 64 {
            let v = v & low_mask(n);
            let st = self.advance(Bits(v));
            return self.finish_step(input, &st, low_mask(n), v);
        }
        let labels = self.labels.clone();
        let st = self.advance(Pred(|i: u32| {
            if i < 64 {
                v >> i & 1 == 1
            } else {
                input.labels.contains(&labels[i as usize])
            }
        }));
        self.finish_step(input, &st, u64::MAX, v)
    }

    /// The names of the labels this monitor reads, by proposition index (renamed for a
    /// parametric instance): what [`TableMonitor::step_valuation`]'s bits stand for.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// Records the past-time citations of a verdict at the step just read.
    fn cite_past(&mut self, input: &StepInput<'_>) {
        if let Some(p) = &self.past {
            self.past_cited = p.cite(input);
        }
    }

    fn record(&mut self, entry: Entry) {
        if self.explanation.len() == MAX_EXPLANATION {
            self.explanation.remove_first();
            self.dropped += 1;
        }
        self.explanation.push(entry);
    }

    /// The entry of a step that leads to `state`; `known` / `held`: the propositions (0..64)
    /// looked up already at this step, and which of them held.
    fn change(&mut self, input: &StepInput<'_>, state: u32, known: u64, held: u64) -> Entry {
        let mut bits = 0u64;
        let mut held_more = Vec::new();
        for (i, l) in self.labels.iter().enumerate() {
            let holds = if i < 64 && known >> i & 1 == 1 {
                held >> i & 1 == 1
            } else {
                input.labels.contains(l)
            };
            if holds {
                if i < 64 {
                    bits |= 1 << i;
                } else {
                    held_more.push(i as u32);
                }
            }
        }
        Entry::Compact {
            step: input.step,
            state,
            held: bits,
            held_more,
            text: shared_text(input.text),
            residual: self.cached_residual(state),
        }
    }

    /// The shown residual of `state` for a parametric instance (cached); `None` for others
    /// (the table's residual is shown).
    fn cached_residual(&mut self, state: u32) -> Option<Arc<str>> {
        self.instance.as_ref()?;
        if let Some(r) = self.residual_cache.get(&state) {
            return Some(r.clone());
        }
        let r: Arc<str> = Arc::from(self.state_residual(state));
        self.residual_cache.insert(state, r.clone());
        Some(r)
    }

    fn render(&self, e: &Entry) -> Change {
        match e {
            Entry::Rendered(c) => c.clone(),
            Entry::Compact {
                step,
                state,
                held,
                held_more,
                text,
                residual,
            } => Change {
                step: *step,
                text: text.to_string(),
                held: self
                    .labels
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| {
                        if i < 64 {
                            held >> i & 1 == 1
                        } else {
                            held_more.contains(&(i as u32))
                        }
                    })
                    .map(|(_, l)| l.clone())
                    .collect(),
                residual: match residual {
                    Some(r) => r.to_string(),
                    None => self.table.residual(*state).to_string(),
                },
            },
        }
    }

    fn view<'a>(&self, w: &'a Window) -> &'a [Change] {
        w.view
            .get_or_init(|| w.entries.iter().map(|e| self.render(e)).collect())
    }

    /// The rendering of `w` without caching it (the cached one if there is one).
    fn owned(&self, w: &Window) -> Vec<Change> {
        match w.view.get() {
            Some(v) => v.clone(),
            None => w.entries.iter().map(|e| self.render(e)).collect(),
        }
    }

    fn rendered(&self, w: &Window) -> Window {
        Window {
            entries: w
                .entries
                .iter()
                .map(|e| Entry::Rendered(self.render(e)))
                .collect(),
            view: OnceLock::new(),
        }
    }
}

impl<S: AsRef<[u32]>, T: AsRef<str>> Monitor for TableMonitor<S, T> {
    fn initial(&self) -> Option<Verdict> {
        match Table::<S, T>::verdict(self.table.initial()) {
            Verdict::Pending => None,
            v => Some(v),
        }
    }

    fn step(&mut self, input: &StepInput<'_>) -> Option<Verdict> {
        for (_, m) in &mut self.shadows {
            m.step(input);
        }
        if self.labels.len() <= DENSE_PROPS {
            // Few propositions: read them all (at most 8 lookups) and step by dense rows.
            let mut v = 0u64;
            for (i, l) in self.labels.iter().enumerate() {
                if input.labels.contains(l) {
                    v |= 1 << i;
                }
            }
            let st = self.advance(Bits(v));
            return self.finish_step(input, &st, low_mask(self.labels.len()), v);
        }
        let labels = self.labels.clone();
        // The main, auxiliary and restart walks test the same propositions: look each label up
        // at most once per step (propositions 0..64; the others are looked up every time).
        let (known, held) = (Cell::new(0u64), Cell::new(0u64));
        let holds = |i: u32| {
            if i >= 64 {
                return input.labels.contains(&labels[i as usize]);
            }
            let bit = 1u64 << i;
            if known.get() & bit == 0 {
                known.set(known.get() | bit);
                if input.labels.contains(&labels[i as usize]) {
                    held.set(held.get() | bit);
                }
            }
            held.get() & bit != 0
        };
        let st = self.advance(Pred(holds));
        let (known, held) = (known.get(), held.get());
        self.finish_step(input, &st, known, held)
    }

    fn verdict(&self) -> Verdict {
        self.verdict
    }

    fn residual(&self) -> String {
        self.state_residual(self.state)
    }

    fn explanation(&self) -> &[Change] {
        self.view(&self.explanation)
    }

    fn witness(&self) -> &[Change] {
        self.view(&self.witness)
    }

    fn witness_owned(&self) -> Vec<Change> {
        self.owned(&self.witness)
    }

    fn explanation_owned(&self) -> Vec<Change> {
        self.owned(&self.explanation)
    }

    fn ltlf(&self) -> Verdict {
        Verdict::of_bool(self.table.aux_accepting(self.aux))
    }

    fn ltlf_since_restart(&self) -> Option<Verdict> {
        if self.run_empty {
            return None;
        }
        if let Some(acc) = self.table.accepting(self.state) {
            return Some(Verdict::of_bool(acc));
        }
        // No per-state acceptance: the auxiliary automaton's run is this run if it never
        // restarted.
        self.first_run.then(|| self.ltlf())
    }

    fn past_citations(&self) -> Vec<PastCitation> {
        self.past_cited.clone()
    }

    fn reset(&mut self) {
        for (_, m) in &mut self.shadows {
            m.reset();
        }
        if let Some(p) = &mut self.past {
            p.reset();
        }
        self.past_cited.clear();
        self.run_empty = true;
        self.first_run = true;
        self.state = self.table.initial();
        self.aux = self.table.aux_initial();
        self.verdict = Table::<S, T>::verdict(self.state);
        self.steps = 0;
        self.explanation.clear();
        self.dropped = 0;
        self.witness.clear();
        self.announce = false;
    }
}

impl<S: AsRef<[u32]> + Clone, T: AsRef<str> + Clone> Instantiate for TableMonitor<S, T> {
    fn instantiate(&self, var: &str, value: &str) -> Self {
        TableMonitor::instantiate(self, var, value)
    }

    fn unseen_verdict(&self, seen: &dyn Fn(&str) -> bool) -> Verdict {
        TableMonitor::unseen_verdict(self, seen)
    }

    fn unseen_ltlf(&self, seen: &dyn Fn(&str) -> bool) -> Verdict {
        TableMonitor::unseen_ltlf(self, seen)
    }
}

/// The fastest stepping of a compiled table: a monitor whose whole state is one index into the
/// table's fused step array (see [`TableMonitor::step_bits`]), for callers that need verdicts
/// only (no witnesses, no past-time citations): generated and embedded monitors, benchmarks.
///
/// A step is `i = at + v`, `at = next[i]`, verdict `event[i]`: the chain from one step to the
/// next is one add and one load, so a step costs about the latency of an L1 load (issue 14's
/// "compiled step" goal; BENCHMARKS.md). Same states and verdicts as [`TableMonitor::step_bits`]
/// under the same reset policy. Only for dense tables (at most [`DENSE_PROPS`] propositions)
/// whose fused array fits (at most 2^20 entries, 9 bytes each, built on first use and shared by
/// every monitor of the table) and that are not LTLf tables (their runs since a restart are
/// tracked by [`TableMonitor`]); [`FusedMonitor::new`] says `None` otherwise.
#[derive(Clone, Debug)]
pub struct FusedMonitor {
    fused: Arc<FusedStep>,
    /// `(state · aux_states + aux) << props`.
    at: u32,
    /// The valuation bits the table reads: `(1 << props) - 1`.
    mask: u64,
}

impl FusedMonitor {
    /// A monitor of `table` under `policy`, in the table's initial state; `None` if the table
    /// has no fused step (see the type's docs).
    pub fn new<S: AsRef<[u32]>, T: AsRef<str>>(
        table: &Table<S, T>,
        policy: ResetPolicy,
    ) -> Option<FusedMonitor> {
        let fused = table.fused_step(policy)?.clone();
        let at = (table.initial() * fused.aux_states + table.aux_initial()) << fused.props;
        Some(FusedMonitor {
            mask: (1u64 << fused.props) - 1,
            fused,
            at,
        })
    }

    /// Reads one step: bit `i` of `v` is the valuation of the table's proposition `i` (bits
    /// from the table's proposition count on are ignored). Returns the verdict reported at this
    /// step, as [`TableMonitor::step_bits`]. O(1), no allocation.
    #[inline]
    pub fn step(&mut self, v: u64) -> Option<Verdict> {
        let i = self.at as usize + (v & self.mask) as usize;
        self.at = self.fused.next[i];
        fused_event(u32::from(self.fused.event[i]))
    }

    /// Whether the step reports a verdict, without decoding it: for counting loops (the
    /// decoding's branch costs ≈ 0.1 ns per step on W1).
    #[inline]
    pub fn step_reports(&mut self, v: u64) -> bool {
        let i = self.at as usize + (v & self.mask) as usize;
        self.at = self.fused.next[i];
        self.fused.event[i] != 0
    }

    /// The main state (as [`TableMonitor::state`] would show it).
    pub fn state(&self) -> u32 {
        (self.at >> self.fused.props) / self.fused.aux_states
    }

    /// The auxiliary state.
    pub fn aux(&self) -> u32 {
        (self.at >> self.fused.props) % self.fused.aux_states
    }

    /// The LTL3 verdict of the current state.
    pub fn verdict(&self) -> Verdict {
        Table::<Vec<u32>, String>::verdict(self.state())
    }
}

/// A table's fused step packed for generated code ([`Table::fused_packed`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FusedPacked {
    /// Per index `(state · aux_states + aux) << props | v`: the successor's row index (low 32
    /// bits) and the fused entry (high 32 bits).
    pub steps: Vec<u64>,
    /// Propositions of the table (the valuation has `props` bits).
    pub props: u32,
    /// Auxiliary states of the table.
    pub aux_states: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::LabelSet;

    /// `G(p -> X q)` by hand: state 2 = G(p -> X q), 3 = q & G(p -> X q).
    fn response() -> Table {
        let file = TableFile {
            format: FORMAT.into(),
            version: VERSION,
            formula: "G(p -> X q)".into(),
            semantics: Semantics::Ltl3,
            minimized: true,
            props: vec!["p".into(), "q".into()],
            initial: 2,
            residuals: vec![
                "false".into(),
                "true".into(),
                "G(p -> X q)".into(),
                "q & G(p -> X q)".into(),
            ],
            roots: vec![LEAF, LEAF | 1, 0, 1],
            // node 0: p ? 3 : 2 (state 2); node 1: q ? node 2 : ⊥ (state 3); node 2: p ? 3 : 2.
            nodes: vec![0, LEAF | 2, LEAF | 3, 1, LEAF, 2, 0, LEAF | 2, LEAF | 3],
            aux: AuxFile {
                initial: 0,
                roots: vec![LEAF],
                nodes: vec![],
                accepting: vec![true],
                restart: vec![2],
            },
            accepting: None,
        };
        Table::from_file(file).unwrap()
    }

    #[test]
    fn round_trips_and_runs() {
        let t = response();
        #[cfg(feature = "formats")]
        {
            let json = t.to_json();
            assert_eq!(Table::from_json(&json).unwrap(), t);
            let ron = t.to_ron();
            assert_eq!(Table::from_ron(&ron).unwrap(), t);
        }
        let mut m = TableMonitor::new(Arc::new(t), ResetPolicy::default());
        let steps: [&[&str]; 4] = [&["p"], &["q", "p"], &["p"], &[]];
        let mut got = Vec::new();
        for (i, l) in steps.iter().enumerate() {
            let set: LabelSet = l.iter().copied().collect();
            let input = StepInput {
                step: i + 1,
                text: "",
                labels: &set,
            };
            got.push(m.step(&input));
        }
        assert_eq!(
            got,
            vec![None, None, Some(Verdict::Violated), Some(Verdict::Violated)]
        );
        let w: Vec<usize> = m.witness().iter().map(|c| c.step).collect();
        assert_eq!(w, vec![3, 4]);
        assert_eq!(m.witness()[1].residual, "false");
        // Rendered from the compact entries: the propositions that held, by name, and the text.
        let held: Vec<Vec<String>> = m.witness().iter().map(|c| c.held.clone()).collect();
        assert_eq!(held, vec![vec!["p".to_string()], vec![]]);
        assert_eq!(m.witness_owned(), m.witness().to_vec());
        assert_eq!(m.explanation_owned(), m.explanation().to_vec());
        let mut m2 = TableMonitor::new(m.table().clone(), ResetPolicy::default());
        assert_eq!(m2.step_index(&[0]), None);
        assert_eq!(m2.step_bits(&[0]), Some(Verdict::Violated));
    }

    #[test]
    fn main_state_acceptance_is_optional_checked_and_round_trips() {
        let t = response();
        assert_eq!(t.accepting(2), None);
        // Old files (no `accepting`) load, and a table without it writes none.
        assert_eq!(t.to_file().accepting, None);
        let e = t.clone().with_accepting(vec![false, true]).unwrap_err();
        assert!(
            e.to_string().contains("2 acceptance flags for 4 states"),
            "{e}"
        );
        let t = t.with_accepting(vec![false, true, true, false]).unwrap();
        assert_eq!((t.accepting(2), t.accepting(3)), (Some(true), Some(false)));
        assert_eq!(Table::from_file(t.to_file()).unwrap(), t);
        let mut f = t.to_file();
        f.accepting = Some(vec![true]);
        assert!(Table::from_file(f).is_err());
        // The table monitor reads it: after `p` (state 3) the run does not accept.
        let mut m = TableMonitor::new(Arc::new(t), ResetPolicy::default());
        assert_eq!(m.ltlf_since_restart(), None, "no step read");
        let set: LabelSet = ["p"].into_iter().collect();
        m.step(&StepInput {
            step: 1,
            text: "",
            labels: &set,
        });
        assert_eq!(m.ltlf_since_restart(), Some(Verdict::Violated));
    }

    #[test]
    fn rejects_bad_tables() {
        let good = response().to_file();
        let mut f = good.clone();
        f.nodes[1] = LEAF | 9;
        let e = Table::from_file(f).unwrap_err().to_string();
        assert!(e.contains("state 9"), "{e}");
        let mut f = good.clone();
        f.nodes[5] = 0;
        let e = Table::from_file(f).unwrap_err().to_string();
        assert!(e.contains("not after its parent"), "{e}");
        let mut f = good.clone();
        f.version = 7;
        assert!(Table::from_file(f).is_err());
        let mut f = good.clone();
        f.roots[0] = 0;
        assert!(Table::from_file(f).is_err());
        let mut f = good.clone();
        f.aux.restart[0] = 4;
        assert!(Table::from_file(f).is_err());
        let mut f = good;
        f.nodes[3] = 2;
        let e = Table::from_file(f).unwrap_err().to_string();
        assert!(e.contains("proposition 2"), "{e}");
    }
}
