//! graphtrace: an LLM agent that walks a frontier of variable nodes over the execution graph,
//! earliest-created first, with seven tools (method.md): `initialize`, `explore_frontier`,
//! `view_value`, `edit_frontier`, `finish_node`, `finish_exploration`, `view_history`.

pub mod frontier;

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agent::{
    attribute_with_agent, fence, object_schema, spec, validate_verdict, verdict_schema,
    AgentLimits, AgentRun, ToolOutcome, Toolbox,
};
use super::prompts::{case_task, graphtrace_system, roles_note, DEFAULT_PRIOR};
use super::roles::Roles;
use super::{Attribution, AttributionError, InfoFlow};
use crate::algo::render::{render_op_xml, render_preview, render_value, render_value_hits};
use crate::algo::search::RegexOptions;
use crate::algo::start_points::{start_point_query, start_points, MessageIndex};
use crate::algo::{failure_slice, GraphIndex, NodeRef, StartPointOptions};
use crate::model::{FailureCase, OpIx, Trace, VarIx};
use crate::provider::{Llm, ToolSpec};
use crate::util::json::str_list;
use frontier::{Frontier, FRONTIER_CAP};

/// Settings of graphtrace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphTrace {
    pub limits: AgentLimits,
    /// The per-system prior shown in the system prompt.
    pub prior: String,
    /// Offer the info-flow verdict and failure slice as a hint.
    pub hint_infoflow: bool,
    pub start_points: StartPointOptions,
}

impl Default for GraphTrace {
    fn default() -> Self {
        GraphTrace {
            limits: AgentLimits::default(),
            prior: DEFAULT_PRIOR.to_owned(),
            hint_infoflow: false,
            start_points: StartPointOptions::default(),
        }
    }
}

impl GraphTrace {
    /// Attributes one failed case with `llm`, given the ops' roles (listed in the task, shown
    /// per op). [`super::attribute_case_run`] infers the roles itself.
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
        let mut task = case_task(case);
        task.push_str(&roles_note(trace, roles));
        if self.hint_infoflow {
            task.push_str(&Self::hint(trace, roles, case));
        }
        task.push_str("\nStart with initialize.");
        let mut tools = GraphTools::new(trace, case, self).with_roles(roles);
        let (mut a, run) = attribute_with_agent(
            llm,
            trace,
            &graphtrace_system(&self.prior),
            &task,
            &mut tools,
            &self.limits,
            "graphtrace",
            &case.query_id,
        )
        .await?;
        a.evidence_path = tools
            .frontier
            .finished
            .iter()
            .map(|(id, _)| id.clone())
            .collect();
        a.evidence_path.push(a.op_id.clone());
        Ok((a, run))
    }

    /// The info-flow verdict and the ops of the failure slice, as a hint.
    fn hint(trace: &Trace, roles: &Roles, case: &FailureCase) -> String {
        let mut s = String::new();
        match InfoFlow::default().attribute_with(trace, roles, case) {
            Ok(a) => {
                let _ = writeln!(
                    s,
                    "verdict: {} at {} ({})",
                    a.error_type, a.op_id, a.op_name
                );
                let path = &a.evidence_path;
                let shown = path.len().min(HINT_PATH_IDS);
                let _ = writeln!(
                    s,
                    "information path ({} ids{}): {}",
                    path.len(),
                    if shown < path.len() {
                        ", first shown"
                    } else {
                        ""
                    },
                    path[..shown].join(", ")
                );
            }
            Err(e) => {
                let _ = writeln!(s, "no verdict: {e}");
            }
        }
        if let Ok(slice) = GraphIndex::build(trace)
            .map_err(|e| e.to_string())
            .and_then(|g| failure_slice(trace, &g, case).map_err(|e| e.to_string()))
        {
            let _ = writeln!(
                s,
                "backward slice of the answer: {} ops, {} variables",
                slice.ops.len(),
                slice.vars.len()
            );
        }
        format!(
            "\n\nHint from the info-flow analysis (may be wrong):\n{}",
            fence(s.trim_end())
        )
    }
}

