//! When to try again and how long to wait: exponential backoff with seeded jitter, at least as
//! long as the server's `Retry-After`.

use serde::{Deserialize, Serialize};

use crate::util::rng::SplitMix64;

/// Retry settings of a provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetryPolicy {
    /// Retries after the first attempt; 0 turns retrying off.
    pub max_retries: u32,
    /// The wait before the first retry, doubled for each further one.
    pub base_delay_ms: u64,
    /// The backoff never exceeds this (a longer `Retry-After` is still honoured).
    pub max_delay_ms: u64,
    /// Seeds the jitter, so a run is reproducible.
    pub seed: u64,
    /// A `Retry-After` longer than this (a daily quota, say) ends the call with an error
    /// instead of a long silent wait.
    pub max_retry_after_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 6,
            base_delay_ms: 500,
            max_delay_ms: 30_000,
            seed: 0x6d65_6d74,
            max_retry_after_ms: 120_000,
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0-based): `min(max, base * 2^retry)`, of which the
    /// upper half is jittered, raised to `retry_after_ms` when the server asked for more.
    pub fn delay_ms(&self, retry: u32, retry_after_ms: Option<u64>, rng: &mut SplitMix64) -> u64 {
        let exp = self
            .base_delay_ms
            .saturating_mul(1u64 << retry.min(30))
            .min(self.max_delay_ms);
        let half = exp / 2;
        let jittered = half + rng.next_u64() % (exp - half + 1);
        jittered.max(retry_after_ms.unwrap_or(0))
    }
}

/// Whether an HTTP status is worth retrying: 408, 429 and every 5xx.
pub fn is_retryable_status(status: u16) -> bool {
    status == 408 || status == 429 || (500..=599).contains(&status)
}

/// Reads how long the server asked to wait: `retry-after-ms` (`OpenAI`) or `retry-after` in
/// seconds (integer or decimal). An HTTP-date cannot be read without a clock and is ignored.
pub fn retry_after_ms(headers: &[(String, String)]) -> Option<u64> {
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
    };
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return to_ms(ms);
    }
    let secs = get("retry-after")?.parse::<f64>().ok()?;
    to_ms(secs * 1000.0)
}

#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // checked finite and >= 0
fn to_ms(ms: f64) -> Option<u64> {
    (ms.is_finite() && ms >= 0.0).then(|| ms.ceil().min(u64::MAX as f64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_with_jitter_within_bounds() {
        let p = RetryPolicy {
            max_retries: 5,
            base_delay_ms: 100,
            max_delay_ms: 1000,
            seed: 1,
            ..RetryPolicy::default()
        };
        let mut rng = SplitMix64::new(p.seed);
        for retry in 0..8 {
            let exp = (100u64 << retry).min(1000);
            let d = p.delay_ms(retry, None, &mut rng);
            assert!(
                d >= exp / 2 && d <= exp,
                "retry {retry}: {d} not in [{}, {exp}]",
                exp / 2
            );
        }
        let spread: std::collections::BTreeSet<u64> =
            (0..20).map(|_| p.delay_ms(3, None, &mut rng)).collect();
        assert!(spread.len() > 5, "jitter varies: {spread:?}");
    }

    #[test]
    fn retry_after_wins_when_longer() {
        let p = RetryPolicy::default();
        let mut rng = SplitMix64::new(7);
        assert_eq!(p.delay_ms(0, Some(90_000), &mut rng), 90_000);
        assert!(p.delay_ms(0, Some(1), &mut rng) >= 250);
    }

    #[test]
    fn reads_retry_after_headers() {
        let h = |k: &str, v: &str| vec![(k.to_owned(), v.to_owned())];
        assert_eq!(retry_after_ms(&h("Retry-After", "2")), Some(2000));
        assert_eq!(retry_after_ms(&h("retry-after", "0.25")), Some(250));
        assert_eq!(retry_after_ms(&h("retry-after-ms", "1500")), Some(1500));
        assert_eq!(
            retry_after_ms(&h("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")),
            None
        );
        assert_eq!(retry_after_ms(&h("retry-after", "-3")), None);
        assert_eq!(retry_after_ms(&[]), None);
    }

    #[test]
    fn retryable_statuses() {
        assert!(is_retryable_status(429) && is_retryable_status(503) && is_retryable_status(408));
        assert!(
            !is_retryable_status(400) && !is_retryable_status(401) && !is_retryable_status(404)
        );
    }
}
