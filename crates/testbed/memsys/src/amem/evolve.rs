//! A-Mem's memory evolution and consolidation: `amem.process_memory` (LLM) rewrites the
//! content, context and tags of neighbour notes the new notes refine (an update fault
//! overwrites the notes holding the answer); `amem.consolidate_memories` (LLM) tombstones the
//! notes the new ones retract (a deletion fault removes the notes holding the answer).

use serde_json::{json, Value};

use memtrace_record::{OpSpec, Render, Scope, Var, VarSpec};

use super::super::fault::holds;
use super::super::forced::{force_deletions, force_update};
use super::super::prompts::{self, Prompts};
use super::super::record::{deletion_op, llm_var, parse_list, prompt_var};
use super::super::store::Unit;
use super::super::{MemsysError, Run};
use super::{Builder, CONSOLIDATION_PROMPT, EVOLUTION_PROMPT};
use memtrace::provider::Llm;

/// One step over the new notes of a pair and their neighbour notes (evolution or
/// consolidation), with the faults forced into it.
pub(super) struct Step<'a> {
    pub scope: &'a Scope,
    pub new: &'a [String],
    /// The live neighbour notes, plus every live note holding a forced fault's answer (a faulty
    /// LLM call acts on notes it should have left alone); never the new notes themselves.
    pub old: Vec<Unit>,
    /// `(fault index, answer)` of the faults forced into this step.
    pub forced: Vec<(usize, &'a str)>,
}

