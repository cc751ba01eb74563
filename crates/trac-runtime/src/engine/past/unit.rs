//! Abbreviations cited as one unit: `count[w](a) <= k`, `count(a) >= k`, `Y[n] a`, `Z[n] a`,
//! `O[n:m] a`, `H[n:m] a` (see `trac_ltl::sugar`).
//!
//! Their expansions are chains of `Y` / `O` nodes (`count[20](a) <= 3` is a shift register of
//! 20 steps, `Y[40] b` 40 nested `Y`): citing those nodes one by one printed the expansion,
//! hundreds of kilobytes per witness. A [`Unit`] is cited in the user's terms instead, from a
//! record of the steps of its window: `a` held at 4 of the steps 1..5 (the last 20), with those
//! steps, or `b` did not hold at step 3 (10 steps back).

use std::collections::VecDeque;
use std::sync::Arc;
use trac_core::monitor::CitedStep;
use trac_ltl::formula::{Arena, Formula};
use trac_ltl::sugar::{self, RangeOp, Step, Sugar};

/// What a unit abbreviates.
#[derive(Clone, Copy, Debug)]
pub(super) enum Kind {
    /// `count[w](body) >= need` (`window` `Some(w)`) or `count(body) >= need` over the run so
    /// far; `<=` and `<` are its negation, printed as written.
    Count { window: Option<usize>, need: usize },
    /// `Y[n] body` or `Z[n] body` (its value before the first step is the expansion's).
    Back { n: usize },
    /// `O[lo:hi] body` (`every` false) or `H[lo:hi] body` (`every` true).
    Range { lo: usize, hi: usize, every: bool },
}

/// An abbreviation of a property, found once per property.
#[derive(Clone, Debug)]
pub(super) struct Unit {
    /// The abbreviation (its expansion's handle).
    pub f: Formula,
    /// Its operand: what is counted or read back.
    pub body: Formula,
    pub kind: Kind,
}

impl Unit {
    /// The unit `f` is, if it is a past-time abbreviation with a window (or a count).
    pub fn of(arena: &Arena, f: Formula) -> Option<Unit> {
        let kind = match sugar::recognize(arena, f)? {
            Sugar::Count {
                body,
                window,
                cmp,
                k,
            } => {
                // `recognize` gives `>= k` or `<= k`, the negation of `>= k + 1`.
                let need = if cmp == sugar::Cmp::Le { k + 1 } else { k };
                return Some(Unit {
                    f,
                    body,
                    kind: Kind::Count {
                        window: window.map(|w| w as usize),
                        need: need as usize,
                    },
                });
            }
            Sugar::Repeat {
                step: Step::Yesterday | Step::WeakYesterday,
                n,
                body,
            } => (body, Kind::Back { n: n as usize }),
            Sugar::Range {
                op,
                lo,
                hi: Some(hi),
                body,
                ..
            } => match op {
                RangeOp::Once | RangeOp::Historically => (
                    body,
                    Kind::Range {
                        lo: lo as usize,
                        hi: hi as usize,
                        every: op == RangeOp::Historically,
                    },
                ),
                _ => return None,
            },
            _ => return None,
        };
        Some(Unit {
            f,
            body: kind.0,
            kind: kind.1,
        })
    }

    /// How many steps of the body a unit's record keeps.
    fn span(&self) -> usize {
        match self.kind {
            Kind::Count { window, need } => window.unwrap_or(need),
            Kind::Back { n, .. } => n + 1,
            Kind::Range { hi, .. } => hi + 1,
        }
    }
}

/// One step in a unit's record.
#[derive(Clone, Debug)]
struct Seen {
    step: usize,
    held: bool,
    text: Arc<str>,
}

/// A unit's record of its window, and since when it has had its value.
#[derive(Clone, Debug, Default)]
pub(super) struct UnitState {
    /// `Count`: the steps where the body held (those in the window, or the last `need`);
    /// `Back` / `Range`: the last `span` steps.
    seen: VecDeque<Seen>,
    /// `Count` without a window: the steps where the body held so far.
    total: usize,
    pub value: bool,
    pub since: usize,
    pub since_text: Option<Arc<str>>,
}

