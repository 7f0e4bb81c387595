//! Injected faults: exactly one wrong operation of a chosen type at a chosen point. Each fault
//! names the gold answer it must break; "holding the answer" means the judge rule accepts the
//! text as an answer ([`super::text::judge_rule`]).

use serde::{Deserialize, Serialize};

use super::text::{judge_rule, stem, term_set};
use crate::model::ErrorType;

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
    /// `answer` with wrong content.
    Update { pair: usize, answer: String },
    /// At message pair `pair`, a deletion removes every live unit holding `answer`.
    Deletion { pair: usize, answer: String },
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

const SUBSTITUTES: [&str; 8] = [
    "pottery",
    "Tuesday",
    "Denver",
    "the violin",
    "chess",
    "seven",
    "blue",
    "a bakery",
];

/// `text` with every word of `answer` replaced by an unrelated one (deterministic).
pub fn garble(text: &str, answer: &str) -> String {
    let gold = term_set(answer);
    let mut out = Vec::new();
    for (i, w) in text.split_whitespace().enumerate() {
        let core: String = w
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_lowercase();
        if !core.is_empty() && gold.contains(&stem(&core)) {
            let tail: String = w
                .chars()
                .rev()
                .take_while(|c| !c.is_alphanumeric())
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let sub = SUBSTITUTES
                .get((i + core.len()) % SUBSTITUTES.len())
                .copied()
                .unwrap_or("pottery");
            out.push(format!("{sub}{tail}"));
        } else {
            out.push(w.to_owned());
        }
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbled_text_no_longer_holds_the_answer() {
        let t = "Caroline's grandma gave Caroline a necklace from Sweden.";
        assert!(holds(t, "Sweden"));
        let g = garble(t, "Sweden");
        assert!(!holds(&g, "Sweden"), "{g}");
        assert!(g.ends_with('.'));
    }
}
