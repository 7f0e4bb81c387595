//! Names: the words memory systems and tracers name things with. They only break ties — roles
//! come from structure first — and a user renames them in the roles settings.

/// Substrings of an op's category or name that hint at its role: deletion, retrieval, response,
/// extraction, update, judge. The defaults cover Mem0, MemBase (NaiveRAG, EverMemOS,
/// Long-Context), LangMem, Letta/MemGPT tool calls and OpenInference span kinds.
pub const DELETION_HINTS: [&str; 4] = ["delet", "remove", "forget", "evict"];
pub const RETRIEVAL_HINTS: [&str; 6] = [
    "retriev",
    "search",
    "recall",
    "lookup",
    "rerank",
    "query_memory",
];
pub const RESPONSE_HINTS: [&str; 6] = [
    "question-answering",
    "answer",
    "respond",
    "response",
    "generate_reply",
    "send_message",
];
pub const EXTRACTION_HINTS: [&str; 6] = [
    "extract", "summar", "distill", "ingest", "memcell", "episod",
];
pub const UPDATE_HINTS: [&str; 12] = [
    "update",
    "upsert",
    "add",
    "write",
    "store",
    "insert",
    "merge",
    "mutation",
    "append",
    "replace",
    "consolidat",
    "profile",
];
pub const JUDGE_HINTS: [&str; 5] = ["judge", "grade", "score", "eval_", "evaluator"];

/// Substrings of a variable category that name conversation input (`message`, `chunk`).
const MESSAGE_KINDS: [&str; 5] = ["message", "chunk", "turn", "dialog", "document"];

/// The keys whose string is a record's readable text: a message's `content`, a memory's
/// `memory` or `text`, a unit's `data`, in this order.
pub const TEXT_KEYS: [&str; 4] = ["content", "memory", "text", "data"];

/// The keys of a value or its metadata that say when it was written, which its relative dates
/// ("yesterday") count from.
pub const DATE_KEYS: [&str; 5] = [
    "timestamp",
    "time",
    "date",
    "session_date_time",
    "date_time",
];

/// Whether a lowercase variable category names conversation input.
#[must_use]
pub fn names_messages(category: &str) -> bool {
    MESSAGE_KINDS.iter().any(|w| category.contains(w))
}
