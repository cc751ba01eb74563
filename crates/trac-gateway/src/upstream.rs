//! The upstream OpenAI-compatible server, on ureq: requests forwarded with the client's
//! credentials, answers returned whatever their status.

use crate::api::ApiError;
use crate::options::{GatewayError, GatewayOptions};
use std::io::Read;
use ureq::http::Response;
use ureq::Body;

/// Request headers passed through to the upstream (credentials, OpenAI's and Anthropic's own
/// headers); no other, so no hop-by-hop header (`Connection`, `Host`, `Content-Length`) is
/// copied. Their values are never logged.
pub const FORWARDED_REQUEST_HEADERS: [&str; 10] = [
    "authorization",
    "api-key",
    "x-api-key",
    "openai-organization",
    "openai-project",
    "openai-beta",
    "anthropic-version",
    "anthropic-beta",
    "content-type",
    "accept",
];

/// Whether response header `name` is passed back to the client: the content type,
/// `Retry-After`, request ids and rate-limit headers (OpenAI's and Anthropic's).
pub fn forwarded_response_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    matches!(
        n.as_str(),
        "content-type" | "retry-after" | "x-request-id" | "request-id"
    ) || n.starts_with("x-ratelimit-")
        || n.starts_with("openai-")
        || n.starts_with("anthropic-")
}

/// The largest upstream body read whole (a non-streamed answer, or a stream under `shield`).
pub const MAX_UPSTREAM_BODY: u64 = 256 << 20;

/// The upstream server.
#[derive(Clone, Debug)]
pub struct Upstream {
    agent: ureq::Agent,
    base: String,
}

/// An upstream answer read whole.
#[derive(Clone, Debug)]
pub struct Answer {
    /// Its HTTP status.
    pub status: u16,
    /// The headers passed back ([`forwarded_response_header`]).
    pub headers: Vec<(String, String)>,
    /// Its body, as sent.
    pub body: Vec<u8>,
}

