//! Retry policy: exponential backoff with jitter, bounded in count and in time.

use std::time::Duration;

/// When and how long to wait before calling a model again after a transient failure
/// (connection error, timeout, HTTP 408, 429 or 5xx but 501 and 505: [`is_retryable_status`];
/// unreadable body).
///
/// Retry `k` (0-based) waits `min(max_delay, base_delay · 2^k)` scaled by a random factor in
/// `[0.5, 1]` ("equal jitter"), or the server's `Retry-After` when it gives one. No retry starts
/// when it would end past `max_total` after the first call began, nor after `max_retries`
/// retries: the call then fails with the last error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first call (0: no retry). Default 4.
    pub max_retries: u32,
    /// The first backoff. Default 0.5 s.
    pub base_delay: Duration,
    /// The longest computed backoff. A server's `Retry-After` is honoured as given, unless it
    /// would overrun `max_total`, which ends the retries. Default 20 s.
    pub max_delay: Duration,
    /// The whole time budget of one call with its retries (calls and waits). Default 180 s.
    pub max_total: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
            max_total: Duration::from_secs(180),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> RetryPolicy {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// The backoff before retry `k` (0-based), with jitter drawn from `rng`.
    pub fn backoff(&self, k: u32, rng: &mut fastrand::Rng) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(1u32.checked_shl(k.min(30)).unwrap_or(u32::MAX));
        let capped = exp.min(self.max_delay);
        capped.mul_f64(0.5 + 0.5 * rng.f64())
    }
}

/// Parses a `Retry-After` header given in seconds (`"2"`, `"1.5"`). HTTP dates are not
/// supported (`None`: the caller backs off as usual).
pub fn parse_retry_after(v: &str) -> Option<Duration> {
    let s: f64 = v.trim().parse().ok()?;
    (s.is_finite() && s >= 0.0).then(|| Duration::from_secs_f64(s.min(86_400.0)))
}

/// Whether an HTTP error status is worth a retry: 408 (request timeout), 429 (too many
/// requests) and the 5xx of an overloaded or failing server. Not the other 4xx (the request
/// itself is refused: bad, unauthorized, forbidden, not found) nor 501 (not implemented: not an
/// API server, as Python's `http.server` answers a POST) and 505 (HTTP version not supported):
/// the same request would get the same answer.
pub fn is_retryable_status(status: u16) -> bool {
    match status {
        408 | 429 => true,
        501 | 505 => false,
        s => (500..600).contains(&s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            ..RetryPolicy::default()
        };
        let mut rng = fastrand::Rng::with_seed(7);
        for k in 0..40 {
            let d = p.backoff(k, &mut rng);
            let full = Duration::from_millis(100)
                .saturating_mul(1 << k.min(20))
                .min(Duration::from_millis(1000));
            assert!(d <= full && d >= full / 2, "k={k} d={d:?} full={full:?}");
        }
    }

    #[test]
    fn retry_after_seconds() {
        assert_eq!(parse_retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after(" 0.5 "), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }
}
