//! OpenAI-style error responses of the gateway itself (`{"error": {"message", "type",
//! "code"}}`).

use serde_json::{json, Value};

/// `type` of a malformed client request (HTTP 400, 404, 405, 413).
pub const INVALID_REQUEST: &str = "invalid_request_error";

/// `type` of a response blocked under `--intervene shield --on-block error` (HTTP 400).
pub const BLOCKED: &str = "trac_blocked";

/// `type` of an upstream that gave no answer (HTTP 502): refused, timed out, closed, or a body
/// that could not be read.
pub const GATEWAY: &str = "trac_gateway_error";

/// An error answered by the gateway itself, in OpenAI's shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: u16,
    /// The error's `type` ([`INVALID_REQUEST`], [`BLOCKED`], [`GATEWAY`]).
    pub kind: &'static str,
    /// The error's `code`, if any (`upstream_unreachable`, a property id).
    pub code: Option<String>,
    /// What went wrong, in words (never an API key).
    pub message: String,
}

impl ApiError {
    /// The conversation's monitor thread stopped (`e` says why): HTTP 500, `monitor_stopped`.
    pub fn monitor_stopped(e: &dyn std::fmt::Display) -> ApiError {
        ApiError {
            status: 500,
            kind: GATEWAY,
            code: Some("monitor_stopped".into()),
            message: format!("trac gateway: {e}"),
        }
    }

    /// A malformed request: HTTP 400.
    pub fn invalid(message: impl Into<String>) -> ApiError {
        ApiError {
            status: 400,
            kind: INVALID_REQUEST,
            code: None,
            message: message.into(),
        }
    }

    /// No answer from the upstream: HTTP 502.
    pub fn upstream(code: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            status: 502,
            kind: GATEWAY,
            code: Some(code.to_string()),
            message: message.into(),
        }
    }

    /// A chat request asking for more than one choice (`"n": 2` or more) is refused with HTTP
    /// 400: the agent keeps one of the choices and the gateway cannot tell which, so no choice
    /// could be the conversation's next step (monitored, logged, shielded). `n` of 1, null or
    /// absent passes. (Ask several times instead: each request is one step.)
    ///
    /// # Errors
    /// 400, param `n`, naming the value.
    pub fn one_choice(request: &Value) -> Result<(), ApiError> {
        match request.get("n") {
            None | Some(Value::Null) => Ok(()),
            Some(n) if n.as_u64() == Some(1) => Ok(()),
            Some(n) => Err(ApiError::invalid(format!(
                "trac gateway: 'n' is {n}: only one choice per request is supported (the agent keeps one choice, and the gateway cannot tell which would be the conversation's next step); send the request several times instead"
            ))),
        }
    }

    /// The JSON body.
    pub fn body(&self) -> Vec<u8> {
        json!({"error": {
            "message": self.message,
            "type": self.kind,
            "param": null,
            "code": self.code,
        }})
        .to_string()
        .into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_choice_passes_and_more_are_refused() {
        for ok in [json!({}), json!({"n": null}), json!({"n": 1})] {
            assert_eq!(ApiError::one_choice(&ok), Ok(()), "{ok}");
        }
        for bad in [json!({"n": 2}), json!({"n": 0}), json!({"n": "1"})] {
            let e = ApiError::one_choice(&bad).unwrap_err();
            assert_eq!((e.status, e.kind), (400, INVALID_REQUEST), "{bad}");
        }
    }
}
