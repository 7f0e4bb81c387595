//! obstrace (the ablation without the graph): the flat log of operations in time order, with
//! four tools — `inspect_trace`, `grep_log`, `view_window`, `view_operation` — and
//! `final_answer`. Each block is headed by the op's number and id so the answer can name it.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agent::{
    attribute_with_agent, fence, object_schema, spec, validate_verdict, verdict_schema,
    AgentLimits, AgentRun, ToolOutcome, Toolbox,
};
use super::prompts::{case_task, obstrace_system, roles_note, DEFAULT_PRIOR};
use super::roles::Roles;
use super::{Attribution, AttributionError};
use crate::algo::render::flat_log::op_block;
use crate::algo::search::{compile, RegexOptions};
use crate::algo::text::{byte_at_char, char_at_byte, char_window};
use crate::algo::{filter_ops, Filter};
use crate::model::{FailureCase, OpIx, Trace};
use crate::provider::{Llm, ToolSpec};

/// The flat log with the char offset of each op's block.
#[derive(Debug, Clone, Default)]
pub struct FlatLog {
    pub text: String,
    /// (op, char offset of its block), in log order.
    pub ops: Vec<(OpIx, usize)>,
}

impl FlatLog {
    /// Builds the log: ops sorted by (`created_at`, `op_id`), each block headed `[#i] op-…`.
    ///
    /// # Complexity
    /// O(n log n + total value length).
    pub fn build(trace: &Trace) -> FlatLog {
        Self::build_with(trace, None)
    }

    /// As [`FlatLog::build`], each block's head naming the op's pipeline role when `roles` is
    /// given.
    pub fn build_with(trace: &Trace, roles: Option<&Roles>) -> FlatLog {
        let mut log = FlatLog::default();
        let mut chars = 0usize;
        for (i, o) in filter_ops(trace, &Filter::default())
            .into_iter()
            .enumerate()
        {
            let block = op_block(trace, o).unwrap_or_default();
            let role = roles
                .map(|r| format!(" — {}", r.describe(o)))
                .unwrap_or_default();
            let head = format!("[#{i}] {}{role}\n", trace.op(o).op_id);
            log.ops.push((o, chars));
            chars += head.chars().count() + block.chars().count();
            log.text.push_str(&head);
            log.text.push_str(&block);
        }
        log
    }

    /// The block of the op numbered `i`.
    pub fn block(&self, i: usize) -> Option<&str> {
        let (_, start) = self.ops.get(i)?;
        let end = self.ops.get(i + 1).map_or(usize::MAX, |x| x.1);
        let a = byte_at_char(&self.text, *start);
        let b = byte_at_char(&self.text, end);
        self.text.get(a..b)
    }

    /// The op number holding char `offset`.
    fn op_at(&self, offset: usize) -> usize {
        self.ops
            .partition_point(|x| x.1 <= offset)
            .saturating_sub(1)
    }
}

/// Settings of obstrace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObsTrace {
    pub limits: AgentLimits,
    pub prior: String,
}

impl Default for ObsTrace {
    fn default() -> Self {
        ObsTrace {
            limits: AgentLimits::default(),
            prior: DEFAULT_PRIOR.to_owned(),
        }
    }
}

impl ObsTrace {
    // Kept twin (duplicates): the same signature as `GraphTrace::attribute_with`; both are
    // called through `attribute_case_with`, so the two agents stay interchangeable.
    /// Attributes one failed case with `llm`, given the ops' roles (listed in the task, shown
    /// in the log). [`super::attribute_case_run`] infers the roles itself.
    ///
    /// # Errors
    /// [`AttributionError::Unresolvable`] on a provider error or when no valid answer came
    /// within the iteration cap.
    pub async fn attribute_with<L: Llm>(
        &self,
        llm: &L,
        trace: &Trace,
        roles: &Roles,
        case: &FailureCase,
    ) -> Result<(Attribution, AgentRun), AttributionError> {
        let mut tools = ObsTools {
            trace,
            log: FlatLog::build_with(trace, Some(roles)),
            budget: self.limits.render_budget_chars,
        };
        let task = format!(
            "{}{}\nStart with inspect_trace.",
            case_task(case),
            roles_note(trace, roles)
        );
        attribute_with_agent(
            llm,
            trace,
            &obstrace_system(&self.prior),
            &task,
            &mut tools,
            &self.limits,
            "obstrace",
            &case.query_id,
        )
        .await
    }
}

