//! The answer repeated a corrupted copy of the evidence: a version that keeps the evidence's
//! words up to a gold word and then says something else ("adopted a pup last *jazz*"), where the
//! prediction repeats that very stretch. The corruption reached the answer, so the op that made
//! it misled the answer, even when another input still held the information.
//!
//! The same holds for the date a copy puts after a relative one ("a park yesterday *Tuesday*"
//! where the evidence said "a park yesterday" and the answer is a date): the op resolved the
//! relative date wrongly, and the answer repeated it.

use std::collections::BTreeSet;

use crate::attribution::text::{month_of, tokens, weekday_of, weekday_of_date};
use crate::text::lexicon::{
    affirms, deictic_day, is_contracted_negation, is_negation, toward, unit_of, Unit, AGO,
    NEGATION_REACH,
};
use crate::text::{is_stop, stem, StopList};
use crate::util::calendar::Date;

/// Tokens of context kept before the replaced gold word.
const CONTEXT: usize = 3;

/// The stretch of `copy` (its tokens) that replaces a gold word of `evidence` — [`CONTEXT`]
/// tokens the two share, then a word that is neither the evidence's nor a gold word — when
/// `said` (the prediction's tokens) repeats it; `evidence` is tokens, `gold` stemmed terms.
/// When `dated` (the gold answer is a date), also the word a copy puts right after one of the
/// evidence's relative dates ([`after_relative_date`]).
pub(crate) fn repeated_corruption(
    evidence: &[String],
    copy: &str,
    said: &[String],
    gold: &BTreeSet<String>,
    dated: Option<GoldDate>,
) -> Option<Vec<String>> {
    let ev = evidence;
    let cp: Vec<String> = tokens(copy).collect();
    let is_gold = |w: &str| gold.contains(&stem(w));
    for i in CONTEXT..ev.len() {
        if !is_gold(&ev[i]) {
            continue;
        }
        let before = &ev[i - CONTEXT..i];
        // A run of stopwords ("and it was") is too common to locate anything.
        if before.iter().all(|w| is_stop(w, StopList::Trace)) {
            continue;
        }
        for j in 0..cp.len().saturating_sub(CONTEXT) {
            let instead = &cp[j + CONTEXT];
            if cp[j..j + CONTEXT] != *before || *instead == ev[i] || is_gold(instead) {
                continue;
            }
            let stretch = &cp[j..=j + CONTEXT];
            if contains_run(said, stretch) {
                return Some(stretch.to_vec());
            }
        }
    }
    dated.and_then(|d| after_relative_date(ev, &cp, said, &is_gold, d))
}

/// The stretch of `copy` that negates what the evidence affirms ("Caroline is *not* proud of
/// Mel" where the evidence said "I'm really proud of you"), when `said` (the prediction's
/// tokens) repeats it: the word before a negation, the negation, and up to one of the first two
/// content words after it, a word the evidence says and never within [`NEGATION_REACH`] tokens
/// after a negation of its own.
pub(crate) fn added_negation(
    evidence: &[String],
    copy: &str,
    said: &[String],
) -> Option<Vec<String>> {
    let cp: Vec<String> = tokens(copy).collect();
    let ev = evidence;
    for j in 1..cp.len() {
        // A negation the evidence has in the same place ("long time no see", "I can't") is
        // not added.
        if !negates(&cp, j) || contains_run(ev, &cp[j - 1..=j]) {
            continue;
        }
        let content: Vec<usize> = (j + 1..(j + 1 + NEGATION_REACH).min(cp.len()))
            .filter(|&k| !is_stop(&cp[k], StopList::Trace) && !negates(&cp, k))
            .take(2)
            .collect();
        if content.first().is_none_or(|&k| affirms(&cp[k])) {
            continue;
        }
        let negated = |i: usize| (i.saturating_sub(NEGATION_REACH)..i).any(|h| negates(ev, h));
        let affirmed = |k: &usize| {
            let word = stem(&cp[*k]);
            let at: Vec<usize> = (0..ev.len()).filter(|&i| stem(&ev[i]) == word).collect();
            !at.is_empty() && !at.iter().any(|&i| negated(i))
        };
        let Some(k) = content.into_iter().find(affirmed) else {
            continue;
        };
        let stretch = &cp[j - 1..=k];
        if contains_run(said, stretch) {
            return Some(stretch.to_vec());
        }
    }
    None
}

/// Token `i` of `ws` negates: a negation word, or the `t` of `n't` (tokens split "isn't" into
/// "isn", "t").
fn negates(ws: &[String], i: usize) -> bool {
    is_negation(&ws[i]) || i > 0 && is_contracted_negation(&ws[i - 1], &ws[i])
}

