//! The discriminating parts of a gold answer — its dates, numbers, names and negation — and
//! whether a text keeps them. A text that keeps most of the answer's words but changes one of
//! these does not hold the answer; one that keeps them in other words does.

use std::collections::BTreeSet;
use std::fmt;

use super::dates::{mentions, show_span, toks, Mention, Tok};
use crate::text::lexicon::{
    affirms, is_contracted_negation, is_negation, month_of, number_of, ordinal_digits, weekday_of,
    ANSWER_NO, NEGATION_REACH,
};
use crate::text::stem;
use crate::util::calendar::Date;

/// A part of the gold answer that tells it apart from a look-alike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    Date(Mention),
    Number {
        value: i64,
        text: String,
    },
    /// A proper name: its words, lower-cased.
    Name {
        words: Vec<String>,
        text: String,
    },
}

/// The stems of a part's words.
pub fn part_terms(p: &Part) -> BTreeSet<String> {
    let words = match p {
        Part::Date(d) => d.text(),
        Part::Number { text, .. } => text,
        Part::Name { words, .. } => return words.iter().map(|w| stem(w)).collect(),
    };
    toks(words).iter().map(|x| stem(&x.low)).collect()
}

/// True when a text mentions a date, absolute or relative.
pub fn has_date(text: &str) -> bool {
    !mentions(&toks(text), None).0.is_empty()
}

/// How a text departs from the gold answer's discriminating parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// `date`, `number`, `name` or `negation`.
    pub kind: &'static str,
    pub gold: String,
    /// What the text has instead, if anything.
    pub found: Option<String>,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind, &self.found) {
            ("negation", Some(w)) => write!(f, "added a negation ({w:?}) to {:?}", self.gold),
            ("negation", None) => write!(f, "dropped the negation of {:?}", self.gold),
            (kind, Some(w)) => write!(f, "changed the {kind} {} → {w}", self.gold),
            (kind, None) => write!(f, "dropped the {kind} {}", self.gold),
        }
    }
}

/// The discriminating parts of a gold answer.
#[derive(Debug, Clone, Default)]
pub struct Parts {
    pub parts: Vec<Part>,
    /// The gold answer is negated ("not defined by weight"), with the gold terms a negation
    /// must stand before; `None` when negation does not tell it apart.
    pub negated: Option<(bool, BTreeSet<String>)>,
    /// Stems of the gold answer's words that belong to a part.
    pub terms: BTreeSet<String>,
    /// Names the question or evidence use: another name in a text is not a swap.
    known: BTreeSet<String>,
    /// The question's names ("caroline"), and the evidence's other names.
    asked_names: BTreeSet<String>,
    other_names: BTreeSet<String>,
    gold_text: String,
}

/// What a text offers: its dates, numbers, capitalized words and word stems.
struct Seen {
    dates: Vec<Mention>,
    numbers: Vec<(i64, String)>,
    caps: Vec<String>,
    stems: BTreeSet<String>,
}

/// Numbers outside dates: digits, ordinals (`3rd`) and number words (`twenty-five`).
fn numbers(t: &[Tok<'_>], in_date: &[bool]) -> Vec<(i64, String, usize)> {
    let mut out: Vec<(i64, String, usize)> = Vec::new();
    for (i, tok) in t.iter().enumerate() {
        if in_date.get(i).copied().unwrap_or(false) {
            continue;
        }
        let w = tok.low.as_str();
        let Some(v) = number_of(ordinal_digits(w).unwrap_or(w)) else {
            continue;
        };
        // twenty-five, twenty five.
        if let Some(last) = out.last_mut() {
            if last.2 + 1 == i && last.0 % 10 == 0 && (20..100).contains(&last.0) && v < 10 {
                last.0 += v;
                last.1 = format!("{}{}{}", last.1, tok.gap, tok.raw);
                last.2 = i;
                continue;
            }
        }
        out.push((v, tok.raw.to_owned(), i));
    }
    out
}

fn is_name_word(tok: &Tok<'_>) -> bool {
    tok.raw.starts_with(|c: char| c.is_ascii_uppercase())
        && tok.raw != "I"
        && month_of(&tok.low).is_none()
        && weekday_of(&tok.low).is_none()
        && !tok.low.chars().all(|c| c.is_ascii_digit())
}

/// One name, or a name and its short form or possessive ("mel" / "melanie", "caroline's").
fn alias(a: &str, b: &str) -> bool {
    a == b || (a.len().min(b.len()) >= 3 && (a.starts_with(b) || b.starts_with(a)))
}

/// Capitalized words not at a sentence start.
fn caps<'t, 'a>(t: &'t [Tok<'a>]) -> impl Iterator<Item = &'t Tok<'a>> {
    t.iter().filter(|x| !x.starts_sentence && is_name_word(x))
}

