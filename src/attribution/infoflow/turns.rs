//! Where a conversation's turns enter a trace, found without evidence ids. Real tracers seldom
//! record a turn as a message of its own: it sits in a prompt that embeds several turns, in a
//! framework's state, in a `memory.add` input. A turn is a line of a root input (a value no op
//! wrote), cut again at speaker labels when one line holds several ("user: A: … assistant: B:
//! …"), unless an op had written it before (a memory a prompt lists). It enters where it is
//! first read by an op that hands on text. A failed case's turns are ranked against its question
//! and gold answer (rare words first, the gold's words twice).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Range;

use super::Stage;
use crate::attribution::roles::{OpRole, Roles};
use crate::attribution::text::{mentions, terms, toks, var_texts, Mention};
use crate::attribution::values::{hands_no_text, shingles, words};
use crate::model::{pyrepr, FailureCase, Trace, VarIx};

/// A turn where it enters the trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// The value it first enters in.
    pub var: VarIx,
    /// The other values it enters in, each no op's copy (a prompt that embeds it again).
    pub also: Vec<VarIx>,
    /// Which of the value's texts ([`var_texts`]) and where in it (bytes).
    pub leaf: usize,
    pub range: Range<usize>,
    pub text: String,
    /// How well it matches the case (question and gold answer).
    pub score: f64,
}

/// Stretches of a text that may each be a turn: its lines (a line break written as `\n` inside a
/// quoted string too, and the items of a quoted list of strings), a line cut again before each
/// speaker label that follows a sentence's end.
pub(crate) fn segments(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let lines = text
        .split_inclusive('\n')
        .flat_map(|l| l.split_inclusive("\\n"))
        .flat_map(|l| l.split_inclusive("\", \""));
    for line in lines {
        let end = start + line.len();
        let mut from = start;
        for cut in label_starts(line) {
            push_trimmed(text, from..start + cut, &mut out);
            from = start + cut;
        }
        let body = end
            - ["\\n", "\", \""]
                .iter()
                .find(|sep| line.ends_with(*sep))
                .map_or(0, |sep| sep.len());
        push_trimmed(text, from..body.max(from), &mut out);
        start = end;
    }
    out
}

fn push_trimmed(text: &str, r: Range<usize>, out: &mut Vec<Range<usize>>) {
    let s = &text[r.clone()];
    let lead = s.len() - s.trim_start().len();
    let trail = s.len() - s.trim_end().len();
    if r.end - trail > r.start + lead {
        out.push(r.start + lead..r.end - trail);
    }
}

/// Byte offsets (past 0) in a line where a speaker label (`Name:` or `role: Name:`) starts
/// right after the end of a sentence.
fn label_starts(line: &str) -> Vec<usize> {
    let bytes = line.as_bytes();
    let mut cuts = Vec::new();
    let mut i = 1;
    while i < bytes.len() {
        let after_sentence =
            bytes[i - 1] == b' ' && line[..i].trim_end().ends_with(['.', '!', '?', '"', ')']);
        if after_sentence && is_label(&line[i..]) {
            cuts.push(i);
        }
        i += 1;
    }
    cuts
}

/// A word of letters (a name, a role) followed by a colon and a space.
fn is_label(s: &str) -> bool {
    let word: String = s
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let first_is_letter = word.chars().next().is_some_and(char::is_alphabetic);
    first_is_letter && word.len() <= 24 && s[word.len()..].starts_with(": ")
}

/// The segments of a text with their texts; a segment that is JSON or a Python literal (a list
/// of memories a prompt quotes) is its strings, each where the segment is.
fn pieces(text: &str) -> Vec<(Range<usize>, String)> {
    let mut out = Vec::new();
    for r in segments(text) {
        let seg = &text[r.clone()];
        // JSON, or a Python list or dict as `repr` writes it.
        let json = seg
            .starts_with(['[', '{'])
            .then(|| pyrepr::to_json(seg))
            .filter(|v| v.is_array() || v.is_object());
        match json {
            Some(v) => {
                let mut leaves = Vec::new();
                crate::attribution::text::leaves(&v, &mut leaves);
                out.extend(leaves.into_iter().map(|x| (r.clone(), x)));
            }
            None => out.push((r, seg.to_owned())),
        }
    }
    out
}