/// The tools of one obstrace run.
pub struct ObsTools<'a> {
    trace: &'a Trace,
    log: FlatLog,
    budget: usize,
}

fn num(args: &Value, key: &str, default: usize) -> usize {
    args.get(key)
        .and_then(Value::as_u64)
        .map_or(default, |n| n as usize)
}

impl ObsTools<'_> {
    fn inspect(&self) -> String {
        let t = self.trace;
        let mut s = format!(
            "{} operations, {} variables, log of {} chars\n",
            self.log.ops.len(),
            t.vars.len(),
            self.log.text.chars().count()
        );
        let n = self.log.ops.len();
        for (label, range) in [("first", 0..n.min(3)), ("last", n.saturating_sub(3)..n)] {
            for i in range {
                if let Some(&(o, off)) = self.log.ops.get(i) {
                    let r = t.op(o);
                    let _ = writeln!(
                        s,
                        "{label}: [#{i}] {} {} at {} (char {off})",
                        r.op_id, r.op_name, r.created_at
                    );
                }
            }
        }
        fence(&s)
    }

    fn grep(&self, args: &Value) -> Result<String, String> {
        let pattern = args.get("pattern").and_then(Value::as_str).unwrap_or("");
        if pattern.is_empty() {
            return Err("give a non-empty `pattern`".into());
        }
        let opts = RegexOptions {
            case_insensitive: !args
                .get("case_sensitive")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            literal: !args.get("regex").and_then(Value::as_bool).unwrap_or(false),
            max_hits: num(args, "max_matches", 20),
            context_chars: num(args, "context", 80),
        };
        let re = compile(pattern, &opts).map_err(|e| e.to_string())?;
        let text = &self.log.text;
        let mut out = String::new();
        let mut total = 0usize;
        for m in re.find_iter(text) {
            total += 1;
            if total > opts.max_hits {
                continue;
            }
            let start = char_at_byte(text, m.start());
            let from = start.saturating_sub(opts.context_chars);
            let len = char_at_byte(text, m.end()) - from + opts.context_chars;
            let i = self.log.op_at(start);
            let _ = writeln!(
                out,
                "- char {start} in [#{i}]: …{}…",
                char_window(text, from, len).replace('\n', " ")
            );
        }
        let head = format!(
            "{total} matches of {pattern:?} (showing {})\n",
            total.min(opts.max_hits)
        );
        Ok(format!(
            "{head}{}",
            fence(char_window(&out, 0, self.budget))
        ))
    }

    fn window(&self, args: &Value) -> String {
        let start = num(args, "start", 0);
        let len = num(args, "length", self.budget).min(self.budget);
        let total = self.log.text.chars().count();
        format!(
            "chars {start}..{} of {total}\n{}",
            (start + len).min(total),
            fence(char_window(&self.log.text, start, len))
        )
    }

    fn operation(&self, args: &Value) -> Result<String, String> {
        let i = num(args, "index", usize::MAX);
        let block = self.log.block(i).ok_or_else(|| {
            format!(
                "no operation #{i}; operations are numbered 0..{}",
                self.log.ops.len()
            )
        })?;
        Ok(fence(char_window(block, 0, self.budget)))
    }
}

impl Toolbox for ObsTools<'_> {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![
            spec("inspect_trace", "Counts and the first and last operations of the log.", object_schema(&[])),
            spec("grep_log", "Search the log (plain text unless regex=true; case-insensitive unless case_sensitive=true).",
                object_schema(&[("pattern", "string", "text or regex"), ("regex", "boolean", "optional"), ("case_sensitive", "boolean", "optional"), ("max_matches", "integer", "optional"), ("context", "integer", "optional: chars around")])),
            spec("view_window", "View `length` chars of the log from char `start`.",
                object_schema(&[("start", "integer", "char offset"), ("length", "integer", "optional")])),
            spec("view_operation", "View operation number `index` (the [#i] in the log).",
                object_schema(&[("index", "integer", "op number")])),
            spec("final_answer", "Give the earliest decisive faulty operation.", verdict_schema()),
        ]
    }

    fn call(&mut self, name: &str, args: &Value) -> Result<ToolOutcome, String> {
        let text = match name {
            "inspect_trace" => self.inspect(),
            "grep_log" => self.grep(args)?,
            "view_window" => self.window(args),
            "view_operation" => self.operation(args)?,
            "final_answer" => return validate_verdict(self.trace, args).map(ToolOutcome::Final),
            other => return Err(format!("no tool {other}")),
        };
        Ok(ToolOutcome::Text(text))
    }
}
