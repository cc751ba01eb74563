//! The predictive interventions of `trac gateway` (`--intervene resample|inject|switch`), as
//! `trac run` has them (paper §4.2–4.3), on chat completions.
//!
//! **Risk of a response.** Before a response reaches the agent, each property's risk of a
//! violation within `k` model responses (`--predict k=K,n=N`), the response itself first, is
//! estimated by the library's estimator ([`trac_agent::predict::estimate`], the one
//! `trac run` uses): the exact look-ahead first ([`Conversation::lookahead`]: risk 1 when the
//! response itself leads the property to ⊥; with `k = 1` risk 0 otherwise, so no sample is
//! drawn; with `k > 1` what the automaton decides from the state after the response), then,
//! only for what it leaves open, `n` continuations sampled from the upstream: after the
//! response, each of its tool calls gets an empty tool result (as the paper does) and the
//! upstream is asked for the next response (the agent's request, not streamed, with these
//! messages appended), up to `k − 1` times or until a response without tool calls. Each
//! continuation is scored on cloned monitors ([`Supervisor::simulate_events`]); a property's
//! risk is the fraction that violate it. A property is at risk when its risk exceeds the
//! threshold τ (`--threshold`), as in `trac run`.
//!
//! **Interventions**, when some property is at risk: *resample* asks the upstream the same
//! request again, up to `--samples N` times (at least once), and takes the first answer none of
//! whose properties is at risk (else the least risky answer, the response included); *inject*
//! asks once with the at-risk properties' residuals in English appended to the system message
//! (one is added when the request has none); *switch* asks the substitute model
//! (`--substitute-model`) once. Each answer is predicted as the response was, its
//! continuations asked with the agent's own request (the agent goes on without the warning,
//! with its own model). The answer taken is committed and logged in place of the
//! response; the agent's own messages are never changed. Every intervention is a record in the
//! interventions file: `kind`, `properties`, `risks`, `residuals`, `replaced`, `by`, each
//! `candidates` answer with its risks, `chosen` (1-based, or `null` when the response was
//! kept) and `model_calls` (the response, the answers asked for, and every prediction sample).
//!
//! [`Supervisor::simulate_events`]: trac_agent::supervisor::Supervisor::simulate_events

use crate::api::ApiError;
use crate::conversation::{Conversation, Outcome, Screen};
use crate::gateway::{Gateway, Handle};
use crate::monitors::MonitorGone;
use crate::options::Intervene;
use crate::shield::Sample;
use serde_json::{json, Value};
use trac_agent::predict::{estimate, Prediction};

/// What the predictive interventions need of a chat request being served (the HTTP layer's
/// turn implements it).
pub(crate) trait Turn {
    /// The gateway.
    fn gateway(&self) -> &Gateway;
    /// The request's conversation.
    fn handle(&self) -> &Handle;
    /// The request as it is sent for another answer: not streamed.
    fn sample_body(&self) -> Vec<u8>;
    /// One answer of the upstream to `body`: its completion and assistant message, or why
    /// there is none, in words.
    fn draw(&self, body: &[u8]) -> Result<(Value, Value), String>;
    /// Response `message` committed as it is (checked first under shield, when `check`).
    fn take(&self, message: Value, check: bool) -> Result<Outcome, ApiError>;
}

/// The conversation's monitor thread stopped: HTTP 500.
fn gone(e: &MonitorGone) -> ApiError {
    ApiError::monitor_stopped(e)
}

/// `f` run on the conversation of `turn`, on its monitor thread.
fn on<R: Send + 'static>(
    turn: &dyn Turn,
    f: impl FnOnce(&mut Conversation) -> R + Send + 'static,
) -> Result<R, ApiError> {
    turn.gateway().with(turn.handle(), f).map_err(|e| gone(&e))
}

