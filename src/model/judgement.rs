//! Reading a judge's verdict: labels (`CORRECT` / `WRONG`, `pass` / `fail`), JSON outputs
//! (`{"label": "WRONG"}`, `{"correct": false}`, `{"score": 0.3}`), and the name hints that say an
//! op judges answers (`judge`, `eval`, `grade`, …). A graded score fails below a threshold
//! ([`DEFAULT_JUDGE_THRESHOLD`], settable: [`Judgement::at`]).

use aho_corasick::AhoCorasick;
use serde_json::Value;

/// What a judge said about one answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// True when the answer was judged wrong.
    pub failed: bool,
    /// The numeric score, when one was given.
    pub score: Option<f64>,
    /// The label, when one was given (`WRONG`, `incorrect`, …).
    pub label: Option<String>,
    /// True when `failed` comes from the score alone (no label, no `correct` key): a graded
    /// score, failed below a threshold ([`Judgement::at`]).
    pub graded: bool,
}

/// Scores below this fail, unless the caller sets another threshold.
pub const DEFAULT_JUDGE_THRESHOLD: f64 = 0.5;

impl Judgement {
    /// A verdict from a score alone: failed below `threshold`.
    pub fn of_score(score: f64, threshold: f64) -> Judgement {
        Judgement {
            failed: score < threshold,
            score: Some(score),
            label: None,
            graded: true,
        }
    }

    /// The verdict with a graded score judged against `threshold` (labels are kept as said).
    #[must_use]
    pub fn at(mut self, threshold: f64) -> Judgement {
        if let (true, Some(s)) = (self.graded, self.score) {
            self.failed = s < threshold;
        }
        self
    }
}

/// Whether a label says the answer failed: `Some(true)` for WRONG / incorrect / fail / false /
/// no, `Some(false)` for CORRECT / right / pass / true / yes, `None` for anything else.
pub fn label_failed(label: &str) -> Option<bool> {
    let l = label
        .trim()
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_ascii_lowercase()
        .replace([' ', '-'], "_");
    match l.as_str() {
        "wrong" | "incorrect" | "not_correct" | "fail" | "failed" | "false" | "no" | "bad" => {
            Some(true)
        }
        "correct" | "right" | "pass" | "passed" | "true" | "yes" | "good" => Some(false),
        _ => None,
    }
}

/// Keys whose string value is a label.
const LABEL_KEYS: [&str; 6] = [
    "label",
    "verdict",
    "judgment",
    "judgement",
    "grade",
    "result",
];
/// Keys whose boolean value says the answer was right.
const CORRECT_KEYS: [&str; 3] = ["correct", "is_correct", "passed"];

/// The verdict in a judge's output text: a JSON object (also inside a fenced block or after
/// some prose) with a label, correct or score key; a bare number; or a text naming exactly one
/// of the upper-case labels `CORRECT` / `WRONG` (Mem0's LoCoMo judge).
pub fn verdict_in(text: &str) -> Option<Judgement> {
    let t = text.trim();
    if let Ok(n) = t.parse::<f64>() {
        return n
            .is_finite()
            .then(|| Judgement::of_score(n, DEFAULT_JUDGE_THRESHOLD));
    }
    if let Some(v) = json_object_in(t)
        .as_ref()
        .and_then(|v| verdict_in_json(v, 0))
    {
        return Some(v);
    }
    // Most texts hold neither word: one pass says so before the word-boundary searches.
    let b = t.as_bytes();
    let words = memchr::memchr2_iter(b'C', b'W', b)
        .any(|i| b[i..].starts_with(b"CORRECT") || b[i..].starts_with(b"WRONG"));
    if !words {
        return None;
    }
    let has = |w: &str| {
        t.match_indices(w).any(|(i, _)| {
            let before = t[..i].chars().next_back();
            let after = t[i + w.len()..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
        })
    };
    let (wrong, correct) = (has("WRONG") || has("INCORRECT"), has("CORRECT"));
    (wrong != correct).then(|| Judgement {
        failed: wrong,
        score: None,
        label: Some(if wrong { "WRONG" } else { "CORRECT" }.to_owned()),
        graded: false,
    })
}

/// The verdict in a JSON value: label keys first, then correct keys, then `score`; nested
/// objects are searched (depth ≤ 3).
pub fn verdict_in_json(v: &Value, depth: usize) -> Option<Judgement> {
    let o = v.as_object()?;
    let get = |keys: &[&str]| {
        o.iter()
            .find(|(k, _)| keys.contains(&k.to_ascii_lowercase().as_str()))
            .map(|(_, v)| v)
    };
    if let Some(Value::String(l)) = get(&LABEL_KEYS) {
        if let Some(failed) = label_failed(l) {
            let score = get(&["score"]).and_then(number);
            return Some(Judgement {
                failed,
                score,
                label: Some(l.clone()),
                graded: false,
            });
        }
    }
    if let Some(c) = get(&CORRECT_KEYS).and_then(|c| match c {
        Value::Bool(b) => Some(*b),
        Value::String(s) => label_failed(s).map(|f| !f),
        _ => None,
    }) {
        return Some(Judgement {
            failed: !c,
            score: get(&["score"]).and_then(number),
            label: None,
            graded: false,
        });
    }
    if let Some(s) = get(&["score"]).and_then(number).filter(|s| s.is_finite()) {
        return Some(Judgement::of_score(s, DEFAULT_JUDGE_THRESHOLD));
    }
    if depth >= 3 {
        return None;
    }
    o.values().find_map(|x| verdict_in_json(x, depth + 1))
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        _ => None,
    }
}

