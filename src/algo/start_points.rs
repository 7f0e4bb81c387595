//! Start points: the message nodes where an investigation of a failed question begins.
//!
//! Every message is ranked against `query + "\n" + gold answers` by BM25 and by a character
//! n-gram retriever (plus any extra retriever, e.g. embeddings through the provider); each
//! returns `limit × multiplier` candidates; the lists are fused by reciprocal rank fusion and
//! the best `limit` are kept.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::rrf::reciprocal_rank_fusion;
use super::search::{Bm25, NgramIndex};
use super::text::var_text;
use crate::model::{FailureCase, Trace, VarIx};

/// How many start points, and how the retrievers are fused.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StartPointOptions {
    /// Start points kept (default 8).
    pub limit: usize,
    /// Each retriever returns `limit × multiplier` candidates (default 2).
    pub multiplier: usize,
    /// The k of reciprocal rank fusion (default 60).
    pub rrf_k: f64,
    /// Gram length of the n-gram retriever (default 3).
    pub ngram: usize,
}

impl Default for StartPointOptions {
    fn default() -> Self {
        StartPointOptions {
            limit: 8,
            multiplier: 2,
            rrf_k: 60.0,
            ngram: 3,
        }
    }
}

/// A further ranking of messages, e.g. by embeddings computed through the provider.
pub trait Retriever {
    /// Up to `limit` message variables, best first, for `query`.
    fn retrieve(&self, query: &str, limit: usize) -> Vec<VarIx>;
}

/// Cosine similarity over vectors the caller computed (e.g. with an embedding model through the
/// provider): one vector per message, one per query text.
#[derive(Debug, Clone, Default)]
pub struct EmbeddingRetriever {
    pub messages: Vec<(VarIx, Vec<f32>)>,
    /// Query text → its vector.
    pub queries: BTreeMap<String, Vec<f32>>,
}

impl Retriever for EmbeddingRetriever {
    fn retrieve(&self, query: &str, limit: usize) -> Vec<VarIx> {
        let Some(q) = self.queries.get(query) else {
            return Vec::new();
        };
        let dot = |a: &[f32], b: &[f32]| {
            a.iter()
                .zip(b)
                .map(|(x, y)| f64::from(*x) * f64::from(*y))
                .sum::<f64>()
        };
        let qn = dot(q, q).sqrt();
        let mut scored: Vec<(VarIx, f64)> = self
            .messages
            .iter()
            .map(|(v, m)| {
                let denom = qn * dot(m, m).sqrt();
                (*v, if denom > 0.0 { dot(q, m) / denom } else { 0.0 })
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.into_iter().take(limit).map(|s| s.0).collect()
    }
}

/// The messages of a trace with a BM25 and an n-gram index over their text, built once per trace.
#[derive(Debug, Clone)]
pub struct MessageIndex {
    messages: Vec<VarIx>,
    bm25: Bm25,
    ngram: NgramIndex,
}

impl MessageIndex {
    /// Indexes the message variables of `trace` (see [`message_vars`]).
    ///
    /// # Complexity
    /// O(total message length · n).
    pub fn build(trace: &Trace, opts: &StartPointOptions) -> MessageIndex {
        let messages = message_vars(trace);
        let texts: Vec<String> = messages.iter().map(|&v| var_text(trace.var(v))).collect();
        let bm25 = Bm25::build(texts.iter().map(String::as_str));
        let ngram = NgramIndex::build(texts.iter().map(String::as_str), opts.ngram);
        MessageIndex {
            messages,
            bm25,
            ngram,
        }
    }

    /// The indexed messages, in variable order.
    pub fn messages(&self) -> &[VarIx] {
        &self.messages
    }

    /// Messages ranked by BM25.
    pub fn bm25_ranking(&self, query: &str, limit: usize) -> Vec<VarIx> {
        self.bm25
            .search(query, limit)
            .into_iter()
            .map(|(d, _)| self.messages[d as usize])
            .collect()
    }

    /// Messages ranked by character n-gram cosine.
    pub fn ngram_ranking(&self, query: &str, limit: usize) -> Vec<VarIx> {
        self.ngram
            .search(query, limit)
            .into_iter()
            .map(|(d, _)| self.messages[d as usize])
            .collect()
    }
}

/// The message variables: category `message` (a hint every MemBase-made trace follows); when a
/// trace has none, the root variables (made by no op) that some op reads, other than prompts.
///
/// # Complexity
/// O(V).
pub fn message_vars(trace: &Trace) -> Vec<VarIx> {
    let all = (0..trace.vars.len() as u32).map(VarIx);
    let tagged: Vec<VarIx> = all
        .clone()
        .filter(|&v| trace.var(v).category.eq_ignore_ascii_case("message"))
        .collect();
    if !tagged.is_empty() {
        return tagged;
    }
    let f = &trace.flow;
    all.filter(|&v| {
        let i = v.get();
        f.producers.get(i).is_some_and(Vec::is_empty)
            && f.consumers.get(i).is_some_and(|c| !c.is_empty())
            && !trace
                .var(v)
                .category
                .to_ascii_lowercase()
                .contains("prompt")
            && trace.var(v).category != "sentinel"
    })
    .collect()
}

/// The search text for a case: the question, a newline, the gold answers (one per line).
pub fn start_point_query(case: &FailureCase) -> String {
    format!("{}\n{}", case.query, case.golden_answers.join("\n"))
}

/// Returns up to `opts.limit` start points for `query`, best first, with their fused score.
///
/// # Complexity
/// The retrievers' cost plus O(C log C) for C = candidates over all lists.
pub fn start_points(
    index: &MessageIndex,
    query: &str,
    opts: &StartPointOptions,
    extra: &[&dyn Retriever],
) -> Vec<(VarIx, f64)> {
    let candidates = opts.limit.saturating_mul(opts.multiplier.max(1));
    let mut lists = vec![
        index.bm25_ranking(query, candidates),
        index.ngram_ranking(query, candidates),
    ];
    lists.extend(extra.iter().map(|r| r.retrieve(query, candidates)));
    let mut fused = reciprocal_rank_fusion(&lists, opts.rrf_k);
    fused.truncate(opts.limit);
    fused
}

/// Returns the share of `gold` found in the first `k` of `ranked`, or `None` when `gold` is empty.
pub fn recall_at_k(ranked: &[String], gold: &[String], k: usize) -> Option<f64> {
    if gold.is_empty() {
        return None;
    }
    let top = &ranked[..k.min(ranked.len())];
    let found = gold.iter().filter(|g| top.contains(g)).count();
    Some(found as f64 / gold.len() as f64)
}

/// Start points of one failed case and their recall against its gold evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseRecall {
    pub query_id: String,
    /// The ranked message ids (`full_node_id`), best first.
    pub start_points: Vec<String>,
    /// Gold evidence ids of the case.
    pub evidence_ids: Vec<String>,
    /// recall@k, when the case has gold evidence.
    pub recall: Option<f64>,
}

/// Start points and recall@k for every failure case of a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecallReport {
    pub k: usize,
    pub cases: Vec<CaseRecall>,
    /// Mean recall@k over the cases that have gold evidence.
    pub mean: Option<f64>,
}

