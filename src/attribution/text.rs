//! Text signals for following information: tokens, key tokens of a case, and a carry score.
//!
//! A text carries the key when it holds enough of the gold answer's (or the evidence's) words
//! *and* keeps the gold answer's discriminating parts ([`parts`]): its dates, numbers, names
//! and negation, in any equivalent form.

mod dates;
pub mod parts;

use std::collections::BTreeSet;

pub(crate) use crate::text::lexicon::{month_of, weekday_of};
pub(crate) use dates::{mentions, parse_day, toks, weekday_of_date, Mention};
pub use parts::{Change, Parts};

use crate::model::{pyrepr, NodeRecord};
use crate::text::lexicon::{DATE_KEYS, TEXT_KEYS};
use crate::text::{is_stop, stem, StopList, Word};
use crate::util::calendar::Date;

/// Lower-cased `[a-z0-9_]+` tokens.
pub fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    crate::text::tokens(text, Word::AlnumUnderscore)
}

/// Tokens that carry content: no stopwords.
pub fn content_tokens(text: &str) -> BTreeSet<String> {
    tokens(text)
        .filter(|w| !is_stop(w, StopList::Trace))
        .collect()
}

/// Content tokens reduced to a common stem ("jobs" and "job", "amazing" and "amazed"), so a
/// paraphrase that only changes a word's ending still counts.
pub fn terms(text: &str) -> BTreeSet<String> {
    tokens(text)
        .filter(|w| !is_stop(w, StopList::Trace))
        .map(|w| stem(&w))
        .collect()
}

/// The readable text of a variable: a message's `content`, a memory's `memory`/`text`, else the
/// value as a person would read it.
pub fn var_text(v: &NodeRecord) -> String {
    let json = pyrepr::to_json(&v.value);
    match &json {
        serde_json::Value::Object(m) => {
            for key in TEXT_KEYS {
                match m.get(key) {
                    Some(serde_json::Value::String(s)) => return s.clone(),
                    // A tombstone ({"memory": null, "deleted": true}) holds nothing.
                    Some(serde_json::Value::Null) => return String::new(),
                    _ => {}
                }
            }
            json.to_string()
        }
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Every string of a JSON value, in order.
pub(crate) fn leaves(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(xs) => xs.iter().for_each(|x| leaves(x, out)),
        serde_json::Value::Object(m) => m.values().for_each(|x| leaves(x, out)),
        _ => {}
    }
}

/// The texts a variable's information sits in, each to be judged on its own: the readable text
/// ([`var_text`]) of a message or memory; each string of a structured value without one (a
/// profile's items, a unit's fields, each message of a segment), so words from unrelated items
/// are not counted together.
pub fn var_texts(v: &NodeRecord) -> Vec<String> {
    let json = pyrepr::to_json(&v.value);
    let readable = |m: &serde_json::Map<String, serde_json::Value>| {
        TEXT_KEYS.iter().any(|k| {
            matches!(
                m.get(*k),
                Some(serde_json::Value::String(_) | serde_json::Value::Null)
            )
        })
    };
    let structured = match &json {
        serde_json::Value::Object(m) => !readable(m),
        serde_json::Value::Array(_) => true,
        _ => false,
    };
    if !structured {
        return vec![var_text(v)];
    }
    let mut out = Vec::new();
    leaves(&json, &mut out);
    // An id, a number or a timestamp field states nothing: a unit's `2023-03-16T14:35:00`
    // is when it was written, not what happened then.
    out.retain(|x| says_something(x));
    out
}

/// True when a text has a word (two letters or more): not an id, number or timestamp.
fn says_something(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric())
        .any(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 2 && !is_code(w))
}

/// A token mixing letters and digits (`16t14`, `a3f9e2`): part of an id or a timestamp.
fn is_code(w: &str) -> bool {
    w.chars().any(|c| c.is_ascii_digit()) && w.chars().any(char::is_alphabetic)
}

