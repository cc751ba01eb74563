//! OpenAI-style error responses of the gateway itself (`{"error": {"message", "type",
//! "code"}}`).

use serde_json::json;

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
