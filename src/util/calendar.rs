//! Calendar arithmetic on proleptic Gregorian dates, with no date crate in the wasm build:
//! day numbers since 1970-01-01 (Howard Hinnant's algorithms) and a [`Date`] that reads and
//! writes the forms conversations use (`8 May 2023`). The recorder (`memtrace-record`) writes
//! its timestamps with these too.

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `(year, month, day)` of a day number since 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

pub use crate::text::lexicon::MONTHS;

/// A calendar date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date {
    pub year: i64,
    pub month: i64,
    pub day: i64,
}

impl Date {
    /// `8 May 2023`.
    pub fn long(self) -> String {
        let m = usize::try_from(self.month - 1)
            .ok()
            .and_then(|i| MONTHS.get(i))
            .copied()
            .unwrap_or("January");
        format!("{} {m} {}", self.day, self.year)
    }

    /// `May 2023`.
    pub fn month_year(self) -> String {
        let m = usize::try_from(self.month - 1)
            .ok()
            .and_then(|i| MONTHS.get(i))
            .copied()
            .unwrap_or("January");
        format!("{m} {}", self.year)
    }

    /// Days since 1970-01-01.
    pub fn days(self) -> i64 {
        days_from_civil(self.year, self.month, self.day)
    }

    /// The date `days` later (earlier when negative).
    #[must_use]
    pub fn plus_days(self, days: i64) -> Date {
        let n = self.days() + days;
        let (year, month, day) = civil_from_days(n);
        Date { year, month, day }
    }

    /// The same day `months` later, clamped to the 28th.
    #[must_use]
    pub fn plus_months(self, months: i64) -> Date {
        let total = self.year * 12 + (self.month - 1) + months;
        Date {
            year: total.div_euclid(12),
            month: total.rem_euclid(12) + 1,
            day: self.day.min(28),
        }
    }

    /// Parses `8 May 2023`, `8 May, 2023` or `2023-05-08`.
    pub fn parse(text: &str) -> Option<Date> {
        let t = text.trim();
        if let (Some(y), Some(m), Some(d)) = (t.get(0..4), t.get(5..7), t.get(8..10)) {
            if let (Ok(year), Ok(month), Ok(day)) = (y.parse(), m.parse(), d.parse()) {
                return Some(Date { year, month, day });
            }
        }
        let words: Vec<String> = t
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect();
        let month = i64::try_from(
            words
                .iter()
                .find_map(|w| MONTHS.iter().position(|m| m.eq_ignore_ascii_case(w)))?,
        )
        .ok()?
            + 1;
        let day = words
            .iter()
            .find_map(|w| w.parse::<i64>().ok().filter(|d| (1..=31).contains(d)))?;
        let year = words
            .iter()
            .find_map(|w| w.parse::<i64>().ok().filter(|y| *y > 1000))?;
        Some(Date { year, month, day })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn day_numbers_round_trip() {
        for (y, m, d) in [
            (1970, 1, 1),
            (2000, 2, 29),
            (2023, 5, 8),
            (1969, 12, 31),
            (2100, 3, 1),
        ] {
            let n = days_from_civil(y, m, d);
            assert_eq!(civil_from_days(n), (y, m, d));
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
    }

    #[test]
    fn dates_read_and_move() {
        let d = Date::parse("8 May, 2023").unwrap_or(Date {
            year: 0,
            month: 1,
            day: 1,
        });
        assert_eq!(
            d,
            Date {
                year: 2023,
                month: 5,
                day: 8
            }
        );
        assert_eq!(Date::parse("2023-05-08"), Some(d));
        assert_eq!(d.plus_days(-8).long(), "30 April 2023");
        assert_eq!(d.plus_months(-5).month_year(), "December 2022");
        assert_eq!(Date::parse("no date here"), None);
    }
}