/// What must survive for the answer to be right: the gold answer's content tokens, and the
/// distinctive tokens of the evidence messages (minus the question's own words, which say
/// what is asked, not the answer).
#[derive(Debug, Clone, Default)]
pub struct Key {
    pub gold: BTreeSet<String>,
    pub evidence: BTreeSet<String>,
    /// Most gold tokens appear in the evidence: then the gold tokens alone decide.
    pub gold_is_literal: bool,
    /// The gold answer's dates, numbers, names and negation: a text that changes one does not
    /// carry the key, whatever else it keeps.
    pub parts: Parts,
    /// When the gold answer is only a date not stated in the evidence's words ("When did …?"
    /// answered "the week before 6 July 2023"): the question's words for the event (not its
    /// names). A text carries such a date only where it also speaks of that event: the same
    /// week's museum trip does not date the picnic.
    pub event: BTreeSet<String>,
    /// With a literal gold answer of several words: how far apart (in content words) the
    /// evidence states them. A text holds them only that close together ("an intense Harry
    /// Potter trivia contest" is not held by "a Harry Potter fan … a crazy intense game").
    pub gold_span: Option<usize>,
    /// The question's words the gold answer repeats ("workshop" in "What workshop did she
    /// attend?" answered "an LGBTQ+ counseling workshop"), names aside: what was asked about.
    /// A text that has none of them speaks of something else ("the LGBTQ+ community").
    pub asked: BTreeSet<String>,
    /// The gold answer's dates the evidence does not state in words.
    unstated_dates: Vec<dates::Mention>,
    /// The gold answer is a date the evidence states only by when it was written (a message's
    /// timestamp, "I took a class recently"): a text with no date of its own and no time (a
    /// profile item restating the words) cannot answer "when". Set by [`Key::timed`].
    pub dated_by_time: bool,
}

/// The day a variable says it was written (a `timestamp`/`time`/`date` field of its value or
/// metadata), which its relative dates ("yesterday") count from.
pub fn var_anchor(v: &NodeRecord) -> Option<Date> {
    let json = pyrepr::to_json(&v.value);
    let keys = DATE_KEYS;
    let found = [&json, &v.metadata]
        .into_iter()
        .filter_map(serde_json::Value::as_object)
        .flat_map(|m| keys.iter().filter_map(move |k| m.get(*k)))
        .filter_map(serde_json::Value::as_str)
        .find_map(dates::parse_day);
    found
}

impl Key {
    /// Builds the key of a case.
    pub fn new(golden: &[String], question: &str, evidence_texts: &[String]) -> Key {
        let gold: BTreeSet<String> = golden.iter().flat_map(|g| terms(g)).collect();
        let asked = terms(question);
        let all: BTreeSet<String> = evidence_texts.iter().flat_map(|t| terms(t)).collect();
        // The question's own words ("Evan" in "Who did Evan meet?") say nothing about the answer.
        let answer_words: BTreeSet<String> = gold
            .iter()
            .filter(|w| !asked.contains(*w))
            .cloned()
            .collect();
        let names = terms(&capitalized(question));
        let asked_in_gold: BTreeSet<String> = if answer_words.is_empty() {
            BTreeSet::new()
        } else {
            gold.iter()
                .filter(|w| asked.contains(*w) && !names.contains(*w))
                // Only as the evidence says it: it may name the thing otherwise.
                .filter(|w| evidence_texts.is_empty() || all.contains(*w))
                .cloned()
                .collect()
        };
        let gold = if answer_words.is_empty() {
            gold
        } else {
            answer_words
        };
        let literal = gold.iter().filter(|w| all.contains(*w)).count();
        let gold_is_literal = !gold.is_empty() && literal * 2 >= gold.len();
        // Judge by the gold words the evidence actually has: "one month" from "for a month".
        let gold = if gold_is_literal {
            gold.into_iter().filter(|w| all.contains(w)).collect()
        } else {
            gold
        };
        let mut parts = Parts::of(golden, question, evidence_texts, &gold);
        // This evidence's share of the answer: the parts it states (a date in any form).
        let dated = evidence_texts.is_empty() || evidence_texts.iter().any(|e| parts::has_date(e));
        let unstated_dates = parts
            .parts
            .iter()
            .filter_map(|p| match p {
                parts::Part::Date(m) if !dated => Some(m.clone()),
                _ => None,
            })
            .collect();
        parts.retain(|p| match p {
            parts::Part::Date(_) => dated,
            _ => !gold_is_literal || parts::part_terms(p).iter().any(|w| gold.contains(w)),
        });
        let date_only = parts
            .parts
            .iter()
            .any(|p| matches!(p, parts::Part::Date(_)))
            && gold.iter().all(|w| parts.terms.contains(w));
        let event: BTreeSet<String> = if date_only {
            (asked.iter())
                .filter(|w| !names.contains(*w) && !gold.contains(*w))
                .cloned()
                .collect()
        } else {
            BTreeSet::new()
        };
        // Of those, the words the evidence says ("pride" of "a pride fesetival", told as "the
        // Pride fest"): a copy speaks of the event as the evidence did, not as the question.
        // Evidence that says none of them ("I met Jean" for "When did Maria meet Jean?") gives
        // a copy none to keep.
        let told: BTreeSet<String> = event.iter().filter(|w| all.contains(*w)).cloned().collect();
        let event = if evidence_texts.is_empty() {
            event
        } else {
            told
        };
        let evidence = all
            .into_iter()
            .filter(|w| !asked.contains(w) && w.len() > 2)
            .collect();
        let gold_span = if gold_is_literal && gold.len() >= 2 {
            evidence_texts
                .iter()
                .filter_map(|e| tightest(&positions(e), &gold))
                .min()
        } else {
            None
        };
        Key {
            gold,
            evidence,
            gold_is_literal,
            parts,
            event,
            gold_span,
            asked: asked_in_gold,
            unstated_dates,
            dated_by_time: false,
        }
    }

