//! Time comes in through [`Clock`], so the recorder runs the same natively, in the browser and
//! in tests. Timestamps are written as smartcomment does: local `YYYY-MM-DD HH:MM:SS.mmm`.

use std::sync::atomic::{AtomicI64, Ordering};

use memtrace::util::calendar::{civil_from_days, days_from_civil};

/// A source of wall-clock time: milliseconds since 1970-01-01 00:00 local time.
pub trait Clock: Send + Sync {
    /// The current time in milliseconds.
    fn now_ms(&self) -> i64;
}

/// A deterministic clock: starts at `start_ms` and moves `step_ms` forward on every reading.
#[derive(Debug)]
pub struct SteppingClock {
    next_ms: AtomicI64,
    step_ms: i64,
}

impl SteppingClock {
    /// A clock reading `start_ms`, then `start_ms + step_ms`, and so on.
    pub fn new(start_ms: i64, step_ms: i64) -> Self {
        Self {
            next_ms: AtomicI64::new(start_ms),
            step_ms,
        }
    }

    /// A clock starting at `timestamp` (`YYYY-MM-DD HH:MM:SS[.mmm]`), or at the epoch if it
    /// does not parse.
    pub fn starting_at(timestamp: &str, step_ms: i64) -> Self {
        Self::new(parse_timestamp(timestamp).unwrap_or(0), step_ms)
    }
}

impl Clock for SteppingClock {
    fn now_ms(&self) -> i64 {
        self.next_ms.fetch_add(self.step_ms, Ordering::Relaxed)
    }
}

/// Formats milliseconds since the epoch as `YYYY-MM-DD HH:MM:SS.mmm`.
///
/// # Complexity
/// O(1).
pub fn format_timestamp(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, min, s, milli) = (
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000,
    );
    format!("{y:04}-{m:02}-{d:02} {h:02}:{min:02}:{s:02}.{milli:03}")
}

/// Parses `YYYY-MM-DD HH:MM:SS[.mmm]` (or with `T`) into milliseconds since the epoch.
pub fn parse_timestamp(s: &str) -> Option<i64> {
    let num = |r: std::ops::Range<usize>| s.get(r).and_then(|t| t.parse::<i64>().ok());
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let milli = s
        .get(20..23)
        .and_then(|t| t.parse::<i64>().ok())
        .unwrap_or(0);
    Some(days_from_civil(y, m, d) * 86_400_000 + h * 3_600_000 + min * 60_000 + sec * 1000 + milli)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let t = "2026-11-29 09:18:34.597";
        assert_eq!(format_timestamp(parse_timestamp(t).unwrap_or_default()), t);
        assert_eq!(format_timestamp(0), "1970-01-01 00:00:00.000");
        assert_eq!(
            days_from_civil(2024, 2, 29) + 1,
            days_from_civil(2024, 3, 1)
        );
    }

    #[test]
    fn stepping() {
        let c = SteppingClock::new(1000, 5);
        assert_eq!((c.now_ms(), c.now_ms()), (1000, 1005));
    }
}
