//! `--format html`: one self-contained page per audit (inline CSS and SVG, no script, no
//! external resource: a Content-Security-Policy forbids any).
//!
//! - A summary table: per property, its status over all traces, its violations, and in how many
//!   of the traces (sessions) it was violated.
//! - Per property: its rule, formula and meaning; per trace a timeline of its verdicts over the
//!   steps (violations red, satisfactions green, counted per bucket of steps: at most
//!   [`TIMELINE_BUCKETS`] bars whatever the trace's length); its first [`MAX_WITNESSES`]
//!   violations with their witness (the steps, their text, the labels that held, the residual in
//!   plain English), the others counted; and its monitor automaton drawn as SVG by Graphviz
//!   `dot` from the DOT export (`trac_compile::export::dot`), scaled down to the page width.
//!   When no drawing can be made (no `dot`, a monitor too large or too slow to compile), the
//!   page says why and the audit goes on.
//! - At scale the page stays bounded: the header counts the traces that had errors; past
//!   [`MAX_TRACE_ROWS`] traces the trace table lists those with errors or violations, past
//!   [`MAX_TRACE_SECTIONS`] a property shows the traces that violated it, and the page says how
//!   many it left out and where to find them. A 10^6-step trace with 10^5 violations gives a
//!   page of about 90 KB (BENCHMARKS.md).
//!
//! Markup is written with `maud`, which escapes every interpolated string.

use super::{
    explain_end, residual_english, shorten, status, Context, Kept, Printer, PropertyMeta,
    TraceOutcome,
};
use maud::{html, Markup, PreEscaped, DOCTYPE};
use std::io::{self, Write};
use std::sync::mpsc;
use std::time::Duration;
use trac_runtime::audit::{PropertyEnd, VerdictRecord};
use trac_runtime::Verdict;

/// Violations shown with their witness per property and trace (the others are counted).
pub(crate) const MAX_WITNESSES: usize = 20;
/// Of those, the first ones are shown open; the others collapsed to their summary line (one
/// click away), so the monitor drawing below them stays in reach.
const OPEN_WITNESSES: usize = 3;
/// Traces listed in the trace table at most: beyond, only those with errors or violations, up to
/// this many.
const MAX_TRACE_ROWS: usize = 1000;
/// Traces shown per property at most: beyond, only those where it was violated, up to this many
/// (each can show [`MAX_WITNESSES`] witnesses).
const MAX_TRACE_SECTIONS: usize = 50;
/// Monitors with more states are not drawn (a drawing that large is unreadable).
pub(crate) const MAX_DRAWN_STATES: usize = 40;
/// How long a monitor may take to compile for its drawing (the progression engine does not
/// compile one for the audit); past it the page says the monitor was not drawn.
pub(crate) const COMPILE_BUDGET: Duration = Duration::from_secs(10);
/// Step texts longer than this are shortened in witnesses (the full text is in the tooltip).
const WITNESS_TEXT: usize = 160;
/// Width of a timeline, in SVG user units.
const TIMELINE_WIDTH: f64 = 720.0;
/// Buckets of a timeline at most (a power of two: [`Timeline`] halves their number by merging
/// neighbours); about one per user unit of the timeline's 620-unit axis.
pub(crate) const TIMELINE_BUCKETS: usize = 512;

/// The HTML printer.
pub(crate) struct Html {
    cx: Context,
}

impl Html {
    /// A page for the properties of `cx`.
    pub fn new(cx: Context) -> Html {
        Html { cx }
    }
}

/// A monitor drawing, or why there is none; and its DOT source when the monitor compiled.
pub(crate) struct Drawing {
    /// The SVG markup (Graphviz output from `<svg` on).
    pub svg: Result<String, String>,
    /// The DOT source.
    pub dot: Option<String>,
}

/// The Graphviz program: `$TRAC_DOT` if set, else `dot` on the `PATH`.
fn dot_program() -> String {
    std::env::var("TRAC_DOT").unwrap_or_else(|_| "dot".into())
}