/// The response's message under `shield` with `--samples N` (both APIs): when it would
/// violate, the upstream is asked up to N more times (the same request, not streamed) and the
/// first sample that violates nothing replaces it; else it is replaced as `--on-block` says.
/// The whole answer of the chosen sample comes back with the outcome. Without shield or
/// samples, the message is taken as it is (checked under shield).
pub(crate) fn take_first_compliant(
    turn: &dyn Turn,
    message: Value,
) -> Result<(Outcome, Option<Value>), ApiError> {
    let gw = turn.gateway();
    let n = gw.options().samples;
    let Some(on_block) = gw.shield().filter(|_| n > 0) else {
        return turn.take(message, true).map(|o| (o, None));
    };
    let m = message.clone();
    let Screen::Violates(violations) = on(turn, move |c| c.screen(&m))? else {
        return turn.take(message, true).map(|o| (o, None));
    };
    let body = turn.sample_body();
    let mut samples = Vec::new();
    let mut chosen = None;
    for _ in 0..n {
        let (answer, m) = match turn.draw(&body) {
            Ok(d) => d,
            Err(error) => {
                samples.push(Sample {
                    message: None,
                    properties: Vec::new(),
                    error: Some(error),
                });
                continue;
            }
        };
        let probe = m.clone();
        let (properties, error, clean) = match on(turn, move |c| c.screen(&probe))? {
            Screen::Clean => (Vec::new(), None, true),
            Screen::Violates(v) => (v, None, false),
            Screen::Unread(why) => (Vec::new(), Some(why), false),
        };
        samples.push(Sample {
            message: Some(m),
            properties,
            error,
        });
        if clean {
            chosen = Some(answer);
            break;
        }
    }
    let log = gw.log();
    let picked = chosen.is_some();
    let outcome = on(turn, move |c| {
        c.take_resampled(
            &message,
            violations,
            samples,
            picked,
            on_block,
            log.as_deref(),
        )
    })?;
    Ok((outcome, chosen))
}

/// One answer of the upstream asked for by an intervention.
struct Candidate {
    /// Its completion (as the upstream sent it) and assistant message.
    answer: Option<(Value, Value)>,
    /// Its prediction (`None`: not drawn, or not readable as a chat message).
    prediction: Option<Prediction>,
    /// Why it could not be drawn.
    error: Option<String>,
}

/// The highest risk of a prediction (infinite without one: never preferred).
fn worst(p: Option<&Prediction>) -> f64 {
    p.map_or(f64::INFINITY, |p| {
        p.risks.iter().map(|r| r.p).fold(0.0, f64::max)
    })
}

/// The indices of the properties at risk (risk above `threshold`).
fn at_risk(p: &Prediction, threshold: f64) -> Vec<usize> {
    p.at_risk(threshold).into_iter().map(|(i, _)| i).collect()
}

impl Candidate {
    fn json(&self) -> Value {
        json!({
            "message": self.answer.as_ref().map(|(_, m)| m),
            "risks": self.prediction.as_ref().map(|p| &p.risks),
            "error": self.error,
        })
    }
}

/// `base` (a chat request) with its `messages` replaced, as a body.
fn with_messages(base: &Value, messages: &[Value]) -> Vec<u8> {
    let mut v = base.clone();
    v["messages"] = Value::Array(messages.to_vec());
    v.to_string().into_bytes()
}

/// `base` with `note` appended to its first system (or developer) message, or a system message
/// holding it put first when it has none.
pub fn inject_note(base: &Value, note: &str) -> Value {
    let mut v = base.clone();
    let Some(ms) = v.get_mut("messages").and_then(Value::as_array_mut) else {
        return v;
    };
    let system = ms
        .iter_mut()
        .find(|m| m["role"] == "system" || m["role"] == "developer");
    match system {
        Some(m) => {
            let text = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(""),
                _ => String::new(),
            };
            m["content"] = json!(format!("{text}\n\n{note}"));
        }
        None => ms.insert(0, json!({"role": "system", "content": note})),
    }
    v
}

/// The warning *inject* appends: the at-risk residuals in English.
fn warning(residuals: &[String]) -> String {
    format!(
        "Warning from the monitor: your next actions risk breaking these rules. Make sure that {}.",
        residuals.join("; and ")
    )
}

