//! Dates in free text, as spans of days: absolute (`27 March 2023`, `March 27, 2023`,
//! `2023-03-27`, `March 2023`, `2023`), relative to a stated date (`the week before 9 June
//! 2023`, `the Sunday before 25 May 2023`), and relative to the text's own time (`yesterday`,
//! `last week`, `3 days ago`), which resolve only when that time (the anchor) is known.

use crate::text::lexicon::{
    count_of, deictic_day, is_article, is_ordinal_suffix, is_vague, month_of, relation_of, toward,
    unit_of, Toward, Unit, AGO, OF,
};
use crate::util::calendar::{civil_from_days, days_from_civil, Date};

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
        || is_ordinal_suffix(rest)
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
        let j = if low(i + 1) == OF { i + 2 } else { i + 1 };
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

/// How far a relative date reaches: a unit of time, or "a few days" (two to six).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    Unit(Unit),
    FewDays,
}

/// A span of days `n` `reach`es before (`dir` = -1) or after (+1) day `d`.
fn relative(reach: Reach, n: i64, dir: i64, d: i64) -> (i64, i64) {
    let (y, m, _) = civil_from_days(d);
    let shifted_month = |k: i64| {
        let total = y * 12 + (m - 1) + k;
        month_span(total.div_euclid(12), total.rem_euclid(12) + 1)
    };
    let around = |near: i64, far: i64| {
        if dir < 0 {
            (d - far, d - near)
        } else {
            (d + near, d + far)
        }
    };
    match reach {
        Reach::Unit(Unit::Day | Unit::Night) => (d + dir * n, d + dir * n),
        Reach::Unit(Unit::Week) if n == 1 => around(1, 13),
        Reach::Unit(Unit::Week) => (d + dir * 7 * n - 3, d + dir * 7 * n + 3),
        Reach::Unit(Unit::Weekend) => around(1, 9),
        Reach::FewDays => around(2, 6),
        Reach::Unit(Unit::Month) => shifted_month(dir * n),
        Reach::Unit(Unit::Year) => year_span(y + dir * n),
        Reach::Unit(Unit::Weekday(wd)) => {
            let mut k = d + dir;
            while weekday_at(k) != wd {
                k += dir;
            }
            (k, k)
        }
    }
}

/// The unit a word names that a count or "last" may take (not "night", not "weekends").
fn unit_at(w: &str) -> Option<(Unit, bool)> {
    unit_of(w).filter(|&(u, plural)| u != Unit::Night && !(u == Unit::Weekend && plural))
}

/// A unit, or "night" ("last night").
fn unit_or_night(w: &str) -> Option<(Unit, bool)> {
    unit_at(w).or_else(|| unit_of(w).filter(|&u| u == (Unit::Night, false)))
}

/// A date relative to a stated one at `i`: `the week before 9 June 2023`, `Sunday before
/// 25 May 2023`, `a few days before 3 May 2023`.
fn stated_relative(toks: &[Tok<'_>], i: usize) -> Option<(Mention, usize)> {
    let low = |k: usize| toks.get(k).map_or("", |t| t.low.as_str());
    let mut j = i;
    if is_article(low(j)) {
        j += 1;
    }
    let reach = if is_vague(low(j)) && unit_at(low(j + 1)) == Some((Unit::Day, true)) {
        j += 2;
        Reach::FewDays
    } else if let Some((unit, plural)) = unit_at(low(j)) {
        if plural && !matches!(unit, Unit::Weekday(_)) {
            return None;
        }
        j += 1;
        Reach::Unit(unit)
    } else {
        return None;
    };
    let dir = match relation_of(low(j)) {
        Some(dir) => dir,
        None if low(j) == OF && reach == Reach::Unit(Unit::Weekend) => 0,
        None => return None,
    };
    let (Mention::Span { lo, hi, .. }, end) = absolute(toks, j + 1)? else {
        return None;
    };
    let (lo, hi) = if dir == 0 {
        (lo - 3, hi + 6)
    } else if lo == hi {
        relative(reach, 1, dir, lo)
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
    // (reach, count, direction, end); a count of 0 means the anchor's own unit ("this month").
    let (reach, n, dir, end) = if let Some(k) = deictic_day(low(i)) {
        (
            Reach::Unit(Unit::Day),
            k.abs(),
            if k < 0 { -1 } else { 1 },
            i + 1,
        )
    } else if let (Some(to), Some((unit, _))) = (toward(low(i)), unit_or_night(low(i + 1))) {
        let dir = if to == Toward::Next { 1 } else { -1 };
        let n = i64::from(to != Toward::This || matches!(unit, Unit::Weekday(_)));
        (Reach::Unit(unit), n, dir, i + 2)
    } else if let (Some(n), Some((unit, _)), AGO) =
        (count_of(low(i)), unit_at(low(i + 1)), low(i + 2))
    {
        // "A year ago" is that month a year back, not the whole of last year.
        match unit {
            Unit::Year => (Reach::Unit(Unit::Month), n * 12, -1, i + 3),
            unit => (Reach::Unit(unit), n, -1, i + 3),
        }
    } else if is_article(low(i))
        && is_vague(low(i + 1))
        && unit_at(low(i + 2)) == Some((Unit::Day, true))
        && low(i + 3) == AGO
    {
        (Reach::FewDays, 1, -1, i + 4)
    } else {
        return None;
    };
    let text = words(toks, i, end);
    let Some(d) = anchor else {
        return Some((Mention::Unresolved { text }, end));
    };
    let (lo, hi) = match (reach, n) {
        // "this weekend" / "this month" / "this year": the anchor's own.
        (Reach::Unit(Unit::Weekend), 0) => (d - 3, d + 6),
        (Reach::Unit(Unit::Month | Unit::Year), 0) => relative(reach, 0, 1, d),
        _ => relative(reach, n.max(0), dir, d),
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
