//! Injected faults: exactly one wrong operation of a chosen type at a chosen point. Each fault
//! names the gold answer it must break; "holding the answer" means the judge rule accepts the
//! text as an answer ([`super::text::judge_rule`]).

use serde::{Deserialize, Serialize};

use super::text::{judge_rule, stem, term_set};
use memtrace::model::ErrorType;

/// One fault to inject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Fault {
    /// At message pair `pair`, the extraction drops (or, with `garble`, corrupts) the facts
    /// holding `answer`.
    Extraction {
        pair: usize,
        answer: String,
        garble: bool,
    },
    /// At message pair `pair`, the update decision overwrites every live unit holding
    /// `answer` (with `unit`: that live unit, whatever it holds) with wrong content.
    Update {
        pair: usize,
        answer: String,
        /// Reference memory system only: the id of the one unit to overwrite.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
    },
    /// At message pair `pair`, a deletion removes every live unit holding `answer` (with
    /// `unit`: that live unit).
    Deletion {
        pair: usize,
        answer: String,
        /// Reference memory system only: the id of the one unit to delete.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
    },
    /// For question `question` (its id), retrieval leaves out every unit holding `answer`.
    Retrieval { question: String, answer: String },
    /// For question `question`, the answer is wrong although the context is right.
    Response { question: String, answer: String },
}

impl Fault {
    /// The error type an attribution should report for it.
    pub fn error_type(&self) -> ErrorType {
        match self {
            Fault::Extraction { .. } => ErrorType::ExtractionError,
            Fault::Update { .. } => ErrorType::UpdateError,
            Fault::Deletion { .. } => ErrorType::DeletionError,
            Fault::Retrieval { .. } => ErrorType::RetrievalError,
            Fault::Response { .. } => ErrorType::ResponseError,
        }
    }

    /// `(pair, answer, garble)` of an extraction fault.
    pub(super) fn extraction_at(&self) -> Option<(usize, &str, bool)> {
        match self {
            Fault::Extraction {
                pair,
                answer,
                garble,
            } => Some((*pair, answer, *garble)),
            _ => None,
        }
    }

    /// `(pair, answer)` of an update fault.
    pub(super) fn update_at(&self) -> Option<(usize, &str)> {
        match self {
            Fault::Update { pair, answer, .. } => Some((*pair, answer)),
            _ => None,
        }
    }

    /// `(pair, answer)` of a deletion fault.
    pub(super) fn deletion_at(&self) -> Option<(usize, &str)> {
        match self {
            Fault::Deletion { pair, answer, .. } => Some((*pair, answer)),
            _ => None,
        }
    }

    /// The unit an update or deletion fault is anchored on (reference memory system only).
    pub fn unit(&self) -> Option<&str> {
        match self {
            Fault::Update { unit, .. } | Fault::Deletion { unit, .. } => unit.as_deref(),
            _ => None,
        }
    }

    /// The gold answer the fault targets.
    pub fn answer(&self) -> &str {
        match self {
            Fault::Extraction { answer, .. }
            | Fault::Update { answer, .. }
            | Fault::Deletion { answer, .. }
            | Fault::Retrieval { answer, .. }
            | Fault::Response { answer, .. } => answer,
        }
    }
}

/// True when `text` holds `answer`.
pub fn holds(text: &str, answer: &str) -> bool {
    judge_rule(text, answer)
}

/// True when `text` holds every content term of `answer` (the judge rule when it has none):
/// stricter than [`holds`], which one shared word of a two-word answer satisfies.
pub fn holds_whole(text: &str, answer: &str) -> bool {
    let gold = term_set(answer);
    if gold.is_empty() {
        return judge_rule(text, answer);
    }
    gold.is_subset(&term_set(text))
}

const SUBSTITUTES: [&str; 8] = [
    "coffee",
    "pottery",
    "Tuesday",
    "Denver",
    "chess",
    "the red van",
    "jazz",
    "a bakery",
];

/// `text` with every run of the answer's words replaced by one unrelated word or phrase
/// (deterministic).
pub fn garble(text: &str, answer: &str) -> String {
    let gold = term_set(answer);
    let mut out: Vec<String> = Vec::new();
    let mut in_run = false;
    for w in text.split_whitespace() {
        let core: String = w
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_lowercase();
        let hit = !core.is_empty() && gold.contains(&stem(&core));
        if !hit {
            in_run = false;
            out.push(w.to_owned());
            continue;
        }
        let tail: String = w
            .chars()
            .rev()
            .take_while(|c| !c.is_alphanumeric())
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if in_run {
            if let Some(last) = out.last_mut() {
                let trimmed = last
                    .trim_end_matches(|c: char| !c.is_alphanumeric())
                    .to_owned();
                *last = format!("{trimmed}{tail}");
            }
            continue;
        }
        in_run = true;
        let pick = answer.len() + out.len();
        let sub = SUBSTITUTES
            .get(pick % SUBSTITUTES.len())
            .copied()
            .unwrap_or("pottery");
        out.push(format!("{sub}{tail}"));
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_word_holds_leniently_not_whole() {
        let answer = "The Great Gatsby";
        let aside = "Try seltzer water instead. It can be a great alternative to soda.";
        assert!(holds(aside, answer) && !holds_whole(aside, answer));
        let stated = "The novel I'm reading is \"The Great Gatsby\".";
        assert!(holds_whole(stated, answer));
    }

    #[test]
    fn garbled_text_no_longer_holds_the_answer() {
        let t = "Caroline's grandma gave Caroline a necklace from Sweden.";
        assert!(holds(t, "Sweden"));
        let g = garble(t, "Sweden");
        assert!(!holds(&g, "Sweden"), "{g}");
        assert!(g.ends_with('.'));
        let two = garble(
            "Mom switched to chamomile tea every evening.",
            "chamomile tea",
        );
        assert_eq!(
            two.split_whitespace().count(),
            "Mom switched to X every evening."
                .split_whitespace()
                .count()
                + usize::from(two.contains("the red van") || two.contains("a bakery")),
            "{two}"
        );
    }
}