/// Most ids of the info-flow path named in the hint (the slice itself can hold hundreds of ops).
const HINT_PATH_IDS: usize = 24;

/// The tools of one graphtrace run.
pub struct GraphTools<'a> {
    trace: &'a Trace,
    case: &'a FailureCase,
    settings: &'a GraphTrace,
    roles: Option<&'a Roles>,
    pub frontier: Frontier,
}

impl<'a> GraphTools<'a> {
    /// Tools over `trace` for `case`.
    pub fn new(trace: &'a Trace, case: &'a FailureCase, settings: &'a GraphTrace) -> Self {
        GraphTools {
            trace,
            case,
            settings,
            roles: None,
            frontier: Frontier::default(),
        }
    }

    /// Shows each op's pipeline role next to it.
    #[must_use]
    pub fn with_roles(mut self, roles: &'a Roles) -> Self {
        self.roles = Some(roles);
        self
    }

    fn var(&self, args: &Value, key: &str) -> Result<VarIx, String> {
        let id = args.get(key).and_then(Value::as_str).unwrap_or("");
        self.trace.var_by_id(id).ok_or_else(|| {
            format!("no node {id:?} in this trace; node ids look like `name@version`")
        })
    }

    fn budget(&self) -> usize {
        self.settings.limits.render_budget_chars
    }

    fn initialize(&mut self, args: &Value) -> Result<String, String> {
        let t = self.trace;
        let mode = args
            .get("mode")
            .and_then(Value::as_str)
            .unwrap_or("start_points");
        let seeds: Vec<VarIx> = match mode {
            "start_points" => {
                let idx = MessageIndex::build(t, &self.settings.start_points);
                let q = start_point_query(self.case);
                let mut v: Vec<VarIx> = t.var_by_id(&self.case.query_id).into_iter().collect();
                v.extend(
                    start_points(&idx, &q, &self.settings.start_points, &[])
                        .into_iter()
                        .map(|(x, _)| x),
                );
                v
            }
            "evidence" => self
                .case
                .evidence_ids
                .iter()
                .filter_map(|id| t.var_by_id(id))
                .collect(),
            "roots" => (0..t.vars.len() as u32)
                .map(VarIx)
                .filter(|v| t.flow.producers.get(v.get()).is_none_or(Vec::is_empty))
                .filter(|v| t.var(*v).category != "prompt" && t.var(*v).category != "sentinel")
                .collect(),
            other => {
                return Err(format!(
                    "unknown mode {other:?}; use start_points, evidence or roots"
                ))
            }
        };
        if seeds.is_empty() {
            return Err(format!("mode {mode} found no nodes; try another mode"));
        }
        self.frontier = Frontier::default();
        self.frontier.initialized = true;
        let mut skipped = 0;
        for v in seeds {
            if self.frontier.add(t, v, None).is_err() {
                skipped += 1;
            }
        }
        self.frontier.history.push(format!("initialize({mode})"));
        Ok(format!(
            "initialized from {mode}: {} nodes queued{}",
            self.frontier.queue().len(),
            if skipped > 0 {
                format!(", {skipped} left out (cap {FRONTIER_CAP})")
            } else {
                String::new()
            }
        ))
    }

    fn explore(&mut self, args: &Value) -> Result<String, String> {
        let t = self.trace;
        let Some(next) = self.frontier.earliest().cloned() else {
            return Err("the frontier is empty: add nodes or finish the exploration".into());
        };
        let page = args.get("page").and_then(Value::as_u64).unwrap_or(0) as usize;
        let preview = args
            .get("preview")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let r = t.var(next.var);
        self.frontier.history.push(format!(
            "explore {} (page {page}{})",
            r.full_node_id,
            if preview { ", preview" } else { "" }
        ));
        if preview {
            let p = render_preview(t, NodeRef::Var(next.var), self.budget(), page)
                .map_err(|e| e.to_string())?;
            return Ok(fence(&p.text));
        }
        Ok(fence(&self.explore_ops(next.var, page)))
    }