/// Every turn of the trace said before the case's question (each distinct text once, where it
/// first enters), unscored.
fn entering(t: &Trace, roles: &Roles, stage: &Stage) -> Vec<Turn> {
    // The earliest time an op wrote each shingle.
    let mut written: HashMap<u64, &str> = HashMap::new();
    for (i, rec) in t.vars.iter().enumerate() {
        if t.flow.producers[i].is_empty() {
            continue;
        }
        for leaf in var_texts(rec) {
            for s in shingles(&leaf) {
                let at = written.entry(s).or_insert(rec.created_at.as_str());
                if rec.created_at.as_str() < *at {
                    *at = rec.created_at.as_str();
                }
            }
        }
    }
    let reads_text = |o| {
        !stage.is_answer(o)
            && !matches!(roles.role(o), OpRole::Judge | OpRole::Retrieval)
            && !hands_no_text(t, o)
    };
    let mut order: Vec<VarIx> = (0..t.vars.len() as u32)
        .map(VarIx)
        .filter(|&v| v != stage.query && t.flow.producers[v.get()].is_empty())
        .filter(|&v| t.var(v).created_at <= stage.cutoff)
        .filter(|&v| {
            let readers = &t.flow.consumers[v.get()];
            readers
                .iter()
                .any(|&o| reads_text(o) && !stage.pipeline.contains(&o))
        })
        .collect();
    order.sort_by(|a, b| {
        t.var(*a)
            .created_at
            .cmp(&t.var(*b).created_at)
            .then(a.cmp(b))
    });
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<Turn> = Vec::new();
    for v in order {
        let at = t.var(v).created_at.as_str();
        // A value read all through the run (instructions, a template: by ops of more than three
        // sessions) is no one's turn; a turn is read where it is said.
        let sessions: BTreeSet<&str> = (t.flow.consumers[v.get()].iter())
            .filter(|&&o| reads_text(o))
            .map(|&o| t.op(o).session_id.as_str())
            .collect();
        let weight = if sessions.len() > 3 { 0.25 } else { 1.0 };
        for (leaf, text) in var_texts(t.var(v)).into_iter().enumerate() {
            for (range, seg) in pieces(&text) {
                let seg = seg.as_str();
                if words(seg).len() < 3 {
                    continue;
                }
                // A turn met again (a prompt or a state that copies it) is where it enters too.
                let said = words(seg).join(" ");
                if let Some(&i) = seen.get(&said) {
                    if out[i].var != v && !out[i].also.contains(&v) {
                        out[i].also.push(v);
                    }
                    continue;
                }
                // What an op wrote before (a memory a prompt lists) is no turn.
                let sh = shingles(seg);
                let copied = sh
                    .iter()
                    .filter(|s| written.get(s).is_some_and(|w| *w <= at));
                if !sh.is_empty() && copied.count() * 10 >= sh.len() * 7 {
                    continue;
                }
                seen.insert(said, out.len());
                out.push(Turn {
                    var: v,
                    also: Vec::new(),
                    leaf,
                    range,
                    text: seg.to_owned(),
                    score: weight,
                });
            }
        }
    }
    out
}

