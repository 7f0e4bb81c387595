//! Answering and judging, recorded with MemBase's conventions: a `memory_search` session with
//! the system's retrieval op(s) per question (Mem0's `memory_system.search_vector_store` here;
//! the other systems' in their modules), then a `memory_evaluation`
//! session with `question-answering` and `llm-judge` ops. The per-question variables (context,
//! prediction, golden answers, judge response and score) carry MemBase's class names and are
//! named by the question id, so two questions with the same answer text never share a node.

use serde_json::{json, Value};

use memtrace_record::{OpSpec, Scope, SessionSpec, Var, VarSpec};

use super::fault::{holds, holds_whole, Fault};
use super::locomo::{Conversation, Question};
use super::prompts;
use super::search::Search;
use super::store::Unit;
use super::text::judge_rule;
use super::{Job, MemsysError, QuestionResult, Run, System};
use memtrace::provider::Llm;

const QUESTION_TYPES: [&str; 6] = [
    "",
    "multi-hop",
    "temporal",
    "open-domain",
    "single-hop",
    "adversarial",
];

struct Searched {
    query: Var,
    units: Vec<Unit>,
}

/// Retrieves, answers and judges `questions` (indices into `conv.questions`) over the built
/// memory.
///
/// # Errors
/// The provider's error, if a call fails.
#[allow(clippy::too_many_lines)] // search, answer and judge read best in one place
pub(super) async fn evaluate<L: Llm>(
    job: &Job<'_, L>,
    questions: &[usize],
    run: &mut Run,
) -> Result<(), MemsysError> {
    let search = job.rec.session(
        SessionSpec::new("memory_search").comment("Each task query searches the memory store."),
    );
    let mut searched = Vec::new();
    for &qi in questions {
        let Some(q) = job.conv.questions.get(qi) else {
            continue;
        };
        let query = query_var(&search, job.conv, q);
        run.spans.open_kept(
            &q.id,
            "answer_question",
            &json!(q.text),
            &json!({"question_id": q.id, "category": q.category}),
        );
        let s = Search {
            scope: &search,
            cfg: job.cfg,
            faults: job.faults,
            q,
            query: &query,
        };
        let units = match job.cfg.system {
            System::Mem0 => search_vector_store(&s, run),
            System::NaiveRag => super::naiverag::retrieve(&s, run),
            System::EverMemOs => super::evermemos::retrieve(&s, run),
            System::AMem => super::amem::retrieve(&s, run),
        };
        searched.push((qi, Searched { query, units }));
    }

    let eval = job.rec.session(
        SessionSpec::new("memory_evaluation")
            .comment("Each question is answered from its retrieved memories and judged."),
    );
    let p_answer = eval.var(
        VarSpec::named(
            prompts::QUESTION_ANSWERING,
            json!(job.prompts.question_answering),
        )
        .category("prompt")
        .comment("The question-answering prompt template.")
        .meta("op_type", json!("question-answering")),
    );
    let p_judge = eval.var(
        VarSpec::named("locomo-judge", json!(job.prompts.judge))
            .class_name("judge_prompt")
            .category("prompt")
            .comment("The prompt template for the judge model.")
            .meta("op_type", json!("llm-judge")),
    );
    for (qi, s) in searched {
        let Some(q) = job.conv.questions.get(qi) else {
            continue;
        };
        let op = eval.op(OpSpec::new("question-answering", "evaluation").comment("The question-answering model answers from the question, the retrieved memories and a question-answering prompt."));
        let pairs: Vec<(String, String)> = s
            .units
            .iter()
            .map(|u| (u.text.replace('\n', " "), u.timestamp.clone()))
            .collect();
        let context = prompts::build_context(&pairs);
        let req = prompts::answer_request(job.prompts, &q.text, &context);
        let resp = run.chat(job.llm, &req).await?;
        let mut prediction = resp.content.trim().to_owned();
        for (k, f) in job.faults.iter().enumerate() {
            if let Fault::Response { question, answer } = f {
                if *question == q.id && judge_rule(&prediction, answer) {
                    prediction = wrong_answer(&s.units, answer);
                    run.applied[k] = Some(op.id().to_owned());
                }
            }
        }
        run.spans.resume(&q.id);
        let span = run.spans.llm(
            "question_answering",
            &req,
            &prediction,
            &resp.model,
            resp.usage,
        );
        run.spans.tie(op.id(), &span);
        let ctx = op.var(
            VarSpec::named(&q.id, json!(context))
                .class_name("context")
                .category("memory_context")
                .comment("The formatted context."),
        );
        let unit_vars: Vec<&Var> = s.units.iter().map(|u| &u.var).collect();
        if !unit_vars.is_empty() {
            op.io(
                &unit_vars,
                &[&ctx],
                "The formatted context is constructed from the retrieved memories.",
            );
        }
        let pred = op.var(
            VarSpec::named(&q.id, json!(prediction))
                .class_name("prediction")
                .category("llm_response")
                .comment("The model's response to the question."),
        );
        op.io(
            &[&s.query, &ctx, &p_answer],
            &[&pred],
            "The model answers the question.",
        );

        let judge = eval.op(OpSpec::new("llm-judge", "evaluation")
            .comment("The judge model judges the prediction against the golden answers."));
        let correct = if job.cfg.judge_with_llm {
            let req = prompts::judge_request(job.prompts, &q.text, &q.answer, &prediction);
            let resp = run.chat(job.llm, &req).await?;
            run.spans
                .llm("llm_judge", &req, &resp.content, &resp.model, resp.usage);
            label_is_correct(&resp.content)
        } else {
            judge_rule(&prediction, &q.answer)
        };
        let label = if correct { "CORRECT" } else { "WRONG" };
        run.spans.close(Some(&json!({
            "question_id": q.id,
            "prediction": prediction,
            "label": label,
            "score": if correct { 1.0 } else { 0.0 },
        })));
        let gold = judge.var(
            VarSpec::named(&q.id, json!([q.answer]))
                .class_name("golden_answers")
                .category("golden_answers")
                .comment("The golden answers for the question."),
        );
        let response = judge.var(
            VarSpec::named(&q.id, json!(label))
                .class_name("judge_response")
                .category("llm_response")
                .comment("The judge model's response."),
        );
        judge.io(
            &[&s.query, &gold, &p_judge, &pred],
            &[&response],
            "The judge model gives its judgment.",
        );
        let score = judge.var(
            VarSpec::named(&q.id, json!(if correct { 1.0 } else { 0.0 }))
                .class_name("judge_score")
                .comment("The judgement score."),
        );
        judge.link(
            &response,
            &score,
            "Convert the judge model's response to a float score.",
        );
        run.results.push(QuestionResult {
            question: q.id.clone(),
            index: qi,
            prediction,
            correct,
            query_id: s.query.full_node_id(),
            prediction_id: pred.full_node_id(),
            golden_answers_id: gold.full_node_id(),
            evidence_ids: evidence_ids(job.conv, q),
            retrieved: s.units.iter().map(|u| u.id.clone()).collect(),
            context_holds_answer: s.units.iter().any(|u| holds_whole(&u.text, &q.answer)),
            answer_span: span,
        });
    }
    Ok(())
}