    /// The key of evidence written at `time`: when that is the gold answer's unstated date (within
    /// a week: "recently"), the answer is dated by the time alone (see [`Key::dated_by_time`]).
    #[must_use]
    pub fn timed(mut self, time: Option<Date>) -> Key {
        let day = time.map(Date::days);
        self.dated_by_time = day.is_some_and(|d| {
            self.unstated_dates.iter().any(|m| {
                matches!(m, dates::Mention::Span { lo, hi, .. } if (lo - 7..=hi + 7).contains(&d))
            })
        });
        self
    }

    /// How much of the key a text holds, 0..=1: the better of gold coverage and evidence
    /// coverage, taken over the best paragraph (so a long concatenated context does not
    /// collect the key from unrelated memories); 0 in a paragraph that changes a
    /// discriminating part of the gold answer.
    pub fn carry(&self, text: &str) -> f64 {
        self.carry_at(text, None)
    }

    /// As [`Key::carry`], reading relative dates from `anchor` (the day the text was written).
    pub fn carry_at(&self, text: &str, anchor: Option<Date>) -> f64 {
        paragraphs(text)
            .into_iter()
            .map(|p| self.carry_one(p, anchor))
            .fold(0.0, f64::max)
    }

    /// As [`Key::carry`] for a variable: its readable text, dated by [`var_anchor`].
    /// A structured value's items count together when each holds at least half of the key
    /// ("cozy" in one extracted fact, "comfortable" in the next).
    pub fn carry_var(&self, v: &NodeRecord) -> f64 {
        self.carry_items(v, &var_texts(v))
    }

    /// As [`Key::carry_var`] over some of the variable's items (`texts`): those an op read.
    pub fn carry_items(&self, v: &NodeRecord, texts: &[String]) -> f64 {
        let anchor = var_anchor(v);
        let undated = |x: &String| self.dated_by_time && anchor.is_none() && !parts::has_date(x);
        let items: Vec<(f64, &String)> = texts
            .iter()
            .filter(|x| !undated(x))
            .map(|x| (self.carry_at(x, anchor), x))
            .collect();
        let best = items.iter().map(|i| i.0).fold(0.0, f64::max);
        let halves: Vec<&str> = items
            .iter()
            .filter(|i| i.0 >= 0.5)
            .map(|i| i.1.as_str())
            .collect();
        if best >= 1.0 || halves.len() < 2 {
            return best;
        }
        best.max(self.carry_at(&halves.join(" "), anchor))
    }

    /// Why a variable does not carry the key although it keeps the gold answer's words: the
    /// discriminating part its best paragraph changed ("changed the date 27 March 2023 → 3
    /// April 2023"), if any.
    pub fn change(&self, v: &NodeRecord) -> Option<Change> {
        let texts = var_texts(v);
        let anchor = var_anchor(v);
        let best = texts
            .iter()
            .flat_map(|x| paragraphs(x))
            .map(|p| (self.base_one(p), p))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .filter(|best| best.0 >= 0.5)?;
        self.parts
            .subject_swapped(best.1)
            .or_else(|| self.parts.check(best.1, anchor).err())
    }