    /// Every op touching `var`: its role there, its leaves, and page `page` of its XML.
    fn explore_ops(&self, var: VarIx, page: usize) -> String {
        let t = self.trace;
        let r = t.var(var);
        let f = &t.flow;
        let mut ops: Vec<(OpIx, &str)> = Vec::new();
        for &o in f.producers.get(var.get()).into_iter().flatten() {
            let role = if f.op_outputs.get(o.get()).is_some_and(|v| v.contains(&var)) {
                "output"
            } else {
                "intermediate"
            };
            ops.push((o, role));
        }
        for &o in f.consumers.get(var.get()).into_iter().flatten() {
            ops.push((o, "input"));
        }
        ops.sort_by(|a, b| {
            (&t.op(a.0).created_at, &t.op(a.0).op_id)
                .cmp(&(&t.op(b.0).created_at, &t.op(b.0).op_id))
        });
        ops.dedup_by_key(|x| x.0);
        // Every op gets an equal share of the budget; page n shows page n of each op.
        let share = self.budget() / ops.len().max(1);
        let mut out = format!(
            "node {} ({}, {}) touches {} operations\n",
            r.full_node_id,
            r.category,
            r.created_at,
            ops.len()
        );
        for (o, role) in &ops {
            let succ: Vec<&str> = f
                .op_outputs
                .get(o.get())
                .into_iter()
                .flatten()
                .map(|&v| t.var(v).full_node_id.as_str())
                .collect();
            let _ = writeln!(
                out,
                "\n## op {} {} [{}] at {}{} — this node is its {role}; leaves: {}",
                t.op(*o).op_id,
                t.op(*o).op_name,
                t.op(*o).category,
                t.op(*o).created_at,
                self.roles
                    .map(|r| format!(", {}", r.describe(*o)))
                    .unwrap_or_default(),
                succ.join(", ")
            );
            match render_op_xml(t, *o, share, page) {
                Ok(p) => out.push_str(&p.text),
                Err(e) => {
                    let _ = write!(out, "({e})");
                }
            }
        }
        out
    }

    fn view_value(&mut self, args: &Value) -> Result<String, String> {
        let v = self.var(args, "node_id")?;
        let page = args.get("page").and_then(Value::as_u64).unwrap_or(0) as usize;
        let id = &self.trace.var(v).full_node_id;
        let p = if let Some(pat) = args.get("pattern").and_then(Value::as_str) {
            self.frontier
                .history
                .push(format!("view_value {id} /{pat}/"));
            let opts = RegexOptions {
                case_insensitive: true,
                context_chars: args.get("context").and_then(Value::as_u64).unwrap_or(80) as usize,
                ..RegexOptions::default()
            };
            render_value_hits(self.trace, v, pat, &opts, self.budget(), page)
        } else {
            self.frontier
                .history
                .push(format!("view_value {id} page {page}"));
            let start = args.get("start").and_then(Value::as_u64).unwrap_or(0) as usize;
            render_value(self.trace, v, start, self.budget(), page)
        };
        p.map(|p| fence(&p.text)).map_err(|e| e.to_string())
    }

    fn edit(&mut self, args: &Value) -> Result<String, String> {
        let ids = |k: &str| str_list(args.get(k).unwrap_or(&Value::Null));
        let by = args
            .get("discovered_by")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let mut lines = Vec::new();
        for id in ids("remove") {
            match self.trace.var_by_id(&id) {
                Some(v) if self.frontier.remove(v) => lines.push(format!("removed {id}")),
                _ => lines.push(format!("error: {id} is not in the frontier")),
            }
        }
        for id in ids("add") {
            let Some(v) = self.trace.var_by_id(&id) else {
                lines.push(format!("error: no node {id:?}"));
                continue;
            };
            match self.frontier.add(self.trace, v, by.clone()) {
                Ok(()) => lines.push(format!("added {id}")),
                Err(e) => lines.push(format!("error: {e}")),
            }
        }
        if lines.is_empty() {
            return Err("give `add` and/or `remove` as lists of node ids".into());
        }
        self.frontier
            .history
            .push(format!("edit_frontier: {}", lines.join("; ")));
        Ok(lines.join("\n"))
    }