/// One continuation after response `first` (see the module docs): its messages (the response
/// first) and the model calls it took.
fn continuation(turn: &dyn Turn, base: &Value, first: &Value, k: u32) -> (Vec<Value>, u64) {
    let mut convo = base["messages"].as_array().cloned().unwrap_or_default();
    let mut out = vec![first.clone()];
    convo.push(first.clone());
    let mut last = first.clone();
    let mut calls = 0;
    for _ in 1..k {
        let Some(tool_calls) = last
            .get("tool_calls")
            .and_then(Value::as_array)
            .filter(|c| !c.is_empty())
            .cloned()
        else {
            break;
        };
        for c in &tool_calls {
            let r = json!({"role": "tool", "tool_call_id": c.get("id"), "content": ""});
            out.push(r.clone());
            convo.push(r);
        }
        calls += 1;
        match turn.draw(&with_messages(base, &convo)) {
            Ok((_, m)) => {
                out.push(m.clone());
                convo.push(m.clone());
                last = m;
            }
            Err(_) => break,
        }
    }
    (out, calls)
}

/// The prediction of response `message` to request `base` (see the module docs); `None` when
/// the message cannot be read as a chat message.
fn predict(turn: &dyn Turn, base: &Value, message: &Value) -> Result<Option<Prediction>, ApiError> {
    let p = turn.gateway().options().predict;
    let (k, n) = (p.k.max(1), p.n.max(1));
    let m = message.clone();
    let exact = on(turn, move |c: &mut Conversation| c.lookahead(&m, k))?;
    let Some(exact) = exact else {
        return Ok(None);
    };
    let nominal = n as u64 * u64::from(k - 1);
    let prediction = estimate(&exact, nominal, || {
        let mut continuations = Vec::with_capacity(n);
        let mut calls = 0;
        for _ in 0..n {
            let (c, spent) = continuation(turn, base, message, k);
            continuations.push(c);
            calls += spent;
        }
        let scored = on(turn, move |c: &mut Conversation| c.score(&continuations))?;
        Ok::<_, ApiError>((scored, calls))
    })?;
    Ok(Some(prediction))
}

/// Response `message` under resample, inject or switch: predicted, and replaced when some
/// property is at risk (see the module docs). The completion to send comes back when it was
/// replaced.
///
/// # Errors
/// The conversation's monitor thread stopped.
pub(crate) fn take(turn: &dyn Turn, message: Value) -> Result<(Outcome, Option<Value>), ApiError> {
    let opts = turn.gateway().options();
    let base: Value = serde_json::from_slice(&turn.sample_body()).unwrap_or(Value::Null);
    let Some(first) = predict(turn, &base, &message)? else {
        return turn.take(message, false).map(|o| (o, None));
    };
    let risky = at_risk(&first, opts.threshold);
    if risky.is_empty() {
        return turn.take(message, false).map(|o| (o, None));
    }
    let idx = risky.clone();
    let residuals = on(turn, move |c: &mut Conversation| c.residuals(&idx))?;
    let (body, asks) = match opts.intervene {
        Intervene::Inject => (inject_note(&base, &warning(&residuals)), 1),
        Intervene::Switch => {
            let mut b = base.clone();
            if let Some(m) = &opts.substitute_model {
                b["model"] = json!(m);
            }
            (b, 1)
        }
        _ => (base.clone(), opts.samples.max(1)),
    };
    let mut calls = 1 + first.calls;
    let mut candidates: Vec<Candidate> = Vec::new();
    for _ in 0..asks {
        calls += 1;
        let c = match turn.draw(&body.to_string().into_bytes()) {
            Err(error) => Candidate {
                answer: None,
                prediction: None,
                error: Some(error),
            },
            Ok((completion, m)) => {
                // Predicted as the agent's own next step: its continuations are asked of
                // the agent's request (no warning, its own model), as the agent goes on.
                let prediction = predict(turn, &base, &m)?;
                calls += prediction.as_ref().map_or(0, |p| p.calls);
                Candidate {
                    answer: Some((completion, m)),
                    prediction,
                    error: None,
                }
            }
        };
        let safe = c
            .prediction
            .as_ref()
            .is_some_and(|p| at_risk(p, opts.threshold).is_empty());
        candidates.push(c);
        if safe {
            break;
        }
    }
    let chosen = choose(opts.intervene, &first, &candidates);
    let record = json!({
        "kind": opts.intervene.as_str(),
        "properties": risky.iter().map(|&i| &first.risks[i].property).collect::<Vec<_>>(),
        "risks": risky.iter().map(|&i| first.risks[i].p).collect::<Vec<_>>(),
        "residuals": residuals,
        "threshold": opts.threshold,
        "predict": {"k": opts.predict.k, "n": opts.predict.n},
        "prediction": first.risks,
        "replaced": message,
        "by": chosen.map_or(&message, |i| &candidates[i].answer.as_ref().expect("chosen answers were drawn").1),
        "candidates": candidates.iter().map(Candidate::json).collect::<Vec<_>>(),
        "chosen": chosen.map(|i| i + 1),
        "model_calls": calls,
    });
    commit(
        turn,
        message,
        chosen.map(|i| (i + 1, &candidates[i])),
        record,
        calls,
    )
}

