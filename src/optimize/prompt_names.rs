//! The variable names of the reference memory system's three optimizable prompts, as its traces
//! record them: the prompts an export keys (Mem0's config keys, [`super::export::mem0_key`]).
//! The system itself (`memtrace_memsys`) uses these names.

/// Variable name of the fact-extraction prompt.
pub const FACT_EXTRACTION: &str = "fact-extraction-system-prompt";
/// Variable name of the memory-update decision prompt.
pub const UPDATE_DECISION: &str = "memory-update-decision-prompt";
/// Variable name of the question-answering prompt.
pub const QUESTION_ANSWERING: &str = "question-answering-prompt";
