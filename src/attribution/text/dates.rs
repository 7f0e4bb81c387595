//! Dates in free text, as spans of days: absolute (`27 March 2023`, `March 27, 2023`,
//! `2023-03-27`, `March 2023`, `2023`), relative to a stated date (`the week before 9 June
//! 2023`, `the Sunday before 25 May 2023`), and relative to the text's own time (`yesterday`,
//! `last week`, `3 days ago`), which resolve only when that time (the anchor) is known.

use crate::util::calendar::{civil_from_days, days_from_civil, Date, MONTHS};

/// A word of a text: its raw spelling, lower-cased form, the separator before it, and whether
/// it starts a sentence.
#[derive(Debug, Clone)]
pub struct Tok<'a> {
    pub raw: &'a str,
    pub low: String,
    pub gap: &'a str,
    pub starts_sentence: bool,
}

/// The `[A-Za-z0-9]+` words of a text.
pub fn toks<'a>(text: &'a str) -> Vec<Tok<'a>> {
    let mut out = Vec::new();
    let (mut from, mut gap_from) = (None, 0);
    let push = |s: usize, e: usize, gap_from: usize, out: &mut Vec<Tok<'a>>| {
        let gap = text.get(gap_from..s).unwrap_or("");
        let raw = text.get(s..e).unwrap_or("");
        out.push(Tok {
            raw,
            low: raw.to_ascii_lowercase(),
            gap,
            starts_sentence: out.is_empty()
                || gap.contains(['.', '!', '?', '\n', ':', ';', '"', '(']),
        });
    };
    for (i, c) in text.char_indices() {
        match (c.is_ascii_alphanumeric(), from) {
            (true, None) => from = Some(i),
            (false, Some(s)) => {
                push(s, i, gap_from, &mut out);
                from = None;
                gap_from = i;
            }
            _ => {}
        }
    }
    if let Some(s) = from {
        push(s, text.len(), gap_from, &mut out);
    }
    out
}

/// A date mentioned in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mention {
    /// Any day in `lo..=hi` (days since 1970-01-01).
    Span { lo: i64, hi: i64, text: String },
    /// A day and month with no year (`27 March`).
    Yearless { month: i64, day: i64, text: String },
    /// Relative to a time the text does not state (`last week` with no anchor).
    Unresolved { text: String },
}

impl Mention {
    /// The words it was read from.
    pub fn text(&self) -> &str {
        match self {
            Mention::Span { text, .. }
            | Mention::Yearless { text, .. }
            | Mention::Unresolved { text } => text,
        }
    }

    /// True when every day it may mean lies within `gold` (a span): it states the gold date,
    /// as precisely, in any form.
    pub fn within(&self, gold: &Mention) -> bool {
        let Mention::Span {
            lo: glo, hi: ghi, ..
        } = gold
        else {
            return match (self, gold) {
                (
                    Mention::Yearless { month, day, .. },
                    Mention::Yearless {
                        month: m, day: d, ..
                    },
                ) => (month, day) == (m, d),
                (Mention::Span { lo, hi, .. }, Mention::Yearless { month, day, .. }) => {
                    let (_, m, d) = civil_from_days(*lo);
                    lo == hi && (m, d) == (*month, *day)
                }
                _ => self.text() == gold.text(),
            };
        };
        match self {
            Mention::Span { lo, hi, .. } => glo <= lo && hi <= ghi,
            Mention::Yearless { month, day, .. } => {
                let (y0, y1) = (civil_from_days(*glo).0, civil_from_days(*ghi).0);
                (y0..=y1)
                    .map(|y| days_from_civil(y, *month, *day))
                    .any(|d| *glo <= d && d <= *ghi)
            }
            Mention::Unresolved { .. } => false,
        }
    }

    /// True when no day it may mean lies within `gold`: it states another date.
    pub fn disjoint(&self, gold: &Mention) -> bool {
        match (self, gold) {
            (
                Mention::Span { lo, hi, .. },
                Mention::Span {
                    lo: glo, hi: ghi, ..
                },
            ) => hi < glo || ghi < lo,
            (Mention::Yearless { .. }, _) | (_, Mention::Yearless { .. }) => {
                !matches!(self, Mention::Unresolved { .. }) && !self.within(gold)
            }
            _ => false,
        }
    }
}

const WEEKDAYS: [&str; 7] = [
    "sunday",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
];

/// The 1-based month a word names (full name or three-letter form; `may` only in full).
pub fn month_of(w: &str) -> Option<i64> {
    let i = MONTHS.iter().position(|m| {
        let m = m.to_ascii_lowercase();
        m == w || (w.len() >= 3 && m.len() > 3 && m.starts_with(w) && w.len() <= 4)
    })?;
    i64::try_from(i).ok().map(|i| i + 1)
}

