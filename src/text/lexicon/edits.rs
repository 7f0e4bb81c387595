//! What a memory edit's verb says (an `"event": "DELETE"` field, a `delete_memory` tool): hints a
//! model or a library writes; a user whose system speaks otherwise names its ops' roles instead.

/// What an edit does to a memory unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditVerb {
    Add,
    Update,
    Delete,
    /// Leaves it as it is (Mem0's `NONE`).
    Keep,
}

const ADD: [&str; 7] = [
    "add", "create", "insert", "store", "save", "remember", "new",
];
const UPDATE: [&str; 9] = [
    "update", "edit", "modify", "replace", "change", "upsert", "revise", "correct", "merge",
];
const DELETE: [&str; 6] = ["delete", "remove", "forget", "erase", "drop", "discard"];
const KEEP: [&str; 5] = ["none", "noop", "keep", "unchanged", "skip"];

/// The verb one word says (any case), if any.
#[must_use]
pub fn edit_verb(word: &str) -> Option<EditVerb> {
    let w = word.to_ascii_lowercase();
    let is = |list: &[&str]| list.contains(&w.as_str());
    [
        (&DELETE[..], EditVerb::Delete),
        (&UPDATE, EditVerb::Update),
        (&ADD, EditVerb::Add),
        (&KEEP, EditVerb::Keep),
    ]
    .into_iter()
    .find_map(|(list, verb)| is(list).then_some(verb))
}

/// Whether a text holds one of a verb's words, in any case and any form ("Deleted", "removing").
#[must_use]
pub fn says_verb(text: &str, verb: EditVerb) -> bool {
    let text = text.to_ascii_lowercase();
    let list: &[&str] = match verb {
        EditVerb::Add => &ADD,
        EditVerb::Update => &UPDATE,
        EditVerb::Delete => &DELETE,
        EditVerb::Keep => &KEEP,
    };
    list.iter().any(|w| text.contains(w))
}

/// The verb of a name made of words (`delete_memory`, `updateMemory`, `memory.remove`): its
/// first word that is one.
#[must_use]
pub fn name_verb(name: &str) -> Option<EditVerb> {
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    for c in name.chars() {
        if (!c.is_alphanumeric() || c.is_uppercase()) && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        if c.is_alphanumeric() {
            cur.push(c);
        }
    }
    words.push(cur);
    words.iter().find_map(|w| edit_verb(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_are_read_from_words_and_names() {
        assert_eq!(edit_verb("DELETE"), Some(EditVerb::Delete));
        assert_eq!(edit_verb("NONE"), Some(EditVerb::Keep));
        assert_eq!(edit_verb("memory"), None);
        assert_eq!(name_verb("update_memory"), Some(EditVerb::Update));
        assert_eq!(name_verb("removeMemory"), Some(EditVerb::Delete));
        assert_eq!(name_verb("memory.add"), Some(EditVerb::Add));
        assert_eq!(name_verb("search_memory"), None);
    }
}
