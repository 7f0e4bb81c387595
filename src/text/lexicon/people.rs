//! Pronouns: how a speaker names themselves.

/// Words a speaker says of themselves.
const FIRST_PERSON: [&str; 5] = ["i", "me", "my", "mine", "myself"];

/// Whether a lowercase word is the speaker speaking of themselves.
#[must_use]
pub fn is_first_person(word: &str) -> bool {
    FIRST_PERSON.contains(&word)
}