impl UnitState {
    /// Records step `step` (`held`: the body's value there).
    pub fn read(&mut self, u: &Unit, step: usize, held: bool, text: &Arc<str>) {
        let seen = Seen {
            step,
            held,
            text: text.clone(),
        };
        match u.kind {
            Kind::Count { window, need } => {
                if held {
                    self.total += 1;
                    self.seen.push_back(seen);
                }
                let keep = |s: &Seen| match window {
                    Some(w) => s.step + w > step,
                    None => true,
                };
                while self.seen.front().is_some_and(|s| !keep(s))
                    || (window.is_none() && self.seen.len() > need)
                {
                    self.seen.pop_front();
                }
            }
            _ => {
                self.seen.push_back(seen);
                while self.seen.len() > u.span() {
                    self.seen.pop_front();
                }
            }
        }
    }

    /// The steps cited and the reason, in words, of the unit's value at step `t` (the step
    /// last read); `body` is the body's text.
    pub fn cite(&self, u: &Unit, t: usize, body: &str) -> (Vec<CitedStep>, String) {
        let cited = |s: &Seen, what: &str| CitedStep {
            step: s.step,
            text: s.text.to_string(),
            what: format!("{body} {what}"),
        };
        match u.kind {
            Kind::Count { window, need } => {
                let (n, range) = match window {
                    Some(w) => (
                        self.seen.len(),
                        format!(
                            "of the steps {}..{t} (the last {w})",
                            (t + 1).saturating_sub(w).max(1)
                        ),
                    ),
                    None => (self.total, format!("of the steps 1..{t}")),
                };
                // Enough steps to show the count reaches `need`, or all of them when it does not;
                // the reason says when fewer are cited than it counts (the latest ones).
                let skip = self.seen.len().saturating_sub(need);
                let steps: Vec<CitedStep> = self
                    .seen
                    .iter()
                    .skip(skip)
                    .map(|s| cited(s, "held"))
                    .collect();
                let shown = if steps.len() < n {
                    format!(" (the latest {} cited)", steps.len())
                } else {
                    String::new()
                };
                (steps, format!("`{body}` held at {n} {range}{shown}"))
            }
            Kind::Back { n, .. } => match self.seen.iter().find(|s| s.step + n == t) {
                None => (
                    Vec::new(),
                    format!("there is no step {n} steps before step {t}"),
                ),
                Some(s) => {
                    let did = if s.held { "held" } else { "did not hold" };
                    (
                        vec![cited(s, did)],
                        format!("`{body}` {did} at step {} ({n} steps back)", s.step),
                    )
                }
            },
            Kind::Range { lo, hi, every } => {
                let from = (t + 1).saturating_sub(hi + 1).max(1);
                let to = match t.checked_sub(lo) {
                    Some(to) if to >= from => to,
                    _ => {
                        return (
                            Vec::new(),
                            format!("there is no step {lo} to {hi} steps before step {t}"),
                        )
                    }
                };
                let mut window = self.seen.iter().filter(|s| (from..=to).contains(&s.step));
                // `O`: the last step where the body held; `H`: the first where it failed.
                let found = if every {
                    window.find(|s| !s.held)
                } else {
                    window.rfind(|s| s.held)
                };
                match (found, every) {
                    (Some(s), false) => (
                        vec![cited(s, "held")],
                        format!("`{body}` held last at step {} (of {from}..{to})", s.step),
                    ),
                    (Some(s), true) => (
                        vec![cited(s, "failed")],
                        format!("`{body}` failed at step {} (of {from}..{to})", s.step),
                    ),
                    (None, false) => (Vec::new(), format!("`{body}` held at no step {from}..{to}")),
                    (None, true) => (
                        Vec::new(),
                        format!("`{body}` held at every step {from}..{to}"),
                    ),
                }
            }
        }
    }
}