/// Which candidate replaces the response: under resample the first with no property at risk,
/// else the least risky when it is less risky than the response; under inject and switch the
/// answer, when it could be drawn and read.
fn choose(kind: Intervene, first: &Prediction, candidates: &[Candidate]) -> Option<usize> {
    let drawn = |c: &Candidate| c.answer.is_some() && c.prediction.is_some();
    if kind != Intervene::Resample {
        return candidates.iter().position(drawn);
    }
    let mut best: Option<(usize, f64)> = None;
    for (i, c) in candidates.iter().enumerate().filter(|(_, c)| drawn(c)) {
        let w = worst(c.prediction.as_ref());
        if best.is_none_or(|(_, b)| w < b) {
            best = Some((i, w));
        }
    }
    best.filter(|&(_, w)| w < worst(Some(first)))
        .map(|(i, _)| i)
}

/// Commits the response or the chosen candidate (its number, 1-based, and itself), with the
/// intervention's record.
fn commit(
    turn: &dyn Turn,
    message: Value,
    chosen: Option<(usize, &Candidate)>,
    record: Value,
    calls: u64,
) -> Result<(Outcome, Option<Value>), ApiError> {
    let sample = chosen.map_or(0, |(i, _)| i);
    let (by, completion) = match chosen.and_then(|(_, c)| c.answer.clone()) {
        Some((completion, m)) => (m, Some(completion)),
        None => (message, None),
    };
    let log = turn.gateway().log();
    let m = by.clone();
    let outcome = on(turn, move |c: &mut Conversation| {
        let extra = usize::try_from(calls.saturating_sub(1)).unwrap_or(usize::MAX);
        c.take_intervened(&m, record, extra, log.as_deref())
    })?;
    Ok(match (outcome, completion) {
        (Outcome::Pass, Some(completion)) => (
            Outcome::Resampled {
                message: by,
                sample,
                violations: Vec::new(),
            },
            Some(completion),
        ),
        (o, _) => (o, None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_goes_at_the_end_of_the_system_message_or_first() {
        let base = json!({"model": "m", "messages": [
            {"role": "system", "content": "Be kind."},
            {"role": "user", "content": "hi"},
        ]});
        let v = inject_note(&base, "NOTE");
        assert_eq!(v["messages"][0]["content"], "Be kind.\n\nNOTE");
        assert_eq!(v["messages"][1], base["messages"][1]);
        let bare = json!({"messages": [{"role": "user", "content": "hi"}]});
        let v = inject_note(&bare, "NOTE");
        assert_eq!(
            v["messages"],
            json!([{"role": "system", "content": "NOTE"}, {"role": "user", "content": "hi"}])
        );
    }
}