/// How long one drawing may take: `$TRAC_DOT_TIMEOUT` seconds, default 60. A `dot` that hangs
/// (a wrapper script, a drawing far too large) must not hang the audit's report.
fn dot_timeout() -> std::time::Duration {
    let secs = std::env::var("TRAC_DOT_TIMEOUT")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .unwrap_or(60.0);
    std::time::Duration::from_secs_f64(secs)
}

/// Renders DOT source as SVG with Graphviz. Errors: `dot` missing, failing, or running past
/// [`dot_timeout`] (then killed).
pub(crate) fn dot_to_svg(dot: &str) -> Result<String, String> {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let program = dot_program();
    let mut child = Command::new(&program)
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!(
                "Graphviz `{program}` could not be run ({e}): install Graphviz (Debian: apt-get install graphviz) to draw monitors"
            )
        })?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let src = dot.to_string();
    // Written and read from threads so that a large drawing cannot deadlock on full pipes, and
    // the wait below can give up.
    let writer = std::thread::spawn(move || stdin.write_all(src.as_bytes()));
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let read_out = std::thread::spawn(move || {
        let mut b = Vec::new();
        stdout.read_to_end(&mut b).map(|_| b)
    });
    let read_err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = stderr.read_to_end(&mut b);
        b
    });
    let limit = dot_timeout();
    let start = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "Graphviz `{program}` took longer than {:.0} s and was stopped (TRAC_DOT_TIMEOUT sets the limit)",
                    limit.as_secs_f64()
                ));
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(10)),
            Err(e) => return Err(format!("Graphviz `{program}` failed: {e}")),
        }
    };
    let _ = writer.join();
    let stdout = read_out
        .join()
        .map_err(|_| format!("Graphviz `{program}`: its output could not be read"))?
        .map_err(|e| format!("Graphviz `{program}` failed: {e}"))?;
    let stderr = read_err.join().unwrap_or_default();
    let out = std::process::Output {
        status,
        stdout,
        stderr,
    };
    if !out.status.success() {
        return Err(format!(
            "Graphviz `{program}` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let svg = String::from_utf8_lossy(&out.stdout);
    match svg.find("<svg") {
        Some(i) => Ok(fit_width(&svg[i..])),
        None => Err(format!("Graphviz `{program}` wrote no SVG")),
    }
}

/// `svg` (from `<svg` on) scaled down to the width of its container when wider, at its own
/// size otherwise: Graphviz gives the root element a fixed `width`/`height` in points and a
/// `viewBox`, so `max-width:100%` with `height:auto` shrinks it keeping its proportions. The
/// style goes on the element itself (the page's CSS could be overridden or dropped when the
/// drawing is copied). Unchanged if the root already has a style.
pub(crate) fn fit_width(svg: &str) -> String {
    let root = &svg[..svg.find('>').unwrap_or(svg.len())];
    if !svg.starts_with("<svg") || root.contains(" style=") {
        return svg.to_string();
    }
    format!(
        "<svg style=\"max-width:100%;height:auto\"{}",
        &svg["<svg".len()..]
    )
}

/// Compiles `p`'s monitor (with the audit's compiler when there is one, so the table is not
/// compiled twice) within [`COMPILE_BUDGET`] and draws it.
fn draw(cx: &Context, p: &PropertyMeta) -> Drawing {
    let compiler = cx
        .compiler
        .clone()
        .unwrap_or_else(trac_compile::Compiler::shared);
    let (arena, formula, semantics) = (p.arena.clone(), p.formula, p.semantics);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(compiler.compile(&arena, formula, semantics));
    });
    let table = match rx.recv_timeout(COMPILE_BUDGET) {
        Ok(Ok(t)) => t,
        Ok(Err(e)) => {
            return Drawing {
                svg: Err(format!("the monitor does not compile: {e}")),
                dot: None,
            }
        }
        Err(_) => {
            return Drawing {
                svg: Err(format!(
                    "the monitor was not compiled within {} s (compilation is exponential in the worst case)",
                    COMPILE_BUDGET.as_secs()
                )),
                dot: None,
            }
        }
    };
    let dot = trac_compile::export::dot(&*table);
    let svg = if table.state_count() > MAX_DRAWN_STATES {
        Err(format!(
            "the monitor has {} states, too many to draw (at most {MAX_DRAWN_STATES}); its DOT source is below",
            table.state_count()
        ))
    } else {
        dot_to_svg(&dot)
    };
    Drawing {
        svg,
        dot: Some(dot),
    }
}