    fn finish_node(&mut self, args: &Value) -> Result<String, String> {
        let v = self.var(args, "node_id")?;
        let outcome = args
            .get("outcome")
            .and_then(Value::as_str)
            .unwrap_or("done");
        self.frontier.finish(self.trace, v, outcome);
        let id = &self.trace.var(v).full_node_id;
        self.frontier
            .history
            .push(format!("finish {id}: {outcome}"));
        Ok(format!("finished {id}"))
    }

    fn history(&self) -> String {
        let mut s = String::from("exploration history:\n");
        for (i, h) in self.frontier.history.iter().enumerate() {
            let _ = writeln!(s, "{i}. {h}");
        }
        for (id, o) in &self.frontier.finished {
            let _ = writeln!(s, "finished {id}: {o}");
        }
        fence(&s)
    }
}

impl Toolbox for GraphTools<'_> {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![
            spec("initialize", "Seed the frontier: the query node and start points (start_points), the gold evidence messages (evidence), or the root nodes (roots).",
                object_schema(&[("mode", "string", "optional: start_points | evidence | roots")])),
            spec("explore_frontier", "Explore the earliest frontier node: every operation that touches it, its role there, leaves and the op subgraph as XML. Paginated; preview=true shows the neighbourhood without values.",
                object_schema(&[("page", "integer", "optional: page number from 0"), ("preview", "boolean", "optional: no values")])),
            spec("view_value", "View a node's value (paginated, from char `start`) or, with `pattern`, its regex hits with `context` chars around.",
                object_schema(&[("node_id", "string", "name@version"), ("start", "integer", "optional"), ("page", "integer", "optional"), ("pattern", "string", "optional: regex"), ("context", "integer", "optional")])),
            spec("edit_frontier", "Add nodes (with the op that discovered them) to and/or remove nodes from the frontier; at most 16 queued.",
                object_schema(&[("add", "array", "optional: node ids"), ("remove", "array", "optional: node ids"), ("discovered_by", "string", "optional: op id")])),
            spec("finish_node", "Mark a node as done with an outcome (e.g. 'carries the evidence', 'evidence lost here').",
                object_schema(&[("node_id", "string", "name@version"), ("outcome", "string", "what you found")])),
            spec("finish_exploration", "Give the final answer: the earliest decisive faulty operation.", verdict_schema()),
            spec("view_history", "List the moves made so far and the finished nodes.", object_schema(&[])),
        ]
    }

    fn call(&mut self, name: &str, args: &Value) -> Result<ToolOutcome, String> {
        if !self.frontier.initialized
            && !matches!(name, "initialize" | "view_history" | "finish_exploration")
        {
            return Err("initialize the frontier first".into());
        }
        let text = match name {
            "initialize" => self.initialize(args)?,
            "explore_frontier" => self.explore(args)?,
            "view_value" => self.view_value(args)?,
            "edit_frontier" => self.edit(args)?,
            "finish_node" => self.finish_node(args)?,
            "view_history" => self.history(),
            "finish_exploration" => {
                let v = validate_verdict(self.trace, args)?;
                self.frontier.history.push(format!(
                    "finish_exploration {} at {}",
                    v.error_type, v.op_id
                ));
                return Ok(ToolOutcome::Final(v));
            }
            other => return Err(format!("no tool {other}")),
        };
        Ok(ToolOutcome::Text(text))
    }

    fn status(&self) -> String {
        self.frontier.status(self.trace)
    }
}
