//! Negation: the words that turn a statement into its opposite, and the idioms in which they
//! do not ("not only", "never forget", "can't wait").

/// Words that negate what follows them in the same clause.
const NEGATIONS: [&str; 10] = [
    "not", "no", "never", "nor", "neither", "none", "nobody", "nothing", "cannot", "without",
];

/// Words right after a negation that make it affirm ("not only", "don't forget to", "can't
/// wait to", "no doubt", "never hesitate to").
const AFFIRMING: [&str; 5] = ["only", "forget", "wait", "doubt", "hesitate"];

/// The word that answers a yes/no question in the negative ("No, she moved in May").
pub const ANSWER_NO: &str = "no";

/// How far before a word a negation still negates it, in tokens.
pub const NEGATION_REACH: usize = 4;

/// Whether a lowercase word negates.
#[must_use]
pub fn is_negation(word: &str) -> bool {
    NEGATIONS.contains(&word)
}

/// Whether a contraction's two tokens negate: `didn` + `t` ("didn't", split at its apostrophe).
#[must_use]
pub fn is_contracted_negation(stem: &str, next: &str) -> bool {
    stem.ends_with('n') && next == "t"
}

/// Whether a lowercase word right after a negation makes it affirm.
#[must_use]
pub fn affirms(word: &str) -> bool {
    AFFIRMING.contains(&word)
}