fn seen(text: &str, anchor: Option<Date>) -> Seen {
    let t = toks(text);
    let (dates, in_date) = mentions(&t, anchor);
    Seen {
        numbers: numbers(&t, &in_date)
            .into_iter()
            .map(|(v, s, _)| (v, s))
            .collect(),
        caps: caps(&t).map(|x| x.raw.to_owned()).collect(),
        stems: t.iter().map(|x| stem(&x.low)).collect(),
        dates,
    }
}

/// How the gold words of a text are said: the first negation found within four words before
/// one (same clause), and whether some gold word stands with no negation before it.
fn negations(t: &[Tok<'_>], terms: &BTreeSet<String>) -> (Option<String>, bool) {
    let neg = |k: usize| -> Option<String> {
        let x = t.get(k)?;
        if is_negation(&x.low) {
            return Some(x.raw.to_owned());
        }
        // didn't, don't, can't, won't.
        let next = t.get(k + 1)?;
        (is_contracted_negation(&x.low, &next.low) && matches!(next.gap, "'" | "’"))
            .then(|| format!("{}{}t", x.raw, next.gap))
    };
    // "don't forget to", "not only", "can't wait to" affirm.
    let idiom = |k: usize| {
        t.get(k + 1..k + 3)
            .unwrap_or_default()
            .iter()
            .any(|x| affirms(&x.low))
    };
    let (mut negated, mut plain) = (None, false);
    for (i, x) in t.iter().enumerate() {
        if !terms.contains(&stem(&x.low)) {
            continue;
        }
        let mut found = None;
        for k in (i.saturating_sub(NEGATION_REACH)..i).rev() {
            let breaks = t
                .get(k + 1)
                .is_some_and(|n| n.gap.contains([',', '.', ';', ':', '!', '?', '\n']));
            if breaks {
                break;
            }
            found = neg(k).filter(|_| !idiom(k));
            if found.is_some() {
                break;
            }
        }
        plain |= found.is_none();
        negated = negated.or(found);
    }
    (negated, plain)
}

impl Parts {
    /// The parts of `gold` (and whether it is negated) that `question` does not already state.
    /// `evidence` tells which capitalized first words are names.
    pub fn of(
        gold: &[String],
        question: &str,
        evidence: &[String],
        gold_terms: &BTreeSet<String>,
    ) -> Parts {
        let q = toks(question);
        let (q_dates, q_in_date) = mentions(&q, None);
        let q_numbers: BTreeSet<i64> = numbers(&q, &q_in_date).into_iter().map(|n| n.0).collect();
        let q_stems: BTreeSet<String> = q.iter().map(|x| stem(&x.low)).collect();
        let mut known: BTreeSet<String> = caps(&q).map(|x| x.low.clone()).collect();
        let mut ev_caps = BTreeSet::new();
        // Speaker labels ("Melanie: Wow…") name people too, at a line's start.
        let mut labels = BTreeSet::new();
        for e in evidence {
            let t = toks(e);
            ev_caps.extend(caps(&t).map(|x| x.low.clone()));
            labels.extend(
                t.iter()
                    .zip(t.iter().skip(1))
                    .filter(|(x, next)| next.gap.starts_with(':') && is_name_word(x))
                    .map(|(x, _)| x.low.clone()),
            );
        }
        let asked_names: BTreeSet<String> = known.clone();
        let gold_low = gold.join(" ").to_lowercase();
        let other_names = ev_caps
            .union(&labels)
            .filter(|n| !asked_names.iter().any(|a| alias(a, n)) && !gold_low.contains(n.as_str()))
            .cloned()
            .collect();
        known.extend(ev_caps.iter().cloned());
        let mut out = Parts {
            known,
            asked_names,
            other_names,
            gold_text: gold.join("; "),
            ..Parts::default()
        };
        // "What does Jon say he won't do?" "Quit": the answer stands under the question's negation.
        let mut negated = negations(&q, &q_stems).0.is_some();
        for g in gold {
            let t = toks(g);
            let (dates, in_date) = mentions(&t, None);
            for (k, x) in t.iter().enumerate() {
                if in_date.get(k).copied().unwrap_or(false) {
                    out.terms.insert(stem(&x.low));
                }
            }
            for d in dates {
                // A day worked out from "the Sunday before 25 May" is often a day off.
                let d = match d {
                    Mention::Span { lo, hi, text }
                        if lo == hi && (text.contains("before") || text.contains("after")) =>
                    {
                        Mention::Span {
                            lo: lo - 1,
                            hi: hi + 1,
                            text,
                        }
                    }
                    d => d,
                };
                if !q_dates.contains(&d)
                    && !matches!(d, Mention::Unresolved { .. })
                    && !out.parts.contains(&Part::Date(d.clone()))
                {
                    out.parts.push(Part::Date(d));
                }
            }
            for (value, text, k) in numbers(&t, &in_date) {
                // "one" is as often a pronoun as a number.
                if !q_numbers.contains(&value) && text != "one" {
                    out.terms.extend(t.get(k).map(|x| stem(&x.low)));
                    out.parts.push(Part::Number { value, text });
                }
            }
            // Names: capitalized words not at a sentence start, or capitalized in the evidence.
            let mut name: Vec<&Tok<'_>> = Vec::new();
            let flush = |name: &mut Vec<&Tok<'_>>, out: &mut Parts| {
                if !name.is_empty() {
                    let words: Vec<String> = name.iter().map(|x| x.low.clone()).collect();
                    let text = name.iter().map(|x| x.raw).collect::<Vec<_>>().join(" ");
                    out.terms.extend(words.iter().map(|w| stem(w)));
                    out.parts.push(Part::Name { words, text });
                    name.clear();
                }
            };
            for (k, x) in t.iter().enumerate() {
                let is_name = is_name_word(x)
                    && !in_date.get(k).copied().unwrap_or(false)
                    && (!x.starts_sentence || ev_caps.contains(&x.low))
                    && !q_stems.contains(&stem(&x.low));
                if !is_name || x.gap.trim() != "" {
                    flush(&mut name, &mut out);
                }
                if is_name {
                    name.push(x);
                }
            }
            flush(&mut name, &mut out);
            // A leading "No," answers a yes/no question; "not", "never" inside negate the answer.
            let lead_no = t.first().is_some_and(|x| x.low == ANSWER_NO)
                && t.get(1)
                    .is_none_or(|x| x.gap.trim().len() == 1 && !x.gap.trim().is_empty());
            let inner = if lead_no {
                t.get(1..).unwrap_or_default()
            } else {
                &t[..]
            };
            negated |= negations(inner, gold_terms).0.is_some();
        }
        // Negation tells the answer apart only when the evidence agrees with the gold answer
        // about it ("don't forget to stay positive" states "stay positive").
        let ev_negated = evidence
            .iter()
            .any(|e| negations(&toks(e), gold_terms).0.is_some());
        if !gold_terms.is_empty() && (evidence.is_empty() || ev_negated == negated) {
            out.negated = Some((negated, gold_terms.clone()));
        }
        out
    }

    /// True when the gold answer has no discriminating part.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty() && !self.negated.as_ref().is_some_and(|n| n.0)
    }

    /// Keeps only the parts `keep` accepts (the negation stays).
    pub fn retain(&mut self, keep: impl Fn(&Part) -> bool) {
        self.parts.retain(keep);
    }

    /// How `text` departs from the parts, if it does; `anchor` is the day the text was
    /// written, for its relative dates (and its date, when it states none).
    ///
    /// # Complexity
    /// O(words of `text` × parts).
    /// `Ok(true)` when the text states every part itself, `Ok(false)` when a date is only
    /// implied by the anchor (a text stating no date, written on the gold day).
    ///
    /// # Errors
    /// The first part the text changes or drops, as a [`Change`].
    pub fn check(&self, text: &str, anchor: Option<Date>) -> Result<bool, Change> {
        if self.parts.is_empty() && self.negated.is_none() {
            return Ok(true);
        }
        let mut stated = true;
        let s = seen(text, anchor);
        for p in &self.parts {
            match p {
                Part::Date(g) => stated &= Self::check_date(g, &s, anchor)?,
                Part::Number { value, text } => {
                    if !s.numbers.iter().any(|n| n.0 == *value) {
                        return Err(Change {
                            kind: "number",
                            gold: text.clone(),
                            found: s.numbers.first().map(|n| n.1.clone()),
                        });
                    }
                }
                Part::Name { words, text } => {
                    if !words.iter().all(|w| s.stems.contains(&stem(w))) {
                        let other = s.caps.iter().find(|c| {
                            let low = c.to_ascii_lowercase();
                            !self.known.contains(&low) && !words.contains(&low)
                        });
                        return Err(Change {
                            kind: "name",
                            gold: text.clone(),
                            found: other.cloned(),
                        });
                    }
                }
            }
        }
        if let Some((gold_negated, terms)) = &self.negated {
            // Negated: some gold word is negated. Not negated: some gold word is not (a list
            // of facts may hold another fact that negates it).
            let (found, plain) = negations(&toks(text), terms);
            let differs = if *gold_negated {
                found.is_none()
            } else {
                found.is_some() && !plain
            };
            if differs {
                return Err(Change {
                    kind: "negation",
                    gold: self.gold_text.clone(),
                    found,
                });
            }
        }
        Ok(stated)
    }

    /// The text speaks of another person of the evidence instead of the one asked about
    /// ("Melanie was out walking …" for "What did Caroline find on her walk?"): the asked name
    /// and the one found. Nicknames count as the name ("Mel" for "Melanie").
    pub fn subject_swapped(&self, text: &str) -> Option<Change> {
        if self.asked_names.is_empty() || self.other_names.is_empty() {
            return None;
        }
        let t = toks(text);
        let asked = |low: &str| self.asked_names.iter().any(|a| alias(a, low));
        if t.iter().any(|x| asked(&x.low)) {
            return None;
        }
        let other = t
            .iter()
            .find(|x| is_name_word(x) && self.other_names.contains(&x.low))?;
        Some(Change {
            kind: "name",
            gold: self.asked_names.iter().next().cloned().unwrap_or_default(),
            found: Some(other.raw.to_owned()),
        })
    }

    fn check_date(g: &Mention, s: &Seen, anchor: Option<Date>) -> Result<bool, Change> {
        if s.dates.iter().any(|d| d.within(g)) {
            return Ok(true);
        }
        // A text stating no date was written on its anchor day.
        if s.dates.is_empty() {
            if let Some(a) = anchor {
                let day = a.days();
                let at = Mention::Span {
                    lo: day,
                    hi: day,
                    text: a.long(),
                };
                if at.within(g) {
                    return Ok(false);
                }
            }
        }
        let other = s
            .dates
            .iter()
            .find(|d| d.disjoint(g))
            .or_else(|| s.dates.first())
            .map(|d| match d {
                Mention::Span { lo, hi, text }
                    if text.chars().any(|c| c.is_ascii_alphabetic())
                        && !text.contains(char::is_numeric) =>
                {
                    format!("{text} ({})", show_span(*lo, *hi))
                }
                other => other.text().to_owned(),
            });
        Err(Change {
            kind: "date",
            gold: g.text().to_owned(),
            found: other,
        })
    }
}