/// 0 = Sunday.
pub fn weekday_of(w: &str) -> Option<i64> {
    let w = w
        .strip_suffix('s')
        .filter(|s| s.ends_with("day"))
        .unwrap_or(w);
    WEEKDAYS
        .iter()
        .position(|d| *d == w)
        .and_then(|i| i64::try_from(i).ok())
}

/// The weekday of a date, 0 = Sunday.
pub fn weekday_of_date(d: Date) -> i64 {
    weekday_at(d.days())
}

fn weekday_at(day: i64) -> i64 {
    (day + 4).rem_euclid(7)
}

/// The leading number of a word: `27`, `27th`, `08t13` (an ISO time follows).
fn lead_number(w: &str) -> Option<i64> {
    let digits: String = w.chars().take_while(char::is_ascii_digit).collect();
    let rest = &w[digits.len()..];
    let ok = rest.is_empty()
        || ["st", "nd", "rd", "th"].contains(&rest)
        || (rest.starts_with('t') && rest[1..].chars().all(|c| c.is_ascii_digit()));
    if digits.is_empty() || digits.len() > 4 || !ok {
        return None;
    }
    digits.parse().ok()
}

fn year_at(toks: &[Tok<'_>], i: usize) -> Option<i64> {
    let t = toks.get(i)?;
    (t.low.len() == 4)
        .then(|| t.low.parse::<i64>().ok())
        .flatten()
        .filter(|y| (1900..=2100).contains(y))
}

fn day_at(toks: &[Tok<'_>], i: usize) -> Option<i64> {
    toks.get(i)
        .and_then(|t| lead_number(&t.low))
        .filter(|d| (1..=31).contains(d))
}

fn month_span(year: i64, month: i64) -> (i64, i64) {
    let lo = days_from_civil(year, month, 1);
    let next = if month == 12 {
        days_from_civil(year + 1, 1, 1)
    } else {
        days_from_civil(year, month + 1, 1)
    };
    (lo, next - 1)
}

fn year_span(year: i64) -> (i64, i64) {
    (days_from_civil(year, 1, 1), days_from_civil(year, 12, 31))
}

fn words(toks: &[Tok<'_>], from: usize, to: usize) -> String {
    toks.get(from..to)
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(k, t)| {
            if k == 0 {
                t.raw.to_owned()
            } else {
                format!("{}{}", t.gap, t.raw)
            }
        })
        .collect()
}

/// An absolute date at `i`: its span (or yearless day) and the index after it.
fn absolute(toks: &[Tok<'_>], i: usize) -> Option<(Mention, usize)> {
    let span = |lo: i64, hi: i64, end: usize| {
        Some((
            Mention::Span {
                lo,
                hi,
                text: words(toks, i, end),
            },
            end,
        ))
    };
    let low = |k: usize| toks.get(k).map_or("", |t| t.low.as_str());
    let gap = |k: usize| toks.get(k).map_or("", |t| t.gap);
    // 2023-03-27 (and 2023-03-27T13:56:00).
    if let Some(y) = year_at(toks, i) {
        let m = low(i + 1)
            .parse::<i64>()
            .ok()
            .filter(|m| (1..=12).contains(m));
        if let (Some(m), Some(d), "-", "-") = (m, day_at(toks, i + 2), gap(i + 1), gap(i + 2)) {
            let d = days_from_civil(y, m, d);
            return span(d, d, i + 3);
        }
    }
    // 27 March 2023, 27th of March, 2023, 27 March.
    if let Some(d) = day_at(toks, i) {
        let j = if low(i + 1) == "of" { i + 2 } else { i + 1 };
        if let Some(m) = month_of(low(j)) {
            if let Some(y) = year_at(toks, j + 1) {
                let d = days_from_civil(y, m, d);
                return span(d, d, j + 2);
            }
            let text = words(toks, i, j + 1);
            return Some((
                Mention::Yearless {
                    month: m,
                    day: d,
                    text,
                },
                j + 1,
            ));
        }
    }
    let m = month_of(low(i))?;
    // March 27, 2023 and March 27.
    if let Some(d) = day_at(toks, i + 1).filter(|_| year_at(toks, i + 1).is_none()) {
        if let Some(y) = year_at(toks, i + 2) {
            let d = days_from_civil(y, m, d);
            return span(d, d, i + 3);
        }
        let text = words(toks, i, i + 2);
        return Some((
            Mention::Yearless {
                month: m,
                day: d,
                text,
            },
            i + 2,
        ));
    }
    // March 2023.
    let y = year_at(toks, i + 1)?;
    let (lo, hi) = month_span(y, m);
    span(lo, hi, i + 2)
}

/// A span of days `unit` before (`dir` = -1) or after (+1) day `d`.
fn relative(unit: &str, n: i64, dir: i64, d: i64) -> Option<(i64, i64)> {
    let (y, m, _) = civil_from_days(d);
    let shifted_month = |k: i64| {
        let total = y * 12 + (m - 1) + k;
        month_span(total.div_euclid(12), total.rem_euclid(12) + 1)
    };
    Some(match unit {
        "day" | "days" | "night" => (d + dir * n, d + dir * n),
        "week" | "weeks" if n == 1 => {
            if dir < 0 {
                (d - 13, d - 1)
            } else {
                (d + 1, d + 13)
            }
        }
        "week" | "weeks" => (d + dir * 7 * n - 3, d + dir * 7 * n + 3),
        "weekend" => {
            if dir < 0 {
                (d - 9, d - 1)
            } else {
                (d + 1, d + 9)
            }
        }
        "few" => {
            if dir < 0 {
                (d - 6, d - 2)
            } else {
                (d + 2, d + 6)
            }
        }
        "month" | "months" => shifted_month(dir * n),
        "year" | "years" => year_span(y + dir * n),
        w => {
            let wd = weekday_of(w)?;
            let mut k = d + dir;
            while weekday_at(k) != wd {
                k += dir;
            }
            (k, k)
        }
    })
}

fn is_unit(w: &str) -> bool {
    matches!(
        w,
        "day" | "days" | "week" | "weeks" | "weekend" | "month" | "months" | "year" | "years"
    ) || weekday_of(w).is_some()
}

/// A date relative to a stated one at `i`: `the week before 9 June 2023`, `Sunday before
/// 25 May 2023`, `a few days before 3 May 2023`.
fn stated_relative(toks: &[Tok<'_>], i: usize) -> Option<(Mention, usize)> {
    let low = |k: usize| toks.get(k).map_or("", |t| t.low.as_str());
    let mut j = i;
    if matches!(low(j), "the" | "a") {
        j += 1;
    }
    let unit = if low(j) == "few" && low(j + 1) == "days" {
        j += 2;
        "few"
    } else if is_unit(low(j)) && !low(j).ends_with('s') || weekday_of(low(j)).is_some() {
        j += 1;
        low(j - 1)
    } else {
        return None;
    };
    let dir = match low(j) {
        "before" => -1,
        "after" => 1,
        "of" if unit == "weekend" => 0,
        _ => return None,
    };
    let (Mention::Span { lo, hi, .. }, end) = absolute(toks, j + 1)? else {
        return None;
    };
    let (lo, hi) = if dir == 0 {
        (lo - 3, hi + 6)
    } else if lo == hi {
        relative(unit, 1, dir, lo)?
    } else {
        return None;
    };
    let text = words(toks, i, end);
    Some((Mention::Span { lo, hi, text }, end))
}

/// A date relative to the text's own time at `i`: its words, the span it means from `anchor`
/// (a day), and the index after it.
fn anchored(toks: &[Tok<'_>], i: usize, anchor: Option<i64>) -> Option<(Mention, usize)> {
    let low = |k: usize| toks.get(k).map_or("", |t| t.low.as_str());
    let (unit, n, dir, end) = match low(i) {
        "yesterday" => ("day", 1, -1, i + 1),
        "today" | "tonight" => ("day", 0, 1, i + 1),
        "tomorrow" => ("day", 1, 1, i + 1),
        "last" | "past" | "previous" | "this" | "next"
            if is_unit(low(i + 1)) || low(i + 1) == "night" =>
        {
            let unit = low(i + 1);
            let dir = if low(i) == "next" { 1 } else { -1 };
            let n = i64::from(low(i) != "this" || weekday_of(unit).is_some());
            (unit, n, dir, i + 2)
        }
        w if low(i + 2) == "ago" && is_unit(low(i + 1)) => {
            let n = match w {
                "a" | "an" | "one" => 1,
                "two" => 2,
                "few" | "several" | "three" => 3,
                w => w.parse().ok()?,
            };
            // "A year ago" is that month a year back, not the whole of last year.
            match low(i + 1) {
                "year" | "years" => ("months", n * 12, -1, i + 3),
                unit => (unit, n, -1, i + 3),
            }
        }
        "a" if low(i + 1) == "few" && low(i + 2) == "days" && low(i + 3) == "ago" => {
            ("few", 1, -1, i + 4)
        }
        _ => return None,
    };
    // "this weekend" / "this month" / "this year": the anchor's own.
    let unit = if unit == "weekend" && n == 0 {
        "weekend-of"
    } else {
        unit
    };
    let text = words(toks, i, end);
    let Some(d) = anchor else {
        return Some((Mention::Unresolved { text }, end));
    };
    let (lo, hi) = match (unit, n) {
        ("weekend-of", _) => (d - 3, d + 6),
        ("month" | "months", 0) => relative("month", 0, 1, d)?,
        ("year" | "years", 0) => relative("year", 0, 1, d)?,
        _ => relative(unit, n.max(0), dir, d)?,
    };
    Some((Mention::Span { lo, hi, text }, end))
}

/// Every date a text mentions, and which of its words they took. `anchor` is the day the
/// text was written, for relative dates.
pub fn mentions(toks: &[Tok<'_>], anchor: Option<Date>) -> (Vec<Mention>, Vec<bool>) {
    let anchor = anchor.map(Date::days);
    let mut used = vec![false; toks.len()];
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let found = stated_relative(toks, i)
            .or_else(|| absolute(toks, i))
            .or_else(|| anchored(toks, i, anchor))
            .or_else(|| {
                let y = year_at(toks, i)?;
                let (lo, hi) = year_span(y);
                let text = words(toks, i, i + 1);
                Some((Mention::Span { lo, hi, text }, i + 1))
            });
        match found {
            Some((m, end)) if end > i => {
                for u in used.iter_mut().take(end).skip(i) {
                    *u = true;
                }
                out.push(m);
                i = end;
            }
            _ => i += 1,
        }
    }
    (out, used)
}

/// The day a record says it was written: an ISO or LoCoMo-style date.
pub fn parse_day(text: &str) -> Option<Date> {
    Date::parse(text).or_else(|| Date::parse(text.split(" on ").nth(1)?))
}

/// A span as a person reads it: `27 March 2023`, `March 2023`, `2023`, `21 March 2023 – 2 April 2023`.
pub fn show_span(lo: i64, hi: i64) -> String {
    let day = |d: i64| {
        let (year, month, day) = civil_from_days(d);
        Date { year, month, day }
    };
    let (a, b) = (day(lo), day(hi));
    if lo == hi {
        a.long()
    } else if a.day == 1
        && (a.year, a.month) == (b.year, b.month)
        && month_span(a.year, a.month).1 == hi
    {
        a.month_year()
    } else if (a.month, a.day, b.month, b.day) == (1, 1, 12, 31) && a.year == b.year {
        a.year.to_string()
    } else {
        format!("{} – {}", a.long(), b.long())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(text: &str, anchor: Option<Date>) -> Vec<String> {
        let t = toks(text);
        mentions(&t, anchor)
            .0
            .iter()
            .map(|m| match m {
                Mention::Span { lo, hi, .. } => show_span(*lo, *hi),
                other => format!("? {}", other.text()),
            })
            .collect()
    }

    #[test]
    fn absolute_forms_meet() {
        for s in [
            "27 March 2023",
            "March 27, 2023",
            "2023-03-27",
            "27th of March, 2023",
            "Mar 27 2023",
        ] {
            assert_eq!(spans(s, None), ["27 March 2023"], "{s}");
        }
        assert_eq!(
            spans("in March 2023 and 2022", None),
            ["March 2023", "2022"]
        );
        assert_eq!(spans("Time: 2023-05-08T13:56:00", None), ["8 May 2023"]);
        assert_eq!(spans("she may come", None), Vec::<String>::new());
    }

    #[test]
    fn relative_forms_resolve() {
        let may8 = Date {
            year: 2023,
            month: 5,
            day: 8,
        };
        assert_eq!(spans("yesterday", Some(may8)), ["7 May 2023"]);
        assert_eq!(spans("yesterday", None), ["? yesterday"]);
        assert_eq!(spans("last month", Some(may8)), ["April 2023"]);
        assert_eq!(
            spans("The Sunday before 25 May 2023", None),
            ["21 May 2023"]
        );
        assert_eq!(spans("last Sunday", Some(may8)), ["7 May 2023"]);
        assert_eq!(
            spans("the week before 9 June 2023", None),
            spans(
                "last week",
                Some(Date {
                    year: 2023,
                    month: 6,
                    day: 9
                })
            )
        );
        assert_eq!(spans("3 days ago", Some(may8)), ["5 May 2023"]);
        // A year ago is that month a year back; last year is the whole year.
        assert_eq!(spans("one year ago", Some(may8)), ["May 2022"]);
        assert_eq!(spans("last year", Some(may8)), ["2022"]);
    }
}
