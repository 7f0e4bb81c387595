//! The one retry policy for running a method on a case, for every host: a case whose run fails
//! (after the provider's own retries) is tried again, [`CASE_ATTEMPTS`] times in all, unless
//! running it again cannot help.

use crate::attribution::AttributionError;
use crate::provider::ProviderError;

/// Attempts per case, the first included.
pub const CASE_ATTEMPTS: u32 = 3;

/// Whether a case whose `attempt`-th run (1-based) failed with `error` is run again: not after
/// [`CASE_ATTEMPTS`] attempts, not for a permanent provider error (a rejected key, a wrong URL or
/// model), not for a cancelled run, and not for a run that ended without a valid answer (the
/// step cap, replies that stayed malformed): that is the model's answer, and running it again
/// would only pay twice.
pub fn retry_case(attempt: u32, error: &AttributionError) -> bool {
    attempt < CASE_ATTEMPTS
        && !error.is_permanent()
        && !matches!(
            error,
            AttributionError::Unresolvable { .. }
                | AttributionError::Provider {
                    error: ProviderError::Cancelled,
                    ..
                }
        )
}

/// Runs `run` (given the 1-based attempt number) until it succeeds or [`retry_case`] says stop;
/// the last error when none succeeded. For synchronous runs; [`with_retries_async`] for the
/// LLM methods.
///
/// # Errors
/// The last attempt's error.
pub fn with_retries<T>(
    mut run: impl FnMut(u32) -> Result<T, AttributionError>,
) -> Result<T, AttributionError> {
    let mut attempt = 1;
    loop {
        match run(attempt) {
            Ok(v) => return Ok(v),
            Err(e) if retry_case(attempt, &e) => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}

/// As [`with_retries`], for runs that are futures (the LLM methods in every host).
///
/// # Errors
/// The last attempt's error.
pub async fn with_retries_async<T, F, Fut>(mut run: F) -> Result<T, AttributionError>
where
    F: FnMut(u32) -> Fut,
    Fut: std::future::Future<Output = Result<T, AttributionError>>,
{
    let mut attempt = 1;
    loop {
        match run(attempt).await {
            Ok(v) => return Ok(v),
            Err(e) if retry_case(attempt, &e) => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transient() -> AttributionError {
        AttributionError::Provider {
            case_id: "q".into(),
            purpose: "step".into(),
            error: ProviderError::Timeout { after_ms: 5 },
        }
    }

    #[test]
    fn a_transient_failure_is_tried_three_times_in_all() {
        let mut seen = Vec::new();
        let r: Result<(), _> = with_retries(|n| {
            seen.push(n);
            Err(transient())
        });
        assert!(r.is_err());
        assert_eq!(seen, vec![1, 2, 3]);
        let mut n = 0;
        let ok = with_retries(|a| {
            n = a;
            if a < 2 {
                Err(transient())
            } else {
                Ok(a)
            }
        });
        assert_eq!((ok, n), (Ok(2), 2));
        let mut seen = Vec::new();
        let r: Result<(), _> = futures_executor::block_on(with_retries_async(|n| {
            seen.push(n);
            std::future::ready(Err(transient()))
        }));
        assert!(r.is_err());
        assert_eq!(seen, vec![1, 2, 3]);
    }

    #[test]
    fn an_unresolvable_case_is_not_run_again() {
        let mut calls = 0;
        let r: Result<(), _> = with_retries(|_| {
            calls += 1;
            Err(AttributionError::Unresolvable {
                case_id: "q".into(),
                reason: "step cap".into(),
            })
        });
        assert_eq!(calls, 1);
        assert!(r.unwrap_err().to_string().contains("step cap"));
    }
}