const CSS: &str = r#"
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; } h3 { font-size: 1.05em; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { border: 1px solid #ccc; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; }
.violated { color: #b00020; font-weight: bold; }
.satisfied { color: #1b7d2f; font-weight: bold; }
.pending { color: #7a6400; font-weight: bold; }
.notaudited { color: #666; font-style: italic; }
code, .formula { font-family: ui-monospace, monospace; }
.meta { color: #555; }
.note { background: #fff8e1; border-left: 4px solid #e0b000; padding: .4em .8em; }
.monitor { overflow-x: auto; border: 1px solid #ddd; padding: .5em; }
.monitor svg { max-width: 100%; height: auto; }
details { margin: .3em 0; } summary { cursor: pointer; }
td.text { max-width: 32em; overflow-wrap: anywhere; }
"#;

impl Printer for Html {
    /// Counts every verdict in its property's [`Timeline`] and keeps the first
    /// [`MAX_WITNESSES`] violations per property (those shown with their witness), so the memory
    /// a trace holds until its end does not grow with its verdicts.
    fn retain(&self, o: &mut TraceOutcome, recs: Vec<VerdictRecord>) {
        for r in recs {
            let i = match o.timelines.iter().position(|(p, _)| *p == r.property) {
                Some(i) => i,
                None => {
                    o.timelines.push((r.property.clone(), Timeline::default()));
                    o.timelines.len() - 1
                }
            };
            let tl = &mut o.timelines[i].1;
            tl.add(r.step, r.verdict);
            // The violation just counted is the n-th of its property: kept while n ≤ MAX.
            if r.verdict == Verdict::Violated && tl.violations() <= MAX_WITNESSES {
                o.records.push(r);
            }
        }
    }

    fn keep(&self, o: TraceOutcome, kept: &mut Kept) {
        kept.traces += 1;
        kept.outcomes.push(o);
    }

    fn finish(&mut self, out: &mut dyn Write, kept: Kept, violations: usize) -> io::Result<()> {
        let page = page(&self.cx, &kept.outcomes, violations);
        out.write_all(page.into_string().as_bytes())
    }
}

/// The CSS class of a verdict.
fn class(v: Verdict) -> &'static str {
    v.as_str()
}

/// The whole page.
pub(crate) fn page(cx: &Context, outcomes: &[TraceOutcome], violations: usize) -> Markup {
    let title = "trac audit report";
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:";
                meta name="viewport" content="width=device-width, initial-scale=1";
                link rel="icon" href="data:,";
                title { (title) }
                style { (PreEscaped(CSS)) }
            }
            body {
                h1 { (title) }
                @let errored = outcomes.iter().filter(|o| o.error.is_some()).count();
                @let not_audited = outcomes.iter().filter(|o| o.not_audited).count();
                @if errored > 0 {
                    p.note.errors {
                        strong { (errored) " of " (outcomes.len()) " trace(s) had errors" }
                        @if not_audited > 0 { " (" (not_audited) " not audited at all)" }
                        ": a trace's verdicts cover only the steps read before its error; see the "
                        a href="#traces" { "Traces" } " table."
                    }
                }
                p.meta {
                    (violations) " violation(s) in " (outcomes.len()) " trace(s)"
                    @if errored > 0 { " (" (errored) " with errors)" }
                    "; "
                    "engine " code { (cx.engine) } "; "
                    @if cx.reset { "TRAC_R: a property restarts after each violation, so every violation is counted" }
                    @else { "plain TRAC: a violated property stays violated" }
                    @if !cx.specs.is_empty() {
                        "; specs: "
                        @for (i, s) in cx.specs.iter().enumerate() {
                            @if i > 0 { ", " }
                            code { (s) }
                        }
                    }
                    "."
                }
                (summary_table(cx, outcomes))
                (trace_table(outcomes))
                @for p in &cx.props {
                    (property_section(cx, p, outcomes))
                }
                p.meta { "Generated by trac " (env!("CARGO_PKG_VERSION")) "." }
            }
        }
    }
}

fn summary_table(cx: &Context, outcomes: &[TraceOutcome]) -> Markup {
    html! {
        h2 { "Summary" }
        table {
            thead { tr { th { "property" } th { "verdict" } th { "violations" } th { "sessions violated" } th { "rule" } } }
            tbody {
                @for p in &cx.props {
                    @let ends: Vec<_> = outcomes.iter().filter(|o| !o.not_audited).filter_map(|o| o.ends.iter().find(|e| e.property == p.info.id)).collect();
                    @let count: usize = ends.iter().map(|e| e.violations).sum();
                    @let violated = ends.iter().filter(|e| e.violations > 0).count();
                    @let verdict = overall(ends.iter().map(|e| status(e)));
                    tr {
                        td { a href=(format!("#{}", anchor(&p.info.id))) { (p.info.id) } }
                        td class=(class(verdict)) { (verdict.as_str()) }
                        td.num { (count) }
                        td.num { (violated) " of " (ends.len()) }
                        td { (p.info.description) }
                    }
                }
            }
        }
    }
}

/// Violated if any is, else pending if any is, else satisfied (also for none).
fn overall(vs: impl Iterator<Item = Verdict>) -> Verdict {
    let mut out = Verdict::Satisfied;
    for v in vs {
        match v {
            Verdict::Violated => return Verdict::Violated,
            Verdict::Pending => out = Verdict::Pending,
            Verdict::Satisfied => {}
        }
    }
    out
}

fn trace_table(outcomes: &[TraceOutcome]) -> Markup {
    let (shown, hidden) = listed(outcomes, MAX_TRACE_ROWS, |o| {
        o.error.is_some() || o.ends.iter().any(|e| e.violations > 0)
    });
    html! {
        h2 id="traces" { "Traces" }
        table {
            thead { tr { th { "trace" } th { "steps" } th { "violations" } th { "note" } } }
            tbody {
                @for o in &shown {
                    tr {
                        td { code { (o.name) } }
                        td.num { (o.steps) }
                        td.num { (o.ends.iter().map(|e| e.violations).sum::<usize>()) }
                        td {
                            @if let Some(e) = &o.error {
                                span class=(if o.not_audited { "notaudited" } else { "violated" }) { (e) }
                            }
                        }
                    }
                }
            }
        }
        @if hidden > 0 {
            p.note {
                (hidden) " more trace(s) not listed (only the first " (MAX_TRACE_ROWS)
                " with errors or violations are): " code { "--summary" } " lists every trace."
            }
        }
    }
}

/// An HTML id for a property id.
fn anchor(id: &str) -> String {
    let clean: String = id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("property-{clean}")
}

fn property_section(cx: &Context, p: &PropertyMeta, outcomes: &[TraceOutcome]) -> Markup {
    let info = &p.info;
    let drawing = draw(cx, p);
    html! {
        section id=(anchor(&info.id)) {
            h2 { "Property " (info.id) }
            table {
                @if !info.description.is_empty() { tr { th { "rule" } td { (info.description) } } }
                tr { th { "formula" } td.formula { (info.formula) } }
                tr { th { "meaning" } td { (info.english) } }
                tr { th { "semantics" } td { (info.semantics) }}
                @if let Some(f) = &p.spec_file { tr { th { "spec" } td { code { (f) } } } }
            }
            @let (shown, hidden) = listed(outcomes, MAX_TRACE_SECTIONS, |o| {
                o.ends.iter().any(|e| e.property == info.id && e.violations > 0)
            });
            @for o in shown {
                @if let Some(end) = o.ends.iter().find(|e| e.property == info.id) {
                    (trace_section(cx, p, o, end))
                }
            }
            @if hidden > 0 {
                p.note {
                    (hidden) " more trace(s) not shown here (only the first " (MAX_TRACE_SECTIONS)
                    " where the property was violated are): " code { "--summary" } " lists every trace."
                }
            }
            h3 { "Monitor automaton" }
            p.meta {
                "The minimized LTL3 monitor of the formula"
                @if let Some(v) = &p.var { " (with " code { (v) } " free: every value gets its own copy)" }
                ": each state is a residual formula with its verdict (⊥ violated, ⊤ satisfied, ? pending); "
                "each step follows the edge whose condition the step's labels satisfy."
            }
            @match &drawing.svg {
                Ok(svg) => div.monitor { (PreEscaped(svg)) },
                Err(why) => p.note { "Monitor not drawn: " (why) "." },
            }
            @if let Some(dot) = &drawing.dot {
                details { summary { "DOT source" } pre { (dot) } }
            }
        }
    }
}

/// The verdicts of property `p` on trace `o` (whose end state for it is `end`): its status, the
/// end in words, the timeline and the first violations with their witness.
fn trace_section(cx: &Context, p: &PropertyMeta, o: &TraceOutcome, end: &PropertyEnd) -> Markup {
    let info = &p.info;
    html! {
        @let recs: Vec<&VerdictRecord> = o.records.iter().filter(|r| r.property == info.id).collect();
        h3 {
            code { (o.name) } ": "
            @if o.not_audited { span.notaudited { "not audited" } }
            @else {
                span class=(class(status(end))) { (status(end).as_str()) }
                ", " (end.violations) " violation(s) in " (o.steps) " step(s)"
            }
        }
        @if !o.not_audited {
            p { "At the end: " (explain_end(end, info.semantics, cx.reset)) "." }
            @let tl = o.timelines.iter().find(|(id, _)| *id == info.id).map(|(_, t)| t);
            (timeline(o.steps, tl.unwrap_or(&Timeline::default())))
            @let violated: Vec<&&VerdictRecord> = recs.iter().filter(|r| r.verdict == Verdict::Violated).take(MAX_WITNESSES).collect();
            @for (i, r) in violated.iter().enumerate() {
                (witness(p, o, r, i < OPEN_WITNESSES))
            }
            @let total = tl.map_or(violated.len(), Timeline::violations);
            @if total > violated.len() {
                p.note {
                    "The first " (violated.len()) " violation(s) are shown; " (total - violated.len())
                    " more are counted in the timeline above. Every violation with its witness: "
                    code { "trac audit --format jsonl" } " (one line per verdict) or " code { "--format json" } "."
                }
            }
        }
    }
}

/// The traces a page lists in full, and how many it leaves out: all of `outcomes` when they
/// are at most `max`, else the first `max` of those where `notable` holds (violations, errors),
/// in order. O(len(outcomes)).
fn listed(
    outcomes: &[TraceOutcome],
    max: usize,
    notable: impl Fn(&TraceOutcome) -> bool,
) -> (Vec<&TraceOutcome>, usize) {
    let shown: Vec<&TraceOutcome> = if outcomes.len() <= max {
        outcomes.iter().collect()
    } else {
        outcomes.iter().filter(|o| notable(o)).take(max).collect()
    };
    let hidden = outcomes.len() - shown.len();
    (shown, hidden)
}

/// The verdicts of one property over the steps of one trace, counted per bucket of `width`
/// consecutive steps (bucket `i` holds steps `i·width ..= (i+1)·width - 1`).
///
/// `width` is a power of two that doubles (merging neighbouring buckets) whenever a step falls
/// past the last of [`TIMELINE_BUCKETS`] buckets, so a timeline takes O(`TIMELINE_BUCKETS`)
/// memory and markup whatever the trace's length and its number of verdicts, and between half
/// and all of the buckets are in use at the end. [`Timeline::add`] is amortized O(1).
#[derive(Debug, Clone)]
pub(crate) struct Timeline {
    /// Steps per bucket (a power of two).
    width: usize,
    /// Violations per bucket (trailing empty buckets are not stored).
    violated: Vec<usize>,
    /// Satisfactions per bucket (trailing empty buckets are not stored).
    satisfied: Vec<usize>,
    /// Violations counted (the sum of `violated`).
    violations: usize,
}

impl Default for Timeline {
    fn default() -> Timeline {
        Timeline {
            width: 1,
            violated: Vec::new(),
            satisfied: Vec::new(),
            violations: 0,
        }
    }
}

impl Timeline {
    /// Counts a verdict reached at `step` (pending verdicts are not drawn).
    pub fn add(&mut self, step: usize, verdict: Verdict) {
        while step / self.width >= TIMELINE_BUCKETS {
            self.width *= 2;
            for counts in [&mut self.violated, &mut self.satisfied] {
                let merged = counts.chunks(2).map(|c| c.iter().sum()).collect();
                *counts = merged;
            }
        }
        let counts = match verdict {
            Verdict::Violated => {
                self.violations += 1;
                &mut self.violated
            }
            Verdict::Satisfied => &mut self.satisfied,
            Verdict::Pending => return,
        };
        let i = step / self.width;
        if counts.len() <= i {
            counts.resize(i + 1, 0);
        }
        counts[i] += 1;
    }

    /// Violations counted.
    pub fn violations(&self) -> usize {
        self.violations
    }
}

/// The verdicts of one property over the steps `0 ..= steps` of one trace: a grey line with, per
/// bucket of steps that reached any, a red bar above it (violations) and a green one below
/// (satisfactions), their heights proportional to the bucket's count (tooltips give the steps
/// and counts). So a trace with 10^5 violations draws at most [`TIMELINE_BUCKETS`] bars and
/// shows where they cluster.
fn timeline(steps: usize, tl: &Timeline) -> Markup {
    let (left, right, height, base) = (40.0, 60.0, 40.0, 16.0);
    let span = TIMELINE_WIDTH - left - right;
    // Steps 0 ..= steps lie on [left, left + span).
    let x = |step: usize| left + span * step as f64 / (steps + 1) as f64;
    let w = tl.width;
    let max = tl
        .violated
        .iter()
        .chain(&tl.satisfied)
        .copied()
        .max()
        .unwrap_or(1);
    // At least 2 units tall, so a single verdict among thousands in another bucket shows.
    let bar = |count: usize| 2.0 + 10.0 * count as f64 / max as f64;
    let range = |i: usize| {
        let (a, b) = (i * w, ((i + 1) * w - 1).min(steps.max(i * w)));
        if a == b {
            format!("step {a}")
        } else {
            format!("steps {a}–{b}")
        }
    };
    let rect_x = |i: usize| x(i * w);
    let rect_w = |i: usize| (x(((i + 1) * w).min(steps + 1).max(i * w + 1)) - x(i * w)).max(1.0);
    let fmt = |v: f64| format!("{v:.1}");
    html! {
        svg.timeline width=(TIMELINE_WIDTH) height=(height) viewBox=(format!("0 0 {TIMELINE_WIDTH} {height}")) role="img" {
            title { "verdicts over the " (steps) " steps" @if w > 1 { ", counted per " (w) " steps" } }
            line x1=(left) y1=(base) x2=(left + span) y2=(base) stroke="#bbb" stroke-width="2" {}
            @for (i, &n) in tl.violated.iter().enumerate() {
                @if n > 0 {
                    rect.violations x=(fmt(rect_x(i))) y=(fmt(base - bar(n))) width=(fmt(rect_w(i))) height=(fmt(bar(n))) fill="#b00020" {
                        title { (range(i)) ": " (n) " violation(s)" }
                    }
                }
            }
            @for (i, &n) in tl.satisfied.iter().enumerate() {
                @if n > 0 {
                    rect.satisfactions x=(fmt(rect_x(i))) y=(fmt(base)) width=(fmt(rect_w(i))) height=(fmt(bar(n))) fill="#1b7d2f" {
                        title { (range(i)) ": " (n) " satisfaction(s)" }
                    }
                }
            }
            text x=(left - 4.0) y=(base + 4.0) text-anchor="end" font-size="11" { "0" }
            text x=(left + span + 4.0) y=(base + 4.0) font-size="11" { (steps) }
            text x=(left) y=(height - 1.0) font-size="10" fill="#555" {
                "step" @if w > 1 { " (a bar per " (w) " steps; the tallest: " (max) ")" }
            }
        }
    }
}

/// A violation's witness, in a `details` element shown `open` or collapsed to its summary line.
fn witness(p: &PropertyMeta, o: &TraceOutcome, r: &VerdictRecord, open: bool) -> Markup {
    html! {
        details open[open] {
            summary {
                span.violated { "violated" } " at step " (r.step)
                @if let Some(v) = &r.value { " for " code { (v) } }
                @if let Some(l) = o.line_of(r.step) { " (line " (l) ")" }
            }
            @if r.witness.is_empty() {
                p { "Decided before the first step: no trace can satisfy the rule." }
            } @else {
                table {
                    thead { tr { th { "step" } th { "text" } th { "labels" } th { "what is left to hold" } } }
                    tbody {
                        @for c in &r.witness {
                            tr {
                                td.num { (c.step) }
                                td.text title=(shorten(&c.text, 2000)) { (shorten(&c.text, WITNESS_TEXT)) }
                                td { (c.held.join(", ")) }
                                td title=(c.residual) { (residual_english(&c.residual, &p.descriptions)) }
                            }
                        }
                    }
                }
            }
            @if !r.past.is_empty() {
                ul.past {
                    @for c in &r.past {
                        li {
                            "Because " code { (c.subformula) } " was " (c.value) " at step " (c.step) ": " (c.reason)
                            @for s in &c.steps {
                                br;
                                "step " (s.step) ": "
                                span.text title=(shorten(&s.text, 2000)) { (shorten(&s.text, WITNESS_TEXT)) }
                                " (" (s.what) ")"
                            }
                        }
                    }
                }
            }
            @if let Some(rs) = &r.restarted_with {
                p.meta { "Restarted with " code { (rs) } "." }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timelines_merge_buckets_and_keep_every_count() {
        let mut tl = Timeline::default();
        // 10^5 violations, one every 10 steps of 10^6, and a satisfaction at the end.
        for s in (10..=1_000_000).step_by(10) {
            tl.add(s, Verdict::Violated);
        }
        tl.add(1_000_000, Verdict::Satisfied);
        tl.add(5, Verdict::Pending);
        assert_eq!(tl.violations(), 100_000);
        assert_eq!(tl.violated.iter().sum::<usize>(), 100_000);
        assert_eq!(tl.satisfied.iter().sum::<usize>(), 1);
        assert!(tl.width.is_power_of_two());
        // Between half and all of the buckets in use.
        assert!(tl.violated.len() <= TIMELINE_BUCKETS);
        assert!(
            tl.violated.len() > TIMELINE_BUCKETS / 2,
            "{}",
            tl.violated.len()
        );
        // Each bucket counts the multiples of 10 in its steps.
        for (i, &n) in tl.violated.iter().enumerate() {
            let (a, b) = (i * tl.width, (i + 1) * tl.width - 1);
            let want = (a..=b.min(1_000_000))
                .filter(|s| s % 10 == 0 && *s > 0)
                .count();
            assert_eq!(n, want, "bucket {i}");
        }
        let svg = timeline(1_000_000, &tl).into_string();
        assert_eq!(
            svg.matches("<rect class=\"violations\"").count(),
            tl.violated.len()
        );
        assert_eq!(svg.matches("<rect class=\"satisfactions\"").count(), 1);
    }

    #[test]
    fn drawings_are_styled_to_fit_their_container() {
        let svg = "<svg width=\"1459pt\" height=\"191pt\"\n viewBox=\"0 0 1458.6 191\"><g/></svg>";
        let fit = fit_width(svg);
        assert!(
            fit.starts_with("<svg style=\"max-width:100%;height:auto\" width=\"1459pt\""),
            "{fit}"
        );
        // Never a second style attribute.
        assert_eq!(fit_width(&fit), fit);
    }
}
