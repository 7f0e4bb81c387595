//! One question's retrieval as every reference system records it: the faults that hide units,
//! the top k, the hits linked as the retrieval op's outputs.

use memtrace_record::{Scope, Var};

use super::fault::{holds, Fault};
use super::locomo::Question;
use super::store::Unit;
use super::{Config, Run};

/// One question's retrieval: the session it is recorded in, the settings, the faults to inject
/// and the recorded query.
pub(super) struct Search<'a> {
    pub scope: &'a Scope,
    pub cfg: &'a Config,
    pub faults: &'a [Fault],
    pub q: &'a Question,
    pub query: &'a Var,
}

impl Search<'_> {
    /// The retrieval faults for this question: `(fault index, answer)`.
    pub fn hidden(&self) -> Vec<(usize, &str)> {
        self.faults
            .iter()
            .enumerate()
            .filter_map(|(i, f)| match f {
                Fault::Retrieval { question, answer } if *question == self.q.id => {
                    Some((i, answer.as_str()))
                }
                _ => None,
            })
            .collect()
    }

    /// The first top-k units of `ranked` (store indices with scores, best first), leaving out
    /// the units a retrieval fault for the question hides; marks such a fault applied at
    /// `op_id`.
    pub fn top_k(&self, run: &mut Run, ranked: &[(usize, f64)], op_id: &str) -> Vec<(Unit, f64)> {
        let excluded = self.hidden();
        let mut hits = Vec::new();
        for &(i, score) in ranked {
            let Some(u) = run.store.units().get(i) else {
                continue;
            };
            if let Some(&(f, _)) = excluded.iter().find(|(_, a)| holds(&u.text, a)) {
                run.applied[f] = Some(op_id.to_owned());
                continue;
            }
            if hits.len() < self.cfg.top_k {
                hits.push((u.clone(), score));
            }
        }
        hits
    }

    /// [`Search::top_k`] over the units nearest the question by BM25 (64 spare candidates, so
    /// that units a fault hides still leave k).
    pub fn nearest_top_k(&self, run: &mut Run, op_id: &str) -> Vec<(Unit, f64)> {
        let ranked = run.store.nearest(&self.q.text, self.cfg.top_k + 64);
        self.top_k(run, &ranked, op_id)
    }

    /// Records the retrieved units as the op's outputs (and as a retriever span); returns them.
    pub fn link_hits(
        &self,
        run: &mut Run,
        op: &Scope,
        span_name: &str,
        hits: Vec<(Unit, f64)>,
    ) -> Vec<Unit> {
        let query = self.query;
        if hits.is_empty() {
            op.io(&[query], &[], "No memory is retrieved.");
        }
        for (u, score) in &hits {
            op.link_as(
                query,
                &u.var,
                "operation",
                &format!("One memory '{}' is retrieved with score {score:.3}.", u.id),
            );
        }
        let docs = span_docs(&hits);
        let span = run.spans.retriever(span_name, &self.q.text, &docs);
        run.spans.tie(op.id(), &span);
        hits.into_iter().map(|(u, _)| u).collect()
    }
}

/// `(id, content, score)` of retrieved units, for spans.
pub(super) fn span_docs(hits: &[(Unit, f64)]) -> Vec<(String, String, f64)> {
    hits.iter()
        .map(|(u, s)| (u.id.clone(), u.text.clone(), (s * 1000.0).round() / 1000.0))
        .collect()
}