/// The stretch of `copy` from one of the evidence's relative dates ("yesterday", "last week")
/// to the first content word it put right after it, when that word is not the evidence's and
/// names no date (or another weekday than the gold day's) and `said` repeats the stretch: the
/// copy resolved the date wrongly ("a park yesterday *Tuesday*"). The copy must keep the words
/// before the date or, when it rephrased them, some of the words after it.
fn after_relative_date(
    ev: &[String],
    cp: &[String],
    said: &[String],
    is_gold: &dyn Fn(&str) -> bool,
    dated: GoldDate,
) -> Option<Vec<String>> {
    let in_evidence: BTreeSet<&str> = ev.iter().map(String::as_str).collect();
    let content = |ws: &[String]| -> BTreeSet<String> {
        ws.iter()
            .filter(|w| !is_stop(w, StopList::Trace))
            .cloned()
            .collect()
    };
    for i in 1..=ev.len() {
        let Some(n) = relative_date_len(&ev[..i]) else {
            continue;
        };
        let before = &ev[i.saturating_sub(CONTEXT)..i];
        let phrase = &ev[i - n..i];
        let ev_after = content(&ev[i..(i + 5).min(ev.len())]);
        for j in 0..cp.len().saturating_sub(n) {
            if cp[j..j + n] != *phrase {
                continue;
            }
            let Some(k) = (j + n..(j + n + 2).min(cp.len()))
                .find(|&k| !is_stop(&cp[k], StopList::Trace))
                .filter(|&k| !is_gold(&cp[k]) && wrong_date_word(&cp[k], &in_evidence, dated.day))
            else {
                continue;
            };
            let start = j + n - before.len().min(j + n);
            let kept_before = before.len() >= 2 && cp[start..j + n] == *before;
            let cp_after = content(&cp[k + 1..(k + 6).min(cp.len())]);
            let kept_after = ev_after.intersection(&cp_after).count() >= 2;
            let stretch = if kept_before {
                &cp[start..=k]
            } else {
                &cp[j..=k]
            };
            if (kept_before || kept_after) && contains_run(said, stretch) {
                return Some(stretch.to_vec());
            }
        }
    }
    None
}

/// A gold answer that is a date: the day, when it names one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GoldDate {
    pub day: Option<Date>,
}

/// How many tokens the relative date `before` ends with has ("yesterday" 1, "last week" 2,
/// "two days ago" 3), if it ends with one.
fn relative_date_len(before: &[String]) -> Option<usize> {
    let last = before.last()?;
    let prev = before.len().checked_sub(2).and_then(|i| before.get(i));
    // "last week", "next month", "this weekend" ("last day" and weekdays are no span).
    let unit =
        unit_of(last).filter(|&(u, plural)| !plural && !matches!(u, Unit::Day | Unit::Weekday(_)));
    if deictic_day(last).is_some() {
        Some(1)
    } else if last == AGO && before.len() >= 3 {
        Some(3)
    } else if unit.is_some() && prev.and_then(|p| toward(p)).is_some() {
        Some(2)
    } else {
        None
    }
}

/// A word put where a resolved date belongs that is not from the evidence and names no date,
/// or another weekday than the gold day's.
fn wrong_date_word(w: &str, evidence: &BTreeSet<&str>, gold_day: Option<Date>) -> bool {
    if let Some(k) = weekday_of(w) {
        return gold_day.is_some_and(|d| weekday_of_date(d) != k);
    }
    !evidence.contains(w) && !w.chars().any(|c| c.is_ascii_digit()) && month_of(w).is_none()
}

/// True when `text`'s tokens hold `run` contiguously.
pub(crate) fn holds_run(text: &str, run: &[String]) -> bool {
    let have: Vec<String> = tokens(text).collect();
    contains_run(&have, run)
}

