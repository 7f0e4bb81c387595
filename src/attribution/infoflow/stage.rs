//! A case's stage (its query, answer op, retrieval op, memory kinds, cutoff, pipeline), its
//! evidence (named, or found when the case names none) and the memory and inputs that hold the
//! gold answer.

use std::collections::BTreeSet;

use super::graph::{self, find_retrieval, memory_kinds_near, question_pipeline};
use super::{pipeline, turns, InfoFlow, Stage};
use crate::attribution::roles::{normalized, OpRole, Roles};
use crate::attribution::text::{content_tokens, parts, var_text, var_texts, Key};
use crate::attribution::AttributionError;
use crate::model::{answer_op_of, FailureCase, OpIx, Trace, VarIx};

/// With no traced retrieval, the step the answer's context came from when its tracer captured
/// none of its content (an embedding call whose span holds no text): the latest op of the
/// question's session between the question and the answer that reads nothing traced.
fn blind_step(t: &Trace, query: VarIx, answer_op: OpIx) -> Option<OpIx> {
    let answer = t.op(answer_op);
    let asked = &t.var(query).created_at;
    let reads_nothing = |o: OpIx| {
        t.flow.op_inputs[o.get()]
            .iter()
            .all(|&v| t.var(v).category == "sentinel")
    };
    (0..t.ops.len() as u32)
        .map(OpIx)
        .filter(|&o| o != answer_op && t.op(o).session_id == answer.session_id)
        .filter(|&o| t.op(o).created_at >= *asked && t.op(o).created_at <= answer.created_at)
        .filter(|&o| reads_nothing(o))
        .max_by(|&a, &b| t.op(a).created_at.cmp(&t.op(b).created_at).then(a.cmp(&b)))
}

