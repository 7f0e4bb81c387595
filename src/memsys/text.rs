//! Text helpers shared by the reference memory system and the simulated provider: tokens,
//! stems, stop words, dates, and the normalized-token judge rule.

use std::collections::BTreeSet;

/// Words that carry no content for matching.
const STOP: &[&str] = &[
    "a",
    "about",
    "after",
    "again",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "being",
    "but",
    "by",
    "can",
    "could",
    "d",
    "did",
    "do",
    "does",
    "doing",
    "for",
    "from",
    "get",
    "got",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "hey",
    "hi",
    "him",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "just",
    "kind",
    "like",
    "ll",
    "m",
    "me",
    "mentioned",
    "more",
    "my",
    "of",
    "oh",
    "on",
    "one",
    "or",
    "our",
    "out",
    "over",
    "re",
    "really",
    "s",
    "she",
    "so",
    "some",
    "such",
    "t",
    "than",
    "thank",
    "thanks",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "to",
    "too",
    "type",
    "up",
    "us",
    "ve",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "wow",
    "yeah",
    "you",
    "your",
    "yours",
];

/// Lower-case `[a-z0-9]+` tokens.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            cur.push(c.to_ascii_lowercase());
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// True for a stop word.
pub fn is_stop(token: &str) -> bool {
    STOP.binary_search(&token).is_ok()
}

/// A light suffix-stripping stem: `painting`, `painted`, `paints` → `paint`.
pub fn stem(token: &str) -> String {
    let t = token;
    for (suffix, min) in [
        ("ies", 5),
        ("ing", 6),
        ("ed", 5),
        ("es", 5),
        ("ly", 5),
        ("s", 4),
    ] {
        if t.len() >= min && t.ends_with(suffix) && !t.ends_with("ss") {
            let base = &t[..t.len() - suffix.len()];
            return if suffix == "ies" {
                format!("{base}y")
            } else {
                base.to_owned()
            };
        }
    }
    t.to_owned()
}

/// Stemmed tokens without stop words, in order.
pub fn content_terms(text: &str) -> Vec<String> {
    tokens(text)
        .into_iter()
        .filter(|t| !is_stop(t))
        .map(|t| stem(&t))
        .collect()
}

/// The set of [`content_terms`].
pub fn term_set(text: &str) -> BTreeSet<String> {
    content_terms(text).into_iter().collect()
}

/// Share of `a`'s terms found in `b` (0 when `a` has none).
pub fn recall(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    if a.is_empty() {
        return 0.0;
    }
    a.intersection(b).count() as f64 / a.len() as f64
}

/// Overlap coefficient `|a ∩ b| / min(|a|, |b|)`.
pub fn overlap(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let m = a.len().min(b.len());
    if m == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / m as f64
}

/// The normalized-token judge: the prediction is right when it holds at least half of the gold
/// answer's content terms (all of them for a one- or two-term answer of digits), or the whole
/// normalized gold text when it has no content terms.
pub fn judge_rule(prediction: &str, gold: &str) -> bool {
    let g = term_set(gold);
    let p = term_set(prediction);
    if g.is_empty() {
        let norm = |s: &str| tokens(s).join(" ");
        let (gn, pn) = (norm(gold), norm(prediction));
        return !gn.is_empty() && format!(" {pn} ").contains(&format!(" {gn} "));
    }
    let digits: BTreeSet<&String> = g
        .iter()
        .filter(|t| t.chars().any(|c| c.is_ascii_digit()))
        .collect();
    if digits.iter().any(|d| !p.contains(*d)) {
        return false;
    }
    let need = if g.len() >= 5 { 0.4 } else { 0.5 };
    recall(&g, &p) >= need
}

/// Month names, 1-based.
pub const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

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

    /// The date `days` later (earlier when negative).
    #[must_use]
    pub fn plus_days(self, days: i64) -> Date {
        let n = memtrace_record::days_from_civil(self.year, self.month, self.day) + days;
        let (year, month, day) = memtrace_record::civil_from_days(n);
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

/// LoCoMo's `1:56 pm on 8 May, 2023` as an ISO timestamp `2023-05-08T13:56:00`.
pub fn locomo_timestamp(date_time: &str) -> Option<String> {
    let (time, date) = date_time.split_once(" on ")?;
    let date = Date::parse(date)?;
    let (hm, ampm) = time.trim().split_once(' ')?;
    let (h, m) = hm.split_once(':')?;
    let (mut h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
    if ampm.eq_ignore_ascii_case("pm") && h < 12 {
        h += 12;
    }
    if ampm.eq_ignore_ascii_case("am") && h == 12 {
        h = 0;
    }
    Some(format!(
        "{:04}-{:02}-{:02}T{h:02}:{m:02}:00",
        date.year, date.month, date.day
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_list_is_sorted_for_binary_search() {
        let mut sorted = STOP.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, STOP.to_vec());
    }

    #[test]
    fn judge() {
        assert!(judge_rule(
            "Making a difference & raising awareness for mental health is rewarding",
            "mental health"
        ));
        assert!(!judge_rule(
            "Caroline went to a support group.",
            "7 May 2023"
        ));
        assert!(judge_rule(
            "Caroline went to a support group (7 May 2023).",
            "7 May 2023"
        ));
        assert!(!judge_rule("I don't know.", "Sweden"));
        assert!(judge_rule("She paints sunsets", "painting sunsets"));
    }

    #[test]
    fn dates() {
        assert_eq!(
            locomo_timestamp("1:56 pm on 8 May, 2023").as_deref(),
            Some("2023-05-08T13:56:00")
        );
        let d = Date::parse("8 May, 2023").unwrap_or(Date {
            year: 0,
            month: 1,
            day: 1,
        });
        assert_eq!(d.plus_days(-1).long(), "7 May 2023");
        assert_eq!(d.plus_months(-5).month_year(), "December 2022");
    }
}
