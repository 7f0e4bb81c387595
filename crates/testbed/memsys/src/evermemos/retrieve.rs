//! EverMemOS's retrieval as MemBase records it: `memory_system.hybrid_retrieval` fuses BM25
//! and a dense stand-in by reciprocal rank; `memory_system.agentic_final_rerank` reranks the
//! candidates and keeps the top k (where a retrieval fault hides the answer's units).

use serde_json::{json, Value};

use memtrace_record::{OpSpec, Render, VarSpec};

use super::super::search::{span_docs, Search};
use super::super::store::Unit;
use super::super::text::{recall, term_set};
use super::super::Run;

fn candidates(list: &[(usize, f64)], run: &Run) -> Value {
    Value::from(
        list.iter()
            .filter_map(|&(i, s)| run.store.units().get(i).map(|u| json!({"id": u.id, "content": u.text, "score": (s * 1000.0).round() / 1000.0})))
            .collect::<Vec<_>>(),
    )
}

/// EverMemOS's retrieval: hybrid (BM25 + dense, reciprocal-rank fused) then a reranker.
pub(in super::super) fn retrieve(s: &Search, run: &mut Run) -> Vec<Unit> {
    const RRF_K: f64 = 60.0;
    let &Search {
        scope: search,
        cfg,
        q,
        query,
        ..
    } = s;
    let pool = cfg.top_k * 5;
    let first = search.op(
        OpSpec::new("memory_system.hybrid_retrieval", "retrieval")
            .comment(&format!("A task query searches the memory store: BM25 and dense retrieval, fused by reciprocal rank, give {pool} candidates."))
            .meta("mode", json!("hybrid_retrieval"))
            .meta("rrf_k", json!(RRF_K))
            .meta("embedding_model", json!("term-overlap (dense stand-in)")),
    );
    let sparse = run.store.search(&q.text, pool);
    let qs = term_set(&q.text);
    let mut dense: Vec<(usize, f64)> = run
        .store
        .units()
        .iter()
        .enumerate()
        .filter(|(_, u)| !u.deleted)
        .map(|(i, u)| {
            let t = term_set(&u.text);
            let inter = qs.intersection(&t).count() as f64;
            (i, inter / ((qs.len() * t.len()) as f64).sqrt().max(1.0))
        })
        .filter(|(_, s)| *s > 0.0)
        .collect();
    dense.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    dense.truncate(pool);
    let mut fused: Vec<(usize, f64)> = Vec::new();
    for list in [&sparse, &dense] {
        for (rank, &(i, _)) in list.iter().enumerate() {
            let s = 1.0 / (RRF_K + rank as f64 + 1.0);
            match fused.iter_mut().find(|(j, _)| *j == i) {
                Some(e) => e.1 += s,
                None => fused.push((i, s)),
            }
        }
    }
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused.truncate(pool);
    let sv = first.var(
        VarSpec::content("sparse_retrieval_results", candidates(&sparse, run))
            .render(Render::Json)
            .category("sparse_retrieval_results")
            .comment("BM25 retrieval results."),
    );
    let dv = first.var(
        VarSpec::content("dense_retrieval_results", candidates(&dense, run))
            .render(Render::Json)
            .category("dense_retrieval_results")
            .comment("Dense retrieval results."),
    );
    let hv = first.var(
        VarSpec::content("hybrid_retrieval_results", candidates(&fused, run))
            .render(Render::Json)
            .category("hybrid_retrieval_results")
            .comment("The fused candidates."),
    );
    first.io(
        &[query],
        &[&sv, &dv],
        "The query is matched against the memory store.",
    );
    first.io(
        &[&sv, &dv],
        &[&hv],
        "Reciprocal rank fusion merges the two lists.",
    );

    let op = search.op(
        OpSpec::new("memory_system.agentic_final_rerank", "retrieval")
            .comment(&format!(
                "The candidates are reranked and the top-{} are the final retrieval results.",
                cfg.top_k
            ))
            .meta("top_k", json!(cfg.top_k))
            .meta("use_reranker", json!(true))
            .meta("reranker_model", json!("term-recall (reranker stand-in)")),
    );
    let mut reranked: Vec<(usize, f64)> = fused
        .iter()
        .map(|&(i, f)| {
            let t = run
                .store
                .units()
                .get(i)
                .map(|u| term_set(&u.text))
                .unwrap_or_default();
            (i, recall(&qs, &t) + f)
        })
        .collect();
    reranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let hits = s.top_k(run, &reranked, op.id());
    let kept: Vec<(usize, f64)> = hits
        .iter()
        .filter_map(|(u, s)| {
            run.store
                .units()
                .iter()
                .position(|x| x.id == u.id)
                .map(|i| (i, *s))
        })
        .collect();
    let fv = op.var(
        VarSpec::content("final_reranked_results", candidates(&kept, run))
            .render(Render::Json)
            .category("final_reranked_results")
            .comment("The final retrieval results after reranking."),
    );
    op.io(
        &[query, &hv],
        &[&fv],
        "The reranker scores each candidate against the query.",
    );
    let pool_docs: Vec<(String, String, f64)> = fused
        .iter()
        .filter_map(|&(i, f)| {
            run.store
                .units()
                .get(i)
                .map(|u| (u.id.clone(), u.text.clone(), (f * 1e4).round() / 1e4))
        })
        .collect();
    let span = run.spans.retriever("hybrid_retrieval", &q.text, &pool_docs);
    run.spans.tie(first.id(), &span);
    let span = run.spans.reranker(
        "rerank",
        "term-recall (reranker stand-in)",
        &q.text,
        &pool_docs,
        &span_docs(&hits),
    );
    run.spans.tie(op.id(), &span);
    for (u, score) in &hits {
        op.link(&fv, &u.var, &format!("The reranked results select memory '{}' as a final retrieved memory unit. Its reranking score is {score:.3}.", u.id));
    }
    hits.into_iter().map(|(u, _)| u).collect()
}