/// Ranks start points for each failure case of `trace` and measures recall@`opts.limit`.
///
/// # Complexity
/// One [`MessageIndex::build`] plus one [`start_points`] per case.
pub fn evaluate_start_points(trace: &Trace, opts: &StartPointOptions) -> RecallReport {
    let index = MessageIndex::build(trace, opts);
    let cases: Vec<CaseRecall> = trace
        .cases
        .iter()
        .map(|case| {
            let ranked: Vec<String> = start_points(&index, &start_point_query(case), opts, &[])
                .into_iter()
                .map(|(v, _)| trace.var(v).full_node_id.clone())
                .collect();
            let recall = recall_at_k(&ranked, &case.evidence_ids, opts.limit);
            CaseRecall {
                query_id: case.query_id.clone(),
                start_points: ranked,
                evidence_ids: case.evidence_ids.clone(),
                recall,
            }
        })
        .collect();
    let scored: Vec<f64> = cases.iter().filter_map(|c| c.recall).collect();
    let mean = (!scored.is_empty()).then(|| scored.iter().sum::<f64>() / scored.len() as f64);
    RecallReport {
        k: opts.limit,
        cases,
        mean,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recall_counts_gold_in_the_top_k() {
        let ranked: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        assert_eq!(
            recall_at_k(&ranked, &["c".into(), "z".into()], 3),
            Some(0.5)
        );
        assert_eq!(recall_at_k(&ranked, &["c".into()], 2), Some(0.0));
        assert_eq!(recall_at_k(&ranked, &[], 2), None);
    }

    #[test]
    fn embedding_retriever_ranks_by_cosine() {
        let r = EmbeddingRetriever {
            messages: vec![(VarIx(0), vec![1.0, 0.0]), (VarIx(1), vec![0.6, 0.8])],
            queries: [("q".to_owned(), vec![0.0, 1.0])].into_iter().collect(),
        };
        assert_eq!(r.retrieve("q", 2), vec![VarIx(1), VarIx(0)]);
        assert!(r.retrieve("unknown", 2).is_empty());
    }
}
