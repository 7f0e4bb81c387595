//! EverMemOS's profile life cycle: `memory_system.update_profile` (category `update`, LLM)
//! merges the attributes a new episode states into each speaker's profile (`profile-<name>`);
//! an update fault overwrites the profile item holding the answer.

use serde_json::{json, Value};

use memtrace_record::{OpSpec, Render, Scope, Var, VarSpec};

use super::super::fault::{holds_whole, Fault};
use super::super::forced::{at_pair, force_update_where};
use super::super::prompts::{self, Prompts};
use super::super::record::{llm_var, parse_list, prompt_var};
use super::super::store::Unit;
use super::super::{MemsysError, Run};
use super::{Buffered, Builder, Profile, PROFILE_PROMPT};
use memtrace::provider::Llm;

impl<L: Llm> Builder<'_, L> {
    /// `memory_system.update_profile`: each speaker's profile takes the segment's attribute facts.
    /// `(episode, source)`: the final memory unit and the extraction reply the facts came from.
    pub(super) async fn update_profiles(
        &mut self,
        scope: &Scope,
        (episode, source): (&Var, &Var),
        facts: &[String],
        last: &Buffered,
        run: &mut Run,
    ) -> Result<(), MemsysError> {
        let pair = last.pair;
        let forced = at_pair(self.job.faults, pair, Fault::update_at);
        let speakers = [
            self.job.conv.speaker_a.clone(),
            self.job.conv.speaker_b.clone(),
        ];
        let mut op: Option<Scope> = None;
        let mut tied_fault = false;
        for speaker in speakers {
            let mine: Vec<String> = facts
                .iter()
                .filter(|f| f.contains(speaker.as_str()))
                .cloned()
                .collect();
            let pi = if let Some(i) = self.profiles.iter().position(|p| p.speaker == speaker) {
                i
            } else {
                self.profiles.push(Profile {
                    speaker: speaker.clone(),
                    items: Vec::new(),
                });
                self.profiles.len() - 1
            };
            let old = self.profiles.get(pi).cloned().unwrap_or_default();
            // A profile item holds the answer when it states all of it: "dramas and romcoms"
            // shares a word with "drama and romance" but is another fact.
            let hit = forced
                .iter()
                .any(|(_, a)| old.items.iter().any(|i| holds_whole(i, a)));
            if mine.is_empty() && !hit {
                continue;
            }
            let op = op.get_or_insert_with(|| scope.op(
                OpSpec::new("memory_system.update_profile", "update")
                    .comment("Update each speaker's profile with the attributes stated in the new episode, using an LLM.")
                    .meta("op_type", json!("update")),
            ));
            let listed: Vec<Value> = old
                .items
                .iter()
                .enumerate()
                .map(|(k, t)| json!({"id": k.to_string(), "text": t}))
                .collect();
            let task = prompts::update_task(&Value::from(listed), &mine);
            let p = Prompts {
                update_decision: PROFILE_PROMPT.to_owned(),
                ..Prompts::default()
            };
            let req = prompts::update_request(&p, &task);
            let resp = run.chat(self.job.llm, &req).await?;
            let mut events = parse_list(&prompts::strip_code_block(&resp.content), "memory");
            let mut raw_text = resp.content.clone();
            let mut faulted = false;
            for &(k, answer) in &forced {
                let items = old.items.iter().map(String::as_str);
                let whole = |_: usize, before: &str| holds_whole(before, answer);
                if force_update_where(&mut events, items, &mine, answer, whole) {
                    run.applied[k] = Some(op.id().to_owned());
                    faulted = true;
                    // The fault is the LLM's: its reply is what it would have said.
                    raw_text = json!({ "memory": events }).to_string();
                }
            }
            let span = run
                .spans
                .llm("profile_update", &req, &raw_text, &resp.model, resp.usage);
            // One op updates both profiles in two model calls; when the fault overwrote both,
            // the first call is the earliest decisive one.
            if (faulted && !tied_fault) || run.spans.span_of(op.id()).is_none() {
                run.spans.tie(op.id(), &span);
            }
            tied_fault |= faulted;
            let mut new = old.clone();
            for e in &events {
                let text = e["text"].as_str().unwrap_or_default().to_owned();
                let slot = e["id"].as_str().and_then(|i| i.parse::<usize>().ok());
                match e["event"].as_str().unwrap_or_default() {
                    "ADD" if !text.is_empty() && !new.items.contains(&text) => new.items.push(text),
                    "UPDATE" if !text.is_empty() => {
                        if let Some(item) = slot.and_then(|i| new.items.get_mut(i)) {
                            *item = text;
                        }
                    }
                    _ => {}
                }
            }
            if new.items == old.items {
                continue;
            }
            let template = self
                .profile_prompt
                .get_or_insert_with(|| {
                    prompt_var(
                        scope,
                        "profile-update-prompt-template",
                        PROFILE_PROMPT,
                        "update",
                        "The profile update prompt template.",
                    )
                })
                .clone();
            let task_var = op.var(
                VarSpec::content("profile_update_task", json!(task))
                    .category("prompt")
                    .comment("A concrete profile update task."),
            );
            let raw = llm_var(
                op,
                "raw_profile_update_response",
                json!(raw_text),
                "A raw profile update decision from an LLM.",
            );
            op.link(&task_var, &raw, "The LLM decides how the profile changes.");
            let text = new.items.join(" ");
            let event = if old.items.is_empty() {
                "ADD"
            } else {
                "UPDATE"
            };
            run.spans.write(
                "profile_store.save",
                &json!({"user_name": new.speaker, "profile": new.items}),
                &[json!({"id": new.id(), "memory": text, "event": event})],
            );
            if let Some(u) = run.store.get(&new.id()).cloned() {
                op.io(
                    &[&u.var, episode, source, &template],
                    &[&task_var],
                    "The profile and the attributes the extraction reply stated form the profile update task.",
                );
                let var = op.mutate(
                    &u.var,
                    &new.value(),
                    Render::Json,
                    &[&raw],
                    &format!("The profile of {} is updated.", new.speaker),
                );
                run.store.update(&u.id, &text, var);
            } else {
                op.io(
                    &[episode, source, &template],
                    &[&task_var],
                    "The attributes the extraction reply stated form the profile update task.",
                );
                let var = op.var(
                    VarSpec::named(&new.id(), new.value())
                        .render(Render::Json)
                        .category("memory_entry")
                        .comment("A user profile in the memory system."),
                );
                op.link(
                    &raw,
                    &var,
                    &format!("The profile of {} is created.", new.speaker),
                );
                run.store.add(Unit {
                    id: new.id(),
                    text,
                    timestamp: last.timestamp.clone(),
                    deleted: false,
                    var,
                });
            }
            run.pairs_with_facts.insert(pair);
            if let Some(p) = self.profiles.get_mut(pi) {
                *p = new;
            }
        }
        Ok(())
    }
}