/// The ops that answer a question: `own`, the failed cases' answer ops, and each judge's: the
/// writer of what a judge reads that read what the judge read unwritten (the question).
fn answer_ops(t: &Trace, roles: &Roles, own: OpIx) -> Vec<OpIx> {
    let mut out = vec![own];
    out.extend(
        t.cases
            .iter()
            .filter_map(|c| c.answer_op.as_deref().and_then(|a| t.op_by_id(a))),
    );
    let asked = |v: &VarIx| t.flow.producers[v.get()].is_empty();
    for j in (0..t.ops.len() as u32).map(OpIx) {
        if roles.role(j) != OpRole::Judge {
            continue;
        }
        let read = &t.flow.op_inputs[j.get()];
        for &v in read {
            out.extend(t.flow.producers[v.get()].iter().filter(|&&p| {
                t.flow.op_inputs[p.get()]
                    .iter()
                    .any(|w| asked(w) && read.contains(w))
            }));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

impl InfoFlow {
    /// Finds the query, the answer op, the retrieval op and the memory kinds of a case.
    pub(super) fn stage(
        t: &Trace,
        roles: &Roles,
        case: &FailureCase,
    ) -> Result<Stage, AttributionError> {
        let unresolvable = |reason: &str| AttributionError::Unresolvable {
            case_id: case.query_id.clone(),
            reason: reason.to_owned(),
        };
        let query = t
            .var_by_id(&case.query_id)
            .ok_or_else(|| unresolvable("the query variable is not in the graph"))?;
        let prediction = case.prediction_id.as_deref().and_then(|p| t.var_by_id(p));
        // The prediction's producer that read this query: identical answers to two questions
        // are one variable with two producers.
        let producers = prediction
            .map(|p| t.flow.producers[p.get()].clone())
            .unwrap_or_default();
        let answer_op = producers
            .iter()
            .copied()
            .find(|&o| t.flow.op_inputs[o.get()].contains(&query))
            .or_else(|| case.answer_op.as_deref().and_then(|a| t.op_by_id(a)))
            .or_else(|| prediction.and_then(|p| answer_op_of(t, p, Some(query))))
            .ok_or_else(|| unresolvable("no operation produced the prediction"))?;
        let traced_retrieval = find_retrieval(t, query, answer_op);
        let mut memory_kinds = memory_kinds_near(t, query, answer_op, traced_retrieval);
        if memory_kinds.is_empty() {
            // Retrieval returned nothing this time: learn the kinds from its other calls.
            if let Some(r) = traced_retrieval {
                let name = &t.op(r).op_name;
                for (o, op) in t.ops.iter().enumerate() {
                    let o = OpIx(o as u32);
                    if o != r && &op.op_name == name {
                        let q = t.flow.op_inputs[o.get()].first().copied().unwrap_or(query);
                        memory_kinds.extend(memory_kinds_near(t, q, answer_op, Some(o)));
                    }
                }
            }
        }
        let retrieval_op = traced_retrieval.or_else(|| blind_step(t, query, answer_op));
        let cutoff_op = retrieval_op.unwrap_or(answer_op);
        Ok(Stage {
            query,
            answer_op,
            retrieval_op,
            memory_kinds,
            cutoff: t.op(cutoff_op).created_at.clone(),
            pipeline: question_pipeline(t, query, answer_op),
            answers: answer_ops(t, roles, answer_op),
        })
    }

    /// Where to start following, each with the text its key is made of: the case's evidence
    /// messages (their whole text); else the turns that best match the case ([`turns::ranked`]:
    /// the best, and those scoring at least 60 % of it, up to [`InfoFlow::start_points`]), each
    /// with the dates its value states beside it when it states none (a prompt's session date);
    /// else the best-matching messages. True when the case named no evidence.
    pub(super) fn starts(
        &self,
        t: &Trace,
        roles: &Roles,
        case: &FailureCase,
        stage: &Stage,
    ) -> (Vec<(Vec<VarIx>, String)>, bool) {
        let whole = |v: VarIx| (vec![v], var_text(t.var(v)));
        let named = case.evidence_ids.iter().filter_map(|id| t.var_by_id(id));
        let named: Vec<_> = named.map(whole).collect();
        if !named.is_empty() {
            return (named, false);
        }
        let ranked = turns::ranked(t, roles, stage, case);
        let best = ranked.first().map_or(0.0, |x| x.score);
        let chosen = ranked
            .into_iter()
            .take(self.start_points)
            .take_while(|x| x.score >= best * 0.6);
        let with_dates = |x: turns::Turn| {
            let vars: Vec<VarIx> = std::iter::once(x.var)
                .chain(x.also.iter().copied())
                .collect();
            if parts::has_date(&x.text) {
                return (vars, x.text);
            }
            let leaves = var_texts(t.var(x.var));
            let dated = leaves.iter().flat_map(|leaf| {
                turns::segments(leaf)
                    .into_iter()
                    .map(|r| leaf[r].to_owned())
                    .filter(|s| !turns::stated_days(s).is_empty())
            });
            let text = std::iter::once(x.text.clone())
                .chain(dated)
                .collect::<Vec<_>>();
            (vars, text.join("\n"))
        };
        let found: Vec<_> = chosen.map(with_dates).collect();
        if !found.is_empty() {
            return (found, true);
        }
        let (messages, _) = self.evidence(t, case, stage);
        (messages.into_iter().map(whole).collect(), true)
    }

    /// The case's evidence messages, or the best-matching messages when it names none.
    pub(super) fn evidence(
        &self,
        t: &Trace,
        case: &FailureCase,
        stage: &Stage,
    ) -> (Vec<VarIx>, bool) {
        let query = stage.query;
        let named: Vec<VarIx> = case
            .evidence_ids
            .iter()
            .filter_map(|id| t.var_by_id(id))
            .collect();
        if !named.is_empty() {
            return (named, false);
        }
        let want = content_tokens(&format!("{} {}", case.query, case.golden_answers.join(" ")));
        let kinds = pipeline::message_kinds(t, stage);
        let mut scored: Vec<(usize, VarIx)> = (0..t.vars.len() as u32)
            .map(VarIx)
            .filter(|&v| v != query && kinds.contains(&t.var(v).category))
            // Said before the question, and not only the question's own input.
            .filter(|&v| t.var(v).created_at <= stage.cutoff)
            .filter(|&v| {
                let readers = &t.flow.consumers[v.get()];
                readers.is_empty() || readers.iter().any(|o| !stage.pipeline.contains(o))
            })
            .map(|v| {
                (
                    content_tokens(&var_text(t.var(v)))
                        .intersection(&want)
                        .count(),
                    v,
                )
            })
            .filter(|(s, _)| *s > 0)
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        (
            scored
                .into_iter()
                .take(self.start_points)
                .map(|(_, v)| v)
                .collect(),
            true,
        )
    }

    /// Annotated evidence often names the message that set up a fact but not the one holding
    /// the answer. When no evidence message holds the gold answer's words, the messages (of
    /// the evidence's kind, before the question) that hold them best are followed too.
    pub(super) fn gold_sources(
        &self,
        t: &Trace,
        case: &FailureCase,
        stage: &Stage,
        evidence: &[VarIx],
    ) -> Vec<VarIx> {
        let literal = |e: &VarIx| {
            Key::new(&case.golden_answers, &case.query, &[var_text(t.var(*e))]).gold_is_literal
        };
        if evidence.is_empty() || evidence.iter().any(literal) {
            return Vec::new();
        }
        let kinds: BTreeSet<&str> = evidence
            .iter()
            .map(|&e| t.var(e).category.as_str())
            .collect();
        let gold = Key::new(&case.golden_answers, &case.query, &[]);
        let mut scored: Vec<(f64, VarIx)> = (0..t.vars.len() as u32)
            .map(VarIx)
            .filter(|&v| v != stage.query && !evidence.contains(&v))
            .filter(|&v| kinds.contains(t.var(v).category.as_str()))
            .filter(|&v| t.var(v).created_at <= stage.cutoff)
            .map(|v| (gold.gold_carry(&var_text(t.var(v))), v))
            .filter(|&(s, _)| s >= self.threshold)
            .collect();
        // Of equal ones, those said nearest the annotated evidence, and none twice as far as
        // the nearest ("I won't quit" four turns before "I'm not giving up", not a "don't quit"
        // of an earlier session).
        let distance = |v: VarIx| {
            evidence
                .iter()
                .map(|e| e.0.abs_diff(v.0))
                .min()
                .unwrap_or(u32::MAX)
        };
        scored.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then(distance(a.1).cmp(&distance(b.1)))
                .then(a.1.cmp(&b.1))
        });
        let (best, nearest) = scored.first().map_or((0.0, 0), |s| (s.0, distance(s.1)));
        scored
            .into_iter()
            .take_while(|s| s.0 >= best && distance(s.1) <= nearest.saturating_mul(2))
            .take(2)
            .map(|(_, v)| v)
            .collect()
    }

    /// An op that read `v` and produced a deletion marker without writing a newer version.
    pub(super) fn deleted_by_link(t: &Trace, stage: &Stage, v: VarIx) -> Option<OpIx> {
        t.flow.consumers[v.get()].iter().copied().find(|&o| {
            o != stage.answer_op
                && Some(o) != stage.retrieval_op
                && t.op(o).created_at <= stage.cutoff
                && t.flow.op_produced(o).any(|out| {
                    let r = t.var(out);
                    let hay = format!("{} {}", r.full_name, r.category).to_ascii_lowercase();
                    r.full_name != t.var(v).full_name
                        && (hay.contains("delete")
                            || r.category == "marker"
                            || graph::marks_deleted(t, out, v))
                })
                && !t
                    .flow
                    .op_produced(o)
                    .any(|out| t.var(out).full_name == t.var(v).full_name)
        })
    }

    /// Each input of the answer op (not the question, not a prompt) with the gold answer's words
    /// it holds. A structured input (a profile, a search's results) is judged item by item, a
    /// text paragraph by paragraph (the memories a prompt lists): its best item, together with
    /// the items that each hold at least half of the words ("cozy" in one result,
    /// "comfortable" in another), as [`Key::carry_var`] reads a value.
    fn answer_parts(t: &Trace, stage: &Stage, key: &Key) -> Vec<(VarIx, BTreeSet<String>)> {
        t.flow.op_inputs[stage.answer_op.get()]
            .iter()
            .copied()
            .filter(|&v| v != stage.query && !t.is_prompt(v))
            .map(|v| {
                let items: Vec<BTreeSet<String>> = read_texts(t, stage.answer_op, v, stage.query)
                    .iter()
                    .flat_map(|x| key.gold_stated_each(x))
                    .collect();
                let best = items.iter().max_by_key(|x| x.len()).cloned();
                let halves = items.iter().filter(|x| half(key, x)).flatten().cloned();
                (v, halves.chain(best.into_iter().flatten()).collect())
            })
            .collect()
    }

    /// An input of the answer op holding the gold answer's words, alone or together with other
    /// inputs that each hold at least half of them.
    pub(super) fn answer_holds_gold(&self, t: &Trace, stage: &Stage, key: &Key) -> Option<VarIx> {
        if key.gold.is_empty() {
            return None;
        }
        let parts = Self::answer_parts(t, stage, key);
        let bar = key.bar(self.threshold);
        if let Some((v, _)) = parts
            .iter()
            .find(|(_, part)| part.len() as f64 / key.gold.len() as f64 >= bar)
        {
            return Some(*v);
        }
        let halves = parts.iter().filter(|(_, part)| half(key, part));
        let found: BTreeSet<&String> = halves.clone().flat_map(|(_, part)| part).collect();
        (found.len() == key.gold.len())
            .then(|| halves.map(|(v, _)| *v).next())
            .flatten()
    }
}

/// `part` holds at least half of the gold answer's words (and one at least).
fn half(key: &Key, part: &BTreeSet<String>) -> bool {
    !part.is_empty() && part.len() * 2 >= key.gold.len()
}

/// What `op` read of its input `v`, text by text: of a structured value (a search's results, an
/// extraction's facts), the items another of its inputs (its prompt, not the question) quotes,
/// when it quotes one at least — an op linked to a whole reply whose prompt holds three of its
/// facts read those three; else all of `v`'s texts ([`var_texts`]).
pub(super) fn read_texts(t: &Trace, op: OpIx, v: VarIx, query: VarIx) -> Vec<String> {
    let items = var_texts(t.var(v));
    if items.len() < 2 {
        return items;
    }
    let quoting: Vec<String> = t.flow.op_inputs[op.get()]
        .iter()
        .copied()
        .filter(|&u| u != v && u != query)
        .map(|u| var_texts(t.var(u)))
        .filter(|texts| texts.len() == 1)
        .flatten()
        .map(|x| normalized(&x))
        .collect();
    let quoted: Vec<bool> = (items.iter())
        .map(|x| {
            let x = normalized(x);
            quoting.iter().any(|q| q.contains(&x))
        })
        .collect();
    // A quote long enough to be one (not a speaker's name or "user").
    if !items.iter().zip(&quoted).any(|(x, &q)| q && x.len() >= 20) {
        return items;
    }
    (items.into_iter().zip(quoted))
        .filter_map(|(x, q)| q.then_some(x))
        .collect()
}
