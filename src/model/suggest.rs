//! The `--failed-if` rule `memtrace info` suggests when no failure is found.

use super::judged;
use super::structure::output_verdict;
use super::{OpIx, Trace};

fn all_ops(t: &Trace) -> impl Iterator<Item = OpIx> {
    (0..t.ops.len()).map(|o| OpIx(o as u32))
}

/// A `--failed-if` rule to try: an op whose output carries a label (a judge without a judge
/// name), else an op named like a judge, else the op that answers questions.
pub(super) fn suggest(t: &Trace, questions: &[bool]) -> String {
    let rule = |name: &str, re: &str| {
        let name = if name.contains(char::is_whitespace) {
            format!("\"{name}\"")
        } else {
            name.to_owned()
        };
        format!("--failed-if 'span={name} output~{re}'")
    };
    let labelled = all_ops(t).find_map(|op| {
        let (v, _) = output_verdict(t, op)?;
        let failed = v.failed;
        let re = v
            .label
            .filter(|l| failed && l.chars().all(char::is_alphanumeric));
        Some(rule(
            &t.op(op).op_name,
            &re.unwrap_or_else(|| "WRONG".into()),
        ))
    });
    let named = || {
        all_ops(t)
            .find(|&op| judged::judge_hint(t, op).is_some())
            .map(|op| rule(&t.op(op).op_name, "WRONG"))
    };
    let answering = || {
        all_ops(t)
            .filter(|&op| {
                t.flow.op_inputs[op.get()]
                    .iter()
                    .any(|v| questions[v.get()])
            })
            .filter(|&op| t.op(op).category.contains("llm"))
            .last()
            .map(|op| rule(&t.op(op).op_name, "(?i)do not know"))
    };
    labelled
        .or_else(named)
        .or_else(answering)
        .unwrap_or_else(|| rule("NAME", "WRONG"))
}