/// The first JSON object in a text: the whole text, or from its first `{` to its last `}`
/// (a fenced block or prose around it).
pub fn json_object_in(text: &str) -> Option<Value> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    let v: Value = serde_json::from_str(text.get(start..=end)?).ok()?;
    v.is_object().then_some(v)
}

/// Words of a name, lower case: split at non-alphanumerics and lower→upper case changes
/// (`llm_judge`, `LLMJudge`, `eval.name` → `llm judge`, `llmjudge`, `eval name`).
pub fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            prev_lower = false;
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// True when a word of `name` says "judging answers" ([`is_judge_word`]).
pub fn says_judge(name: &str) -> bool {
    // A name holding no root of a judge word needs no splitting; one pass finds any root (this
    // runs on every op's name and metadata, several times a load).
    static ROOTS: std::sync::OnceLock<Option<AhoCorasick>> = std::sync::OnceLock::new();
    let roots = ROOTS.get_or_init(|| {
        AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(JUDGE_ROOTS)
            .ok()
    });
    let may = match roots {
        Some(ac) => ac.is_match(name),
        None => JUDGE_ROOTS
            .iter()
            .any(|n| crate::util::strings::contains_ignore_ascii_case(name, n)),
    };
    may && words(name).iter().any(|w| is_judge_word(w))
}

/// Every word [`is_judge_word`] accepts holds one of these (a test checks it).
const JUDGE_ROOTS: [&str; 4] = ["judg", "eval", "grad", "correctness"];

/// True when a word says "judging answers": judge, eval, evaluation, evaluator, grade, grader,
/// correctness (not `retrieval`, whose letters hold "eval").
pub fn is_judge_word(w: &str) -> bool {
    w.starts_with("judg")
        || w.starts_with("evaluat")
        || matches!(
            w,
            "eval" | "evals" | "grade" | "grader" | "grading" | "correctness" | "llmjudge"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_judge_word_holds_a_root() {
        for w in [
            "judge",
            "judging",
            "evaluator",
            "evaluation",
            "eval",
            "evals",
            "grade",
            "grader",
            "grading",
            "correctness",
            "llmjudge",
        ] {
            assert!(is_judge_word(w), "{w}");
            assert!(JUDGE_ROOTS.iter().any(|r| w.contains(r)), "{w}");
            assert!(says_judge(&format!("LLM_{}", w.to_uppercase())), "{w}");
        }
    }

    #[test]
    fn labels_json_and_words() {
        let v = verdict_in("```json\n{\"label\": \"WRONG\"}\n```").unwrap();
        assert!(v.failed);
        assert_eq!(v.label.as_deref(), Some("WRONG"));
        assert!(!verdict_in("{\"label\": \"CORRECT\"}").unwrap().failed);
        assert!(verdict_in("{\"correct\": false}").unwrap().failed);
        assert!(
            verdict_in("{\"score\": 0, \"reason\": \"no\"}")
                .unwrap()
                .failed
        );
        assert!(!verdict_in("{\"score\": 1}").unwrap().failed);
        let graded = verdict_in("{\"score\": 0.3}").unwrap();
        assert!(graded.failed, "0.3 is below the default 0.5");
        assert!(!graded.clone().at(0.2).failed);
        let labelled = verdict_in("{\"label\": \"CORRECT\", \"score\": 0.1}").unwrap();
        assert!(!labelled.at(0.5).failed, "a label is kept as said");
        assert!(verdict_in("The answer is WRONG.").unwrap().failed);
        assert_eq!(verdict_in("CORRECT or WRONG?"), None);
        assert_eq!(verdict_in("Alice is incorrect about it"), None);
        assert!(verdict_in("0.0").unwrap().failed);
        assert_eq!(words("LLMJudge eval.name"), ["llmjudge", "eval", "name"]);
        assert_eq!(words("answerJudge"), ["answer", "judge"]);
        assert!(words("llm_judge").iter().any(|w| is_judge_word(w)));
        assert!(!words("mem0.retrieval").iter().any(|w| is_judge_word(w)));
        assert_eq!(label_failed("not correct"), Some(true));
        assert_eq!(label_failed("relevant"), None);
    }
}
