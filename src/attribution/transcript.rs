//! The transcript of an LLM attribution run: one [`Step`] per tool call (or text answer) of each
//! model turn, with a short rendering of its arguments and result and the trace ids it looked
//! at, so a page can list the steps and highlight their nodes. Pure and serializable.

use serde::{Deserialize, Serialize};

use crate::model::Trace;
use crate::provider::ChatResponse;
use crate::text::shorten;

/// Characters kept of a step's arguments.
pub const ARGS_CHARS: usize = 160;
/// Characters kept of a step's result.
pub const RESULT_CHARS: usize = 240;
/// Trace ids kept per step.
pub const MAX_NODES: usize = 32;

/// One tool call (or text answer) of a model turn.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Step {
    /// The LLM call that asked for it, from 1.
    pub turn: u32,
    /// The tool called; `answer` for a text reply.
    pub tool: String,
    /// The arguments, shortened.
    pub args: String,
    /// What was sent back (or, for a text answer, what was made of it), shortened.
    pub result: String,
    /// Variable `full_node_id`s and `op_id`s of the trace named in the arguments or the result,
    /// in order of first mention.
    pub nodes: Vec<String>,
    /// The call was malformed or its answer invalid, and the model was told so.
    #[serde(default)]
    pub rejected: bool,
}

impl Step {
    /// A step whose ids are the trace's ids found in the full `args` and `result`.
    pub fn new(trace: &Trace, turn: u32, tool: &str, args: &str, result: &str) -> Step {
        let mut nodes = ids_in(trace, args);
        for id in ids_in(trace, result) {
            if nodes.len() >= MAX_NODES {
                break;
            }
            if !nodes.contains(&id) {
                nodes.push(id);
            }
        }
        Step {
            turn,
            tool: tool.to_owned(),
            args: shorten(&flat(args), ARGS_CHARS),
            result: shorten(&flat(result), RESULT_CHARS),
            nodes,
            rejected: result.starts_with("error"),
        }
    }
}

/// The steps a reply asks for, before their results are known (for a live view): one per tool
/// call, or one `answer` step for a text reply.
pub fn reply_steps(trace: &Trace, turn: u32, reply: &ChatResponse) -> Vec<Step> {
    if reply.tool_calls.is_empty() {
        return vec![Step::new(trace, turn, "answer", &reply.content, "")];
    }
    reply
        .tool_calls
        .iter()
        .map(|c| Step::new(trace, turn, &c.name, &c.arguments, ""))
        .collect()
}

/// Characters an id may hold (`U2:D1:1@1`, `op-<hex>`, `raw:str:<hex>@1`).
fn id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.' | '@')
}

/// The variable and op ids of `trace` named in `text`, in order of first mention, at most
/// [`MAX_NODES`].
///
/// # Complexity
/// O(len(text)) hash lookups.
pub fn ids_in(trace: &Trace, text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for token in text.split(|c: char| !id_char(c)) {
        // Punctuation that ends a sentence is not part of an id.
        let token = token.trim_end_matches(['.', ':']);
        if token.len() < 3 || out.len() >= MAX_NODES {
            continue;
        }
        let known = trace.op_by_id(token).is_some() || trace.var_by_id(token).is_some();
        if known && !out.iter().any(|t| t == token) {
            out.push(token.to_owned());
        }
    }
    out
}

/// `s` on one line, for a step or a reason: control characters (line breaks, tabs) as spaces,
/// trimmed. Runs of spaces are kept (unlike [`crate::text::one_line`]): what a step or a reason
/// shows of a value stays as it was.
pub fn flat(s: &str) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    flat.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{load, LoadOptions};

    const DEMO: &[u8] = include_bytes!("../../www/demo.json");

    #[test]
    fn steps_name_only_ids_of_the_trace() {
        let t = load(DEMO, LoadOptions::default()).unwrap().trace;
        let op = t.ops[0].op_id.clone();
        let var = t.vars[0].full_node_id.clone();
        let args = format!("{{\"node\": \"{var}\", \"other\": \"not-an-id@9\"}}");
        let result = format!("op {op}. then {var} again\nand more");
        let s = Step::new(&t, 3, "view_value", &args, &result);
        assert_eq!(s.nodes, vec![var.clone(), op]);
        assert_eq!(s.turn, 3);
        assert!(!s.result.contains('\n'));
        assert!(!s.rejected);
        let bad = Step::new(&t, 1, "view_value", "{", "error: bad json");
        assert!(bad.rejected && bad.nodes.is_empty());
    }

    #[test]
    fn long_text_is_shortened() {
        let s = shorten(&flat(&"x".repeat(500)), 10);
        assert_eq!(s.chars().count(), 11);
        assert!(s.ends_with('…'));
        assert_eq!(shorten(&flat(" a\tb "), 10), "a b");
    }
}
