//! The answer repeated a corrupted copy of the evidence: a version that keeps the evidence's
//! words up to a gold word and then says something else ("adopted a pup last *jazz*"), where the
//! prediction repeats that very stretch. The corruption reached the answer, so the op that made
//! it misled the answer, even when another input still held the information.

use std::collections::BTreeSet;

use crate::attribution::text::tokens;
use crate::text::{is_stop, stem, StopList};

/// Tokens of context kept before the replaced gold word.
const CONTEXT: usize = 3;

/// The stretch of `copy` (its tokens) that replaces a gold word of `evidence` — [`CONTEXT`]
/// tokens the two share, then a word that is neither the evidence's nor a gold word — when
/// `said` (the prediction's tokens) repeats it; `evidence` is tokens, `gold` stemmed terms.
pub(crate) fn repeated_corruption(
    evidence: &[String],
    copy: &str,
    said: &[String],
    gold: &BTreeSet<String>,
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
            let Some(instead) = cp.get(j + CONTEXT) else {
                break;
            };
            if cp[j..j + CONTEXT] != *before || *instead == ev[i] || is_gold(instead) {
                continue;
            }
            let stretch = &cp[j..=j + CONTEXT];
            if contains_run(said, stretch) {
                return Some(stretch.to_vec());
            }
        }
    }
    None
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
        repeated_corruption(&toks(evidence), copy, &toks(said), gold)
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