impl Answer {
    /// Whether the status is 2xx.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

impl Upstream {
    /// The upstream of `opts`.
    ///
    /// # Errors
    /// [`GatewayError::BadUpstream`]: not an http(s) URL.
    pub fn new(opts: &GatewayOptions) -> Result<Upstream, GatewayError> {
        let url = opts.upstream.trim().trim_end_matches('/');
        let rest = url
            .strip_prefix("http://")
            .or_else(|| url.strip_prefix("https://"))
            .filter(|r| !r.is_empty() && !r.starts_with('/'))
            .ok_or_else(|| GatewayError::BadUpstream {
                url: opts.upstream.clone(),
            })?;
        let base = if rest.contains('/') {
            url.to_string()
        } else {
            format!("{url}/v1")
        };
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(opts.upstream_timeout))
            .timeout_connect(Some(opts.connect_timeout))
            // Keep-alive connections are pooled (ureq's default). They once were not: a tiny_http
            // upstream left a new connection unread behind busy keep-alive ones, a bug of its
            // thread pool now patched in vendor/tiny_http (TRAC-PATCH.md).
            .user_agent(concat!("trac-gateway/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Ok(Upstream { agent, base })
    }

    /// The URL of gateway path `path` (`/v1/chat/completions` → `BASE/chat/completions`; a
    /// query string, such as Azure's `?api-version=`, is kept).
    pub fn url(&self, path: &str) -> String {
        let rest = path.strip_prefix("/v1").unwrap_or(path);
        format!("{}{rest}", self.base)
    }

    /// Sends `body` to `path` (POST, or GET when `None`) with the client's `headers` that are
    /// [`FORWARDED_REQUEST_HEADERS`]; the answer's body is left to read (a stream).
    ///
    /// # Errors
    /// No answer (refused, timed out, a broken connection): HTTP 502 for the client.
    pub fn send(
        &self,
        path: &str,
        headers: &[(String, String)],
        body: Option<&[u8]>,
    ) -> Result<Response<Body>, ApiError> {
        let url = self.url(path);
        let pick = |h: &&(String, String)| {
            FORWARDED_REQUEST_HEADERS.contains(&h.0.to_ascii_lowercase().as_str())
        };
        let result = match body {
            Some(b) => {
                let mut call = self.agent.post(&url);
                for (k, v) in headers.iter().filter(pick) {
                    call = call.header(k, v);
                }
                // A client that names no type sent JSON (the gateway parsed it).
                if !headers
                    .iter()
                    .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
                {
                    call = call.header("Content-Type", "application/json");
                }
                call.send(b)
            }
            None => {
                let mut call = self.agent.get(&url);
                for (k, v) in headers.iter().filter(pick) {
                    call = call.header(k, v);
                }
                call.call()
            }
        };
        result.map_err(|e| redacted(unreachable_error(&url, &e), headers))
    }

    /// [`Upstream::send`], and the answer read whole.
    ///
    /// # Errors
    /// As [`Upstream::send`], and a body that cannot be read to its end (HTTP 502).
    pub fn fetch(
        &self,
        path: &str,
        headers: &[(String, String)],
        body: Option<&[u8]>,
    ) -> Result<Answer, ApiError> {
        let url = self.url(path);
        let mut resp = self.send(path, headers, body)?;
        let status = resp.status().as_u16();
        let sent = headers;
        let headers = response_headers(&resp);
        let body = resp
            .body_mut()
            .with_config()
            .limit(MAX_UPSTREAM_BODY)
            .read_to_vec()
            .map_err(|e| redacted(unreadable_error(&url, &e), sent))?;
        Ok(Answer {
            status,
            headers,
            body,
        })
    }
}

/// The headers of `resp` passed back to the client.
pub fn response_headers(resp: &Response<Body>) -> Vec<(String, String)> {
    resp.headers()
        .iter()
        .filter(|(k, _)| forwarded_response_header(k.as_str()))
        .filter_map(|(k, v)| Some((k.as_str().to_string(), v.to_str().ok()?.to_string())))
        .collect()
}

/// The 502 of an upstream that gave no answer.
fn unreachable_error(url: &str, e: &ureq::Error) -> ApiError {
    ApiError::upstream(
        "upstream_unreachable",
        format!("trac gateway: the upstream {url} gave no answer: {e}"),
    )
}

/// The 502 of an upstream answer whose body could not be read.
pub fn unreadable_error(url: &str, e: &dyn std::fmt::Display) -> ApiError {
    ApiError::upstream(
        "upstream_unreadable",
        format!("trac gateway: the answer of the upstream {url} could not be read: {e}"),
    )
}

/// Reads what `reader` has now into `buf` (at most its length): `Ok(0)` at the end.
///
/// # Errors
/// The reader's.
pub fn read_some(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match reader.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

/// Request headers whose values are secrets: never printed or logged.
pub const SECRET_HEADERS: [&str; 3] = ["authorization", "api-key", "x-api-key"];

/// What replaces a secret in a text ([`redact`]).
pub const REDACTED: &str = "[redacted]";

/// The secrets of request `headers`: the values of [`SECRET_HEADERS`], and of an
/// `Authorization` value its credentials without the scheme (`Bearer sk-...` gives `sk-...`
/// too, since an upstream may echo either). Values under 8 characters are left out (they
/// would mask ordinary words).
pub fn secrets(headers: &[(String, String)]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (k, v) in headers {
        if !SECRET_HEADERS.contains(&k.to_ascii_lowercase().as_str()) {
            continue;
        }
        let v = v.trim();
        let token = v.split_once(' ').map_or(v, |(_, t)| t.trim());
        for s in [v, token] {
            if s.len() >= 8 && !out.iter().any(|o| o == s) {
                out.push(s.to_string());
            }
        }
    }
    // Longest first: `Bearer sk-...` is masked whole before `sk-...`.
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out
}

/// `text` with every secret of request `headers` ([`secrets`]) replaced by [`REDACTED`]: for
/// any upstream text trac prints or logs (an error body can echo the API key: `Incorrect API
/// key provided: sk-...`).
pub fn redact(text: &str, headers: &[(String, String)]) -> String {
    let mut out = text.to_string();
    for s in secrets(headers) {
        out = out.replace(&s, REDACTED);
    }
    out
}

/// `e` with its message [`redact`]ed.
fn redacted(mut e: ApiError, headers: &[(String, String)]) -> ApiError {
    e.message = redact(&e.message, headers);
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_the_request_are_masked_in_any_text() {
        let h = |k: &str, v: &str| (k.to_string(), v.to_string());
        let headers = vec![
            h("Authorization", "Bearer sk-live-0123456789"),
            h("api-key", "azure-key-abcdef"),
            h("x-api-key", "short"),
            h("Content-Type", "application/json-secretive"),
        ];
        let text =
            "Incorrect API key provided: Bearer sk-live-0123456789; also sk-live-0123456789 \
                    and azure-key-abcdef, not short, application/json-secretive";
        let out = redact(text, &headers);
        assert!(!out.contains("sk-live"), "{out}");
        assert!(!out.contains("azure-key"), "{out}");
        assert_eq!(out.matches(REDACTED).count(), 3, "{out}");
        assert!(
            out.contains("not short") && out.contains("json-secretive"),
            "{out}"
        );
    }
}