    /// The share of the key a text must hold to carry it, for a base `threshold`: lower (half of
    /// it) for a long gold answer, which is rarely restated whole.
    pub fn bar(&self, threshold: f64) -> f64 {
        if self.gold_is_literal && self.gold.len() >= 5 {
            threshold * 5.0 / 6.0
        } else {
            threshold
        }
    }

    /// Share of the gold answer's words a text holds, over its best paragraph.
    pub fn gold_carry(&self, text: &str) -> f64 {
        if self.gold.is_empty() {
            return 0.0;
        }
        self.gold_found(text).len() as f64 / self.gold.len() as f64
    }

    /// The gold answer's words found in the text's best paragraph; none in a paragraph that
    /// changes a discriminating part or dates another event.
    pub fn gold_found(&self, text: &str) -> BTreeSet<String> {
        self.gold_found_each(text)
            .into_iter()
            .max_by_key(BTreeSet::len)
            .unwrap_or_default()
    }

    /// As [`Key::gold_found`], for each paragraph of the text (each memory a prompt lists).
    pub fn gold_found_each(&self, text: &str) -> Vec<BTreeSet<String>> {
        self.found_each(text, false)
    }

    /// [`Key::gold_found_each`]; with `stated`, a date part stated in any form counts as the
    /// gold words it is made of.
    fn found_each(&self, text: &str, stated: bool) -> Vec<BTreeSet<String>> {
        let dated = stated && (self.parts.parts.iter()).any(|p| matches!(p, parts::Part::Date(_)));
        let found = |p: &str| -> BTreeSet<String> {
            let Ok(all_stated) = self.parts.check(p, None) else {
                return BTreeSet::new();
            };
            let have = terms(p);
            if !self.speaks_of_event(&have) {
                return BTreeSet::new();
            }
            let part_of_date = |w: &&String| dated && all_stated && self.parts.terms.contains(*w);
            self.gold
                .iter()
                .filter(|w| have.contains(*w) || part_of_date(w))
                .cloned()
                .collect()
        };
        paragraphs(text).into_iter().map(found).collect()
    }

    /// As [`Key::gold_found_each`], a date part the paragraph states in another form counting
    /// as its words: "on 11 August 2023" holds "the Friday before 14 August 2023".
    pub fn gold_stated_each(&self, text: &str) -> Vec<BTreeSet<String>> {
        self.found_each(text, true)
    }

    /// True unless the key is a date of an event ([`Key::event`]) that `have` (a text's terms)
    /// does not speak of.
    fn speaks_of_event(&self, have: &BTreeSet<String>) -> bool {
        if self.event.is_empty() {
            return true;
        }
        // Stems differ by form ("move" / "moved" -> "mov"): a shared start of 3+ letters holds.
        let alike = |w: &String, h: &String| {
            h == w
                || (w.len().min(h.len()) >= 3
                    && (w.starts_with(h.as_str()) || h.starts_with(w.as_str())))
        };
        let held = self
            .event
            .iter()
            .filter(|w| have.iter().any(|h| alike(w, h)))
            .count();
        held >= (self.event.len() / 2).max(1)
    }

    fn carry_one(&self, text: &str, anchor: Option<Date>) -> f64 {
        let have = terms(text);
        if !self.speaks_of_event(&have) {
            return 0.0;
        }
        if !self.asked.is_empty() && !self.asked.iter().any(|w| have.contains(w)) {
            return 0.0;
        }
        if self.parts.subject_swapped(text).is_some() {
            return 0.0;
        }
        let close = self.close_gold(text);
        let base = self.base_of(&have, close.as_ref());
        if base == 0.0 && self.parts.parts.is_empty() {
            return 0.0;
        }
        match self.parts.check(text, anchor) {
            Err(_) => 0.0,
            Ok(stated) if !stated || self.parts.parts.is_empty() => base,
            // The parts are stated (in any form): they count, twice, among the gold words.
            Ok(_) => {
                let have = close.as_ref().unwrap_or(&have);
                // A name alone does not hold a longer answer it is part of: "a Harry Potter
                // fan" is not "an intense Harry Potter trivia contest". (With one other word,
                // often a verb, the name decides: "visited Paris" for "went to Paris".)
                let others: Vec<&String> = (self.gold.iter())
                    .filter(|w| !self.parts.terms.contains(*w))
                    .collect();
                if others.len() >= 2 && !others.iter().any(|w| have.contains(*w)) {
                    return base;
                }
                let weight = |w: &String| {
                    if self.parts.terms.contains(w) {
                        2.0
                    } else {
                        1.0
                    }
                };
                let total: f64 = self.gold.iter().map(weight).sum();
                let kept: f64 = self
                    .gold
                    .iter()
                    .filter(|w| have.contains(*w) || self.parts.terms.contains(*w))
                    .map(weight)
                    .sum();
                if total > 0.0 {
                    base.max(kept / total)
                } else {
                    base
                }
            }
        }
    }

