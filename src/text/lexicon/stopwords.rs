//! Stop words: words that say nothing about where a fact went. Two lists share a common core
//! and differ on purpose: conversation text also drops chat fillers (`hey`, `thanks`, `yeah`);
//! trace text also drops the words of its own structure (`role`, `content`, `metadata`) and keeps
//! the fillers. Each list moves measured accuracy (memory-system judging, attribution), so
//! neither is folded into the other.

/// Which stop list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopList {
    /// Conversations: the reference memory systems, the simulated LLM and its judge rule.
    Chat,
    /// Trace text: attribution's key tokens (which words of a gold answer a variable carries).
    Trace,
}

/// In both lists (sorted, for binary search).
const COMMON: &[&str] = &[
    "a",
    "also",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "been",
    "but",
    "by",
    "did",
    "do",
    "does",
    "for",
    "from",
    "had",
    "has",
    "have",
    "he",
    "her",
    "his",
    "how",
    "i",
    "in",
    "is",
    "it",
    "its",
    "just",
    "me",
    "mentioned",
    "my",
    "of",
    "on",
    "or",
    "our",
    "really",
    "s",
    "she",
    "so",
    "t",
    "that",
    "the",
    "their",
    "them",
    "they",
    "this",
    "to",
    "too",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "who",
    "why",
    "will",
    "with",
    "you",
    "your",
];

/// Only in [`StopList::Chat`]: fillers and function words of conversation (sorted).
const CHAT_ONLY: &[&str] = &[
    "about", "after", "again", "all", "am", "any", "being", "can", "could", "d", "doing", "get",
    "got", "having", "here", "hers", "hey", "hi", "him", "if", "into", "kind", "like", "ll", "m",
    "more", "oh", "one", "out", "over", "re", "some", "such", "than", "thank", "thanks", "then",
    "there", "these", "those", "type", "up", "us", "ve", "while", "whom", "would", "wow", "yeah",
    "yours",
];

/// Only in [`StopList::Trace`]: field names of trace records, and yes/no/not (sorted).
const TRACE_ONLY: &[&str] = &[
    "below",
    "content",
    "memory",
    "message",
    "metadata",
    "name",
    "no",
    "not",
    "role",
    "speaker",
    "timestamp",
    "user",
    "yes",
];

/// True for a stop word of `list` (`token` lower-cased).
pub fn is_stop(token: &str, list: StopList) -> bool {
    let extra = match list {
        StopList::Chat => CHAT_ONLY,
        StopList::Trace => TRACE_ONLY,
    };
    COMMON.binary_search(&token).is_ok() || extra.binary_search(&token).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_sorted_and_disjoint() {
        for list in [COMMON, CHAT_ONLY, TRACE_ONLY] {
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{list:?}");
        }
        assert!(CHAT_ONLY
            .iter()
            .all(|w| !TRACE_ONLY.contains(w) && !COMMON.contains(w)));
        assert!(TRACE_ONLY.iter().all(|w| !COMMON.contains(w)));
    }

    #[test]
    fn the_lists_differ_where_meant() {
        assert!(is_stop("the", StopList::Chat) && is_stop("the", StopList::Trace));
        assert!(is_stop("thanks", StopList::Chat) && !is_stop("thanks", StopList::Trace));
        assert!(is_stop("metadata", StopList::Trace) && !is_stop("metadata", StopList::Chat));
        assert!(!is_stop("sweden", StopList::Chat));
    }
}