impl<'a> Step<'a> {
    /// The step over `neighbours`; `None` when it has no note to act on.
    pub fn new(
        run: &Run,
        scope: &'a Scope,
        (new, neighbours): (&'a [String], &[String]),
        forced: Vec<(usize, &'a str)>,
    ) -> Option<Self> {
        let mut old: Vec<Unit> = neighbours
            .iter()
            .filter_map(|id| run.store.get(id))
            .filter(|u| !u.deleted)
            .cloned()
            .collect();
        for &(_, answer) in &forced {
            let live = run
                .store
                .units()
                .iter()
                .filter(|u| !u.deleted && !new.contains(&u.id));
            for u in live.filter(|u| holds(&u.text, answer)) {
                if !old.iter().any(|o| o.id == u.id) {
                    old.push(u.clone());
                }
            }
        }
        (!old.is_empty()).then_some(Step {
            scope,
            new,
            old,
            forced,
        })
    }
}

fn task_of(units: &[Unit], new: &[String]) -> String {
    let old: Vec<Value> = units
        .iter()
        .enumerate()
        .map(|(k, u)| json!({"id": k.to_string(), "text": u.text}))
        .collect();
    prompts::update_task(&Value::from(old), new)
}

impl<L: Llm> Builder<'_, L> {
    fn contents(&self, ids: &[String]) -> Vec<String> {
        ids.iter()
            .filter_map(|id| self.notes.iter().find(|n| &n.id == id))
            .map(|n| n.content.clone())
            .collect()
    }

    /// `amem.process_memory`: the neighbours the new notes refine evolve.
    pub(super) async fn evolve(
        &mut self,
        step: &Step<'_>,
        run: &mut Run,
    ) -> Result<(), MemsysError> {
        let (scope, new, old) = (step.scope, step.new, &step.old);
        let contents = self.contents(new);
        let task = task_of(old, &contents);
        let p = Prompts {
            update_decision: EVOLUTION_PROMPT.to_owned(),
            ..Prompts::default()
        };
        let req = prompts::update_request(&p, &task);
        let resp = run.chat(self.job.llm, &req).await?;
        let mut events = parse_list(&prompts::strip_code_block(&resp.content), "memory");
        let mut raw_text = resp.content.clone();
        let op = scope.op(
            OpSpec::new("amem.process_memory", "memory_evolution")
                .comment("Memory evolution: an LLM decides whether the new notes should evolve their neighbour notes, and rewrites their content, context and tags.")
                .meta("llm_model", json!(resp.model)),
        );
        for &(k, answer) in &step.forced {
            let old_texts = old.iter().map(|u| u.text.as_str());
            if force_update(&mut events, old_texts, &contents, answer) {
                run.applied[k] = Some(op.id().to_owned());
                // The fault is the LLM's: its reply is what it would have said.
                raw_text = json!({ "memory": events }).to_string();
            }
        }
        let span = run.spans.llm(
            "amem.process_memory",
            &req,
            &raw_text,
            &resp.model,
            resp.usage,
        );
        run.spans.tie(op.id(), &span);
        let template = self
            .evolution_prompt
            .get_or_insert_with(|| {
                prompt_var(
                    scope,
                    "memory-evolution-prompt",
                    EVOLUTION_PROMPT,
                    "memory_evolution",
                    "The memory evolution prompt.",
                )
            })
            .clone();
        let task_var = op.var(
            VarSpec::content("evolution_task", json!(task))
                .category("prompt")
                .comment(
                    "The new notes and their neighbour notes, inserted into the evolution prompt.",
                ),
        );
        let mut inputs: Vec<&Var> = old.iter().map(|u| &u.var).collect();
        let new_vars: Vec<Var> = new
            .iter()
            .filter_map(|id| run.store.get(id).map(|u| u.var.clone()))
            .collect();
        inputs.extend(new_vars.iter());
        inputs.push(&template);
        op.io(
            &inputs,
            &[&task_var],
            "The new notes and their neighbours form the evolution task.",
        );
        let raw = llm_var(
            &op,
            "raw_evolution_response",
            json!(raw_text),
            "A raw memory evolution decision from an LLM.",
        );
        op.link(
            &task_var,
            &raw,
            "The LLM decides how the neighbours evolve.",
        );
        let actions = op.var(
            VarSpec::content("evolution_actions", json!({"memory": events}))
                .render(Render::Json)
                .category("llm_response")
                .comment("The neighbour notes to evolve, parsed from the response."),
        );
        op.link(
            &raw,
            &actions,
            "The response is parsed into evolution actions.",
        );
        let first_new = new.first().cloned().unwrap_or_default();
        let (context, tags) = self
            .notes
            .iter()
            .find(|n| n.id == first_new)
            .map(|n| (n.context.clone(), n.tags.clone()))
            .unwrap_or_default();
        for e in &events {
            let text = e["text"].as_str().unwrap_or_default();
            let Some(u) = e["id"]
                .as_str()
                .and_then(|k| k.parse::<usize>().ok())
                .and_then(|k| old.get(k))
                .and_then(|u| run.store.get(&u.id))
                .filter(|u| !u.deleted && u.text != text)
                .cloned()
            else {
                continue;
            };
            if e["event"].as_str() != Some("UPDATE") || text.is_empty() {
                continue;
            }
            let Some(note) = self.note_mut(&u.id) else {
                continue;
            };
            note.history.push(note.content.clone());
            text.clone_into(&mut note.content);
            note.context.clone_from(&context);
            for t in &tags {
                if !note.tags.contains(t) {
                    note.tags.push(t.clone());
                }
            }
            let value = note.value();
            let var = op.mutate(
                &u.var,
                &value,
                Render::Json,
                &[&actions],
                &format!(
                    "The neighbour note '{}' evolves: its content, context and tags are rewritten.",
                    u.id
                ),
            );
            run.spans.write(
                "amem.memories.update",
                &json!({"id": u.id, "document": text, "metadata": {"context": context, "tags": value["tags"]}}),
                &[json!({"id": u.id, "memory": text, "event": "UPDATE", "previous_memory": u.text})],
            );
            run.store.update(&u.id, text, var);
        }
        Ok(())
    }

    /// `amem.consolidate_memories`: the notes the new ones retract are removed (tombstones).
    pub(super) async fn consolidate(
        &mut self,
        step: &Step<'_>,
        run: &mut Run,
    ) -> Result<(), MemsysError> {
        let (scope, new, old) = (step.scope, step.new, &step.old);
        let task = task_of(old, &self.contents(new));
        let p = Prompts {
            update_decision: CONSOLIDATION_PROMPT.to_owned(),
            ..Prompts::default()
        };
        let req = prompts::delete_request(&p, &task);
        let resp = run.chat(self.job.llm, &req).await?;
        let mut doomed: Vec<Unit> = parse_list(&prompts::strip_code_block(&resp.content), "memory")
            .iter()
            .filter(|e| e["event"].as_str() == Some("DELETE"))
            .filter_map(|e| e["id"].as_str().and_then(|k| k.parse::<usize>().ok()))
            .filter_map(|k| old.get(k).cloned())
            .collect();
        let fault_ix = force_deletions(&step.forced, old, &mut doomed);
        let said: Vec<Value> = doomed
            .iter()
            .map(|u| {
                let local = old.iter().position(|o| o.id == u.id).unwrap_or_default();
                json!({"id": local.to_string(), "text": u.text, "event": "DELETE"})
            })
            .collect();
        let Some(op) = deletion_op(
            run,
            scope,
            ("amem.consolidate_memories", &req, &resp),
            &said,
            fault_ix,
            !doomed.is_empty(),
            OpSpec::new("amem.consolidate_memories", "consolidation")
                .comment("Consolidate the memory: an LLM finds the neighbour notes the new notes supersede, and they are removed.")
                .meta("llm_model", json!(resp.model)),
        ) else {
            return Ok(());
        };
        let decision = op.var(
            VarSpec::content("consolidation_decision", json!({"memory": said}))
                .render(Render::Json)
                .category("llm_response")
                .comment("The superseded notes, decided by an LLM."),
        );
        let new_vars: Vec<Var> = new
            .iter()
            .filter_map(|id| run.store.get(id).map(|u| u.var.clone()))
            .collect();
        let mut inputs: Vec<&Var> = old.iter().map(|u| &u.var).collect();
        inputs.extend(new_vars.iter());
        op.io(
            &inputs,
            &[&decision],
            "The LLM compares the new notes with their neighbours.",
        );
        for u in doomed {
            let var = op.mutate(
                &u.var,
                &json!({"id": u.id, "content": null, "deleted": true, "superseded_by": new}),
                Render::Json,
                &[&decision],
                &format!(
                    "The superseded note '{}' is removed (tombstone version).",
                    u.id
                ),
            );
            run.spans.write(
                "amem.memories.delete",
                &json!({"id": u.id}),
                &[json!({"id": u.id, "memory": u.text, "event": "DELETE"})],
            );
            run.store.delete(&u.id, var);
        }
        Ok(())
    }
}
