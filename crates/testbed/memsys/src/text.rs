//! Text helpers of the reference memory systems and the simulated LLM: conversation tokens and
//! terms (over [`memtrace::text`]), the normalized-token judge rule, and LoCoMo timestamps.

use std::collections::BTreeSet;

pub use memtrace::text::stem;
use memtrace::text::{StopList, Word};
pub use memtrace::util::calendar::{Date, MONTHS};

/// Lower-case `[a-z0-9]+` tokens.
pub fn tokens(text: &str) -> Vec<String> {
    memtrace::text::tokens(text, Word::Alnum).collect()
}

/// True for a stop word of conversation text.
pub fn is_stop(token: &str) -> bool {
    memtrace::text::is_stop(token, StopList::Chat)
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
