//! Timestamps of the imported formats, converted to smartcomment's `YYYY-MM-DD HH:MM:SS.mmm` (UTC).
//!
//! Two small conversions (unix nanoseconds ↔ civil time, RFC 3339 parsing) written here instead
//! of pulling a date crate into the wasm build, over [`crate::util::calendar`].

use crate::util::calendar::{civil_from_days, days_from_civil};

/// Nanoseconds in one second.
const NANOS_PER_SEC: i128 = 1_000_000_000;

/// Formats unix nanoseconds (UTC) as `YYYY-MM-DD HH:MM:SS.mmm`.
///
/// # Example
/// ```
/// use memtrace::format::time::format_nanos;
/// assert_eq!(format_nanos(1_714_557_600_123_456_789), "2024-05-01 10:00:00.123");
/// ```
pub fn format_nanos(nanos: u64) -> String {
    let nanos = i128::from(nanos);
    let secs = nanos / NANOS_PER_SEC;
    let millis = (nanos % NANOS_PER_SEC) / 1_000_000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{millis:03}",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Parses an RFC 3339 / ISO 8601 timestamp (`2024-05-01T10:00:00.123Z`, `+02:00` offsets, a
/// space for `T`, no zone = UTC) into unix nanoseconds. `None` when it is not one, or before 1970.
///
/// # Example
/// ```
/// use memtrace::format::time::parse_rfc3339;
/// assert_eq!(parse_rfc3339("2024-05-01T12:00:00.123+02:00"), Some(1_714_557_600_123_000_000));
/// ```
pub fn parse_rfc3339(text: &str) -> Option<u64> {
    let bytes = text.trim().as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = bytes.get(r)?;
        if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    let sep = |pos: usize, c: &[u8]| bytes.get(pos).is_some_and(|x| c.contains(x));
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut pos = 19;
    let mut frac_nanos: i64 = 0;
    if bytes.get(pos) == Some(&b'.') {
        pos += 1;
        let start = pos;
        while bytes.get(pos).is_some_and(u8::is_ascii_digit) {
            if pos - start < 9 {
                frac_nanos = frac_nanos * 10 + i64::from(bytes[pos] - b'0');
            }
            pos += 1;
        }
        if pos == start {
            return None;
        }
        for _ in (pos - start)..9 {
            frac_nanos *= 10;
        }
    }
    let offset_secs = match bytes.get(pos) {
        None => 0,
        Some(b'Z' | b'z') if pos + 1 == bytes.len() => 0,
        Some(&c @ (b'+' | b'-')) if bytes.len() == pos + 6 && bytes[pos + 3] == b':' => {
            let (h, m) = (num(pos + 1..pos + 3)?, num(pos + 4..pos + 6)?);
            let sign = if c == b'+' { 1 } else { -1 };
            sign * (h * 3600 + m * 60)
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_secs;
    let nanos = i128::from(secs) * NANOS_PER_SEC + i128::from(frac_nanos);
    u64::try_from(nanos).ok()
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanos_round_trip_through_text() {
        for nanos in [
            0u64,
            951_782_400_000_000_000,
            1_714_557_600_123_456_789,
            4_102_444_799_999_000_000,
        ] {
            let text = format_nanos(nanos);
            let back = parse_rfc3339(&text).unwrap();
            assert_eq!(back, nanos - nanos % 1_000_000, "{text}");
        }
        assert_eq!(
            format_nanos(951_782_400_000_000_000),
            "2000-02-29 00:00:00.000"
        );
    }

    #[test]
    fn rfc3339_variants() {
        let utc = parse_rfc3339("2024-05-01T10:00:00Z").unwrap();
        assert_eq!(parse_rfc3339("2024-05-01T11:30:00+01:30"), Some(utc));
        assert_eq!(parse_rfc3339("2024-05-01 10:00:00"), Some(utc));
        assert_eq!(
            parse_rfc3339("2024-05-01T10:00:00.5Z"),
            Some(utc + 500_000_000)
        );
        for bad in [
            "yesterday",
            "2024-13-01T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2024-05-01T10:00:00.Z",
            "2024-05-01T10:00:00+0100",
            "1969-12-31T23:59:59Z",
            "",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