fn contains_run(have: &[String], run: &[String]) -> bool {
    !run.is_empty() && have.windows(run.len()).any(|w| w == run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attribution::text::terms;

    fn found(
        evidence: &str,
        copy: &str,
        said: &str,
        gold: &BTreeSet<String>,
    ) -> Option<Vec<String>> {
        let toks = |x: &str| tokens(x).collect::<Vec<_>>();
        repeated_corruption(&toks(evidence), copy, &toks(said), gold, None)
    }

    const EVIDENCE: &str =
        "Hey John! I adopted a pup from a shelter in Stamford last week and named him Ned.";

    #[test]
    fn a_replaced_gold_word_the_answer_repeats_is_found() {
        let gold = terms("the first week of April 2022");
        let copy = "James: I adopted a pup from a shelter in Stamford last jazz and named him Ned.";
        let said = "James adopted a pup in Stamford last jazz.";
        let got = found(EVIDENCE, copy, said, &gold).expect("found");
        assert_eq!(got.join(" "), "in stamford last jazz");
    }

    #[test]
    fn an_intact_copy_or_an_answer_that_does_not_repeat_it_is_not() {
        let gold = terms("the first week of April 2022");
        let intact = "James adopted a pup from a shelter in Stamford last week.";
        assert_eq!(found(EVIDENCE, intact, intact, &gold), None);
        let copy = "James: I adopted a pup from a shelter in Stamford last jazz.";
        let other = "James has a dog named Ned.";
        assert_eq!(found(EVIDENCE, copy, other, &gold), None);
    }

    #[test]
    fn a_wrong_word_after_a_relative_date_is_found_when_the_answer_is_a_date() {
        let toks = |x: &str| tokens(x).collect::<Vec<_>>();
        let gold = terms("7 May 2023");
        let evidence = toks("I went to a LGBTQ support group yesterday and it was so powerful.");
        let copy = "Caroline went to a LGBTQ support group yesterday Tuesday) and it was powerful.";
        let said = toks(copy);
        let day = GoldDate {
            day: Date::parse("7 May 2023"),
        };
        let got = repeated_corruption(&evidence, copy, &said, &gold, Some(day)).expect("found");
        assert_eq!(got.join(" "), "support group yesterday tuesday");
        // At the evidence's start, after stopwords.
        let evidence = toks("Starting tomorrow, I will go to the gym.");
        let copy = "Starting tomorrow a bakery), Sam will go to the gym.";
        let said = toks(copy);
        let got = repeated_corruption(&evidence, copy, &said, &gold, Some(day)).expect("found");
        assert_eq!(got.join(" "), "starting tomorrow a bakery");
        // The words before it rephrased (a greeting dropped), the words after it kept.
        let evidence = toks("That's awesome, Gina! Yesterday I chose to go to networking events.");
        let copy = "What gave Gina the idea? Yesterday jazz) Jon chose to go to networking events.";
        let said = toks(copy);
        let got = repeated_corruption(&evidence, copy, &said, &gold, Some(day)).expect("found");
        assert_eq!(got.join(" "), "yesterday jazz");
        // Not for an answer that is no date, nor for a resolved date (7 May 2023 was a Sunday)
        // or the evidence's own words.
        assert_eq!(
            repeated_corruption(&evidence, copy, &said, &gold, None),
            None
        );
        for fine in [
            "Caroline went to a LGBTQ support group yesterday (7 May 2023).",
            "Caroline went to a LGBTQ support group yesterday (6 May 2023).",
            "Caroline went to a LGBTQ support group yesterday (Sunday).",
            "Caroline went to a LGBTQ support group yesterday, and it was powerful.",
            "Caroline went to a LGBTQ support group yesterday and it was so powerful.",
        ] {
            let said = toks(fine);
            assert_eq!(
                repeated_corruption(&evidence, fine, &said, &gold, Some(day)),
                None,
                "{fine}"
            );
        }
    }

    #[test]
    fn a_negation_the_evidence_does_not_say_is_found_when_the_answer_repeats_it() {
        let toks = |x: &str| tokens(x).collect::<Vec<_>>();
        let evidence = toks("The new bakery opened last week and I'm so excited about it!");
        let copy = "The bakery opened on 3 May; Sam is not excited about it.";
        let said = toks("It opened on 3 May, and Sam is not excited about it.");
        let got = added_negation(&evidence, copy, &said).expect("found");
        assert_eq!(got.join(" "), "is not excited");
        // The first content word rephrased ("gonna" → "going"), the next one kept.
        let evidence = toks("Lost my job yesterday, so I'm gonna take a shot at my own shop.");
        let copy = "Ravi lost his job; Ravi is never going to take a shot at his own shop.";
        let got = added_negation(&evidence, copy, &toks(copy)).expect("found");
        assert_eq!(got.join(" "), "is never going to take");
        // Not when the answer does not repeat it, nor when the evidence negates the word too
        // ("haven't" splits into "haven", "t"), nor for an affirming "not only", nor where the
        // evidence says the same negation.
        let other = toks("The bakery opened on 3 May.");
        assert_eq!(added_negation(&evidence, copy, &other), None);
        for (ev, cp) in [
            (
                "I haven't tried the pasta there.",
                "Sam has not tried the pasta.",
            ),
            (
                "I'm not sure about the move.",
                "Sam is not sure about the move.",
            ),
            ("We sell bread and cakes.", "They do not only sell bread."),
            // The evidence's own negation in the same place ("time no", "can't").
            (
                "Hey John, long time no see! I had a big win.",
                "Hey John, long time no see! John had a big win.",
            ),
        ] {
            assert_eq!(added_negation(&toks(ev), cp, &toks(cp)), None, "{cp}");
        }
    }

    #[test]
    fn stopword_context_locates_nothing() {
        let gold = terms("pottery");
        let evidence = "It was in the pottery class.";
        let copy = "It was in the jazz class.";
        assert_eq!(found(evidence, copy, copy, &gold), None);
    }

    #[test]
    fn runs_are_contiguous_tokens() {
        let run: Vec<String> = ["last", "jazz"].map(String::from).to_vec();
        assert!(holds_run("in Stamford, last jazz!", &run));
        assert!(!holds_run("last week jazz", &run));
    }
}