    /// With [`Key::gold_span`]: the most gold words the text has within one stretch of twice
    /// that span (and a little more).
    fn close_gold(&self, text: &str) -> Option<BTreeSet<String>> {
        self.gold_span
            .map(|span| close_found(&positions(text), &self.gold, span * 2 + 6))
    }

    /// Today's word coverage, before the discriminating parts are weighed.
    fn base_one(&self, text: &str) -> f64 {
        self.base_of(&terms(text), self.close_gold(text).as_ref())
    }

    /// [`Key::base_one`] of a text with these terms and [`Key::close_gold`] words.
    fn base_of(&self, have: &BTreeSet<String>, close: Option<&BTreeSet<String>>) -> f64 {
        let cov = |set: &BTreeSet<String>| {
            if set.is_empty() {
                0.0
            } else {
                set.iter().filter(|w| have.contains(*w)).count() as f64 / set.len() as f64
            }
        };
        if self.gold_is_literal {
            close.map_or_else(
                || cov(&self.gold),
                |found| found.len() as f64 / self.gold.len() as f64,
            )
        } else {
            cov(&self.gold).max(cov(&self.evidence))
        }
    }
}

/// The stemmed content words of a text with their token positions.
fn positions(text: &str) -> Vec<(usize, String)> {
    tokens(text)
        .enumerate()
        .filter(|(_, w)| !is_stop(w, StopList::Trace))
        .map(|(i, w)| (i, stem(&w)))
        .collect()
}

/// The fewest tokens a stretch of `words` spans that holds every `gold` word the text has
/// (`None` when it has fewer than two of them).
fn tightest(words: &[(usize, String)], gold: &BTreeSet<String>) -> Option<usize> {
    let hits: Vec<&(usize, String)> = words.iter().filter(|(_, w)| gold.contains(w)).collect();
    let want = hits.iter().map(|(_, w)| w).collect::<BTreeSet<_>>().len();
    if want < 2 {
        return None;
    }
    let mut best = None;
    for (i, (start, _)) in hits.iter().enumerate() {
        let mut seen = BTreeSet::new();
        for (end, w) in &hits[i..] {
            seen.insert(w);
            if seen.len() == want {
                let span = end - start + 1;
                best = Some(best.map_or(span, |b: usize| b.min(span)));
                break;
            }
        }
    }
    best
}

/// The most `gold` words found within one stretch of `width` tokens.
fn close_found(
    words: &[(usize, String)],
    gold: &BTreeSet<String>,
    width: usize,
) -> BTreeSet<String> {
    let hits: Vec<&(usize, String)> = words.iter().filter(|(_, w)| gold.contains(w)).collect();
    let mut most = BTreeSet::new();
    for (i, (start, _)) in hits.iter().enumerate() {
        let found: BTreeSet<String> = hits[i..]
            .iter()
            .take_while(|(p, _)| p - start < width)
            .map(|(_, w)| w.clone())
            .collect();
        if found.len() > most.len() {
            most = found;
        }
    }
    most
}

/// The words of `text` that start with a capital letter, past its first word.
fn capitalized(text: &str) -> String {
    text.split_whitespace()
        .skip(1)
        .filter(|w| w.chars().next().is_some_and(char::is_uppercase))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The text itself when short, and its paragraphs (lines of a long paragraph): a long
/// concatenated context must not collect a key from unrelated memories.
fn paragraphs(text: &str) -> Vec<&str> {
    let mut out: Vec<&str> = text
        .split("\n\n")
        .flat_map(|p| {
            if p.len() > 600 {
                p.split('\n').collect::<Vec<_>>()
            } else {
                vec![p]
            }
        })
        .collect();
    if text.len() <= 600 {
        out.push(text);
    }
    out
}

#[cfg(test)]
mod tests;
