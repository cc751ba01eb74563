//! The plot of a sweep as a standalone SVG (the shape of the paper's Figure 3): accuracy from 0
//! to 1 against the swept value, one line for the judge with its 95% interval as error bars and
//! one for TRAC, axes with ticks and labels, a title and a legend, so it reads without the
//! table. The gap axis is logarithmic; the language sweep's points are named on the axis.

use super::{Sweep, SweepResult};
use std::fmt::Write as _;

const W: f64 = 760.0;
const H: f64 = 460.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 84.0;

/// The SVG document of `r`.
pub fn plot(r: &SweepResult) -> String {
    let bottom = if r.sweep == Sweep::Language {
        150.0
    } else {
        70.0
    };
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - bottom);
    let log = r.sweep == Sweep::Gap;
    let tx = |x: f64| if log { (x.max(1.0)).log10() } else { x };
    let xs: Vec<f64> = r.points.iter().map(|p| tx(p.x)).collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let (lo, hi) = if xs.is_empty() {
        (0.0, 1.0)
    } else if hi > lo {
        (lo, hi)
    } else {
        (lo - 1.0, hi + 1.0)
    };
    // 4% of the range left free on each side, so the first and last points clear the axes.
    let pad = (hi - lo) * 0.04;
    let (lo, hi) = (lo - pad, hi + pad);
    let sx = |x: f64| LEFT + (tx(x) - lo) / (hi - lo) * pw;
    let sy = |y: f64| TOP + (1.0 - y) * ph;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let title = format!(
        "{}: LLM judge vs TRAC ({} samples per point)",
        match r.sweep {
            Sweep::Gap => "Temporal elasticity",
            Sweep::Constraints => "Constraint scalability",
            Sweep::Propositions => "Proposition scalability",
            Sweep::Language => "Specification language",
        },
        r.samples
    );
    let model: String = r.model.chars().take(90).collect();
    let _ = writeln!(
        s,
        r#"<text x="{0}" y="22" text-anchor="middle" font-size="15">{title}</text><text x="{0}" y="40" text-anchor="middle" font-size="11">judge: {1}</text>"#,
        W / 2.0,
        esc(&model)
    );
    axes(&mut s, r, &sx, &sy, pw, ph);
    // Judge: error bars, line, dots.
    let judge: Vec<(f64, f64)> = r
        .points
        .iter()
        .filter_map(|p| p.judge_accuracy.map(|a| (p.x, a.value)))
        .collect();
    for p in &r.points {
        if let Some(a) = p.judge_accuracy {
            let x = sx(p.x);
            let _ = writeln!(
                s,
                r##"<line x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="#1f77b4" stroke-opacity="0.5"/>"##,
                sy(a.low),
                sy(a.high)
            );
        }
    }
    line(&mut s, &judge, &sx, &sy, "#1f77b4", "");
    let trac: Vec<(f64, f64)> = r
        .points
        .iter()
        .filter_map(|p| p.trac_accuracy.map(|a| (p.x, a)))
        .collect();
    line(
        &mut s,
        &trac,
        &sx,
        &sy,
        "#d62728",
        r#" stroke-dasharray="6 4""#,
    );
    legend(&mut s);
    s.push_str("</svg>\n");
    s
}

/// The axes, the y grid and ticks, a tick and label per point, and the axis titles.
fn axes(
    s: &mut String,
    r: &SweepResult,
    sx: &dyn Fn(f64) -> f64,
    sy: &dyn Fn(f64) -> f64,
    pw: f64,
    ph: f64,
) {
    // Axes, y ticks and grid.
    let _ = writeln!(
        s,
        r#"<line x1="{LEFT}" y1="{}" x2="{}" y2="{}" stroke="black"/>"#,
        sy(0.0),
        LEFT + pw,
        sy(0.0)
    );
    let _ = writeln!(
        s,
        r#"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{}" stroke="black"/>"#,
        sy(0.0)
    );
    for k in 0..=5 {
        let y = k as f64 / 5.0;
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{0}" x2="{1}" y2="{0}" stroke="#ddd"/><text x="{2}" y="{3}" text-anchor="end">{y:.1}</text>"##,
            sy(y),
            LEFT + pw,
            LEFT - 6.0,
            sy(y) + 4.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text transform="translate(18 {}) rotate(-90)" text-anchor="middle">accuracy</text>"#,
        TOP + ph / 2.0
    );
    // X ticks: each point.
    for p in &r.points {
        let x = sx(p.x);
        let _ = writeln!(
            s,
            r#"<line x1="{x}" y1="{0}" x2="{x}" y2="{1}" stroke="black"/>"#,
            sy(0.0),
            sy(0.0) + 5.0
        );
        if r.sweep == Sweep::Language {
            let _ = writeln!(
                s,
                r#"<text transform="translate({} {}) rotate(-60)" text-anchor="end" font-size="10">{}</text>"#,
                x + 3.0,
                sy(0.0) + 10.0,
                esc(&p.label)
            );
        } else {
            let _ = writeln!(
                s,
                r#"<text x="{x}" y="{}" text-anchor="middle">{}</text>"#,
                sy(0.0) + 18.0,
                esc(&p.label)
            );
        }
    }
    let xlabel = match r.sweep {
        Sweep::Gap => "gap between the constrained events (steps, log scale)",
        Sweep::Constraints => "constraints judged in one trace",
        Sweep::Propositions => "entities per step",
        Sweep::Language => "pattern / rendering",
    };
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{xlabel}</text>"#,
        LEFT + pw / 2.0,
        H - 12.0
    );
}

/// The legend, one row above the plot.
fn legend(s: &mut String) {
    // One row between the title and the plot, outside the data.
    let (lx, ly) = (LEFT + 10.0, TOP - 20.0);
    let _ = writeln!(
        s,
        r##"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="#1f77b4" stroke-width="2"/><text x="{}" y="{}">LLM judge (95% Wilson interval)</text>"##,
        lx + 24.0,
        lx + 30.0,
        ly + 4.0
    );
    let lx = lx + 280.0;
    let _ = writeln!(
        s,
        r##"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="#d62728" stroke-width="2" stroke-dasharray="6 4"/><text x="{}" y="{}">TRAC (monitors, generated labels)</text>"##,
        lx + 24.0,
        lx + 30.0,
        ly + 4.0
    );
}

fn line(
    s: &mut String,
    pts: &[(f64, f64)],
    sx: &dyn Fn(f64) -> f64,
    sy: &dyn Fn(f64) -> f64,
    color: &str,
    extra: &str,
) {
    if pts.is_empty() {
        return;
    }
    let path: Vec<String> = pts
        .iter()
        .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
        .collect();
    let _ = writeln!(
        s,
        r#"<polyline fill="none" stroke="{color}" stroke-width="2"{extra} points="{}"/>"#,
        path.join(" ")
    );
    for &(x, y) in pts {
        let _ = writeln!(
            s,
            r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"/>"#,
            sx(x),
            sy(y)
        );
    }
}

fn esc(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