/// The case's turns, best first: each scored by the rare words it shares with the question
/// and (counted twice) with the gold answer.
pub(super) fn ranked(t: &Trace, roles: &Roles, stage: &Stage, case: &FailureCase) -> Vec<Turn> {
    let mut turns = entering(t, roles, stage);
    let bags: Vec<BTreeSet<String>> = turns.iter().map(|x| terms(&x.text)).collect();
    let mut df: BTreeMap<&str, usize> = BTreeMap::new();
    for bag in &bags {
        for w in bag {
            *df.entry(w.as_str()).or_default() += 1;
        }
    }
    let n = bags.len().max(1) as f64;
    let idf = |w: &str| (1.0 + n / df.get(w).copied().unwrap_or(1) as f64).ln();
    let (gold, days) = gold_words_and_days(&case.golden_answers);
    let asked = terms(&case.query);
    // A turn whose value states a day near the gold date's (a session's date) is more likely.
    let near = |x: &Turn| {
        !days.is_empty()
            && var_texts(t.var(x.var)).iter().any(|leaf| {
                stated_days(leaf)
                    .iter()
                    .any(|&(lo, hi)| days.iter().any(|&(a, b)| lo <= b + 14 && a <= hi + 14))
            })
    };
    for (turn, bag) in turns.iter_mut().zip(&bags) {
        turn.score *= bag
            .iter()
            .map(|w| {
                let weight = f64::from(u8::from(gold.contains(w))) * 2.0
                    + f64::from(u8::from(asked.contains(w) && !gold.contains(w)));
                weight * idf(w)
            })
            .sum::<f64>()
            * if near(turn) { 1.5 } else { 1.0 };
    }
    turns.retain(|x| x.score > 0.0);
    turns.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.var.cmp(&b.var)));
    turns
}

/// The gold answer's words that are not part of a date ("the week before 9 June 2023" has
/// none: a session header saying "9 June, 2023" is no better a match than any turn of that
/// day), and its dates as spans of days.
fn gold_words_and_days(golden: &[String]) -> (BTreeSet<String>, Vec<(i64, i64)>) {
    let mut words = BTreeSet::new();
    let mut days = Vec::new();
    for g in golden {
        let toks = toks(g);
        let (found, used) = mentions(&toks, None);
        days.extend(found.iter().filter_map(|m| match m {
            Mention::Span { lo, hi, .. } => Some((*lo, *hi)),
            _ => None,
        }));
        let rest: Vec<&str> = (toks.iter().zip(&used))
            .filter(|(_, u)| !**u)
            .map(|(x, _)| x.raw)
            .collect();
        words.extend(terms(&rest.join(" ")));
    }
    (words, days)
}

/// The days and spans (a month at most) a text states outright.
pub(super) fn stated_days(text: &str) -> Vec<(i64, i64)> {
    let (found, _) = mentions(&toks(text), None);
    found
        .into_iter()
        .filter_map(|m| match m {
            Mention::Span { lo, hi, .. } if hi - lo <= 31 => Some((lo, hi)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str) -> Vec<&str> {
        segments(text).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn a_prompt_is_cut_into_its_lines_and_a_line_at_its_speakers() {
        let prompt = "## New Messages\nuser: Caroline: I went to a group yesterday.\n\nassistant: Melanie: Wow!\n";
        assert_eq!(
            cut(prompt),
            [
                "## New Messages",
                "user: Caroline: I went to a group yesterday.",
                "assistant: Melanie: Wow!"
            ]
        );
        let escaped = r#""A: Hi Mel!\nB: Hey.""#;
        assert_eq!(cut(escaped), [r#""A: Hi Mel!"#, r#"B: Hey.""#]);
        let listed = r#"["A: Hi Mel!", "B: Hey."]"#;
        assert_eq!(cut(listed), [r#"["A: Hi Mel!"#, r#"B: Hey."]"#]);
        let inline = "user: Caroline: Hey Mel! How are you? assistant: Melanie: Swamped: kids & work. Jon: ok";
        assert_eq!(
            cut(inline),
            [
                "user: Caroline: Hey Mel! How are you?",
                "assistant: Melanie: Swamped: kids & work.",
                "Jon: ok"
            ]
        );
    }
}