fn query_var(search: &Scope, conv: &Conversation, q: &Question) -> Var {
    search.var(
        VarSpec::named(&q.id, json!(q.text))
            .class_name("query")
            .category("message & query")
            .comment("A task query which requires the memory system to retrieve memories.")
            .meta(
                "question_type",
                json!(QUESTION_TYPES
                    .get(usize::from(q.category))
                    .copied()
                    .unwrap_or("")),
            )
            .meta("category_id", json!(q.category))
            .meta(
                "evidence",
                json!(q
                    .evidence
                    .iter()
                    .map(|e| conv.message_name(e))
                    .collect::<Vec<_>>()),
            )
            .meta("speaker_names", json!([conv.speaker_a, conv.speaker_b])),
    )
}

/// Mem0's `memory_system.search_vector_store`: the top-k units by BM25 (a vector store always
/// fills its k).
fn search_vector_store(s: &Search, run: &mut Run) -> Vec<Unit> {
    let op = s.scope.op(
        OpSpec::new("memory_system.search_vector_store", "retrieval")
            .comment(&format!(
                "A task query searches the memory store for top-{} relevant memories.",
                s.cfg.top_k
            ))
            .meta("embedding_model", json!("bm25-lexical"))
            .meta("top_k", json!(s.cfg.top_k)),
    );
    let hits = s.nearest_top_k(run, op.id());
    s.link_hits(run, &op, "mem0.vector_store.search", hits)
}

fn evidence_ids(conv: &Conversation, q: &Question) -> Vec<String> {
    q.evidence
        .iter()
        .map(|e| format!("{}@1", conv.message_name(e)))
        .collect()
}

/// A wrong answer from the same context: the best-ranked memory that does not hold the gold
/// answer, or "I don't know."
fn wrong_answer(units: &[Unit], answer: &str) -> String {
    units
        .iter()
        .find(|u| !holds(&u.text, answer))
        .map_or_else(|| "I don't know.".to_owned(), |u| u.text.clone())
}

/// True when a judge reply says CORRECT (JSON `label`, or the bare word).
pub fn label_is_correct(reply: &str) -> bool {
    let cleaned = prompts::strip_code_block(reply);
    if let Ok(v) = serde_json::from_str::<Value>(&cleaned) {
        v.get("label")
            .and_then(Value::as_str)
            .is_some_and(|l| l.eq_ignore_ascii_case("correct"))
    } else {
        let up = reply.to_uppercase();
        up.contains("CORRECT") && !up.contains("WRONG") && !up.contains("INCORRECT")
    }
}
