//! Okapi BM25 over lower-cased `[a-z0-9_]+` tokens.

use std::collections::HashMap;

use crate::text::Word;

/// Splits `text` into tokens: runs of letters, digits and `_` of any script (bigrams for Chinese
/// and Japanese), lower-cased, with their byte offsets ([`crate::text::tokenize`] with [`Word::AlnumUnderscore`]).
pub fn tokenize(text: &str) -> impl Iterator<Item = (usize, String)> + '_ {
    crate::text::tokenize(text, Word::AlnumUnderscore)
}

/// An inverted index with BM25 scoring. Documents are numbered 0.. in the order given.
#[derive(Debug, Clone, Default)]
pub struct Bm25 {
    k1: f64,
    b: f64,
    vocab: HashMap<String, u32>,
    /// Per term: (document, term frequency), ascending document.
    postings: Vec<Vec<(u32, u32)>>,
    doc_len: Vec<u32>,
    avg_len: f64,
}

impl Bm25 {
    /// Indexes `docs` with the usual parameters k1 = 1.5, b = 0.75.
    ///
    /// # Complexity
    /// O(total text length).
    pub fn build<'a>(docs: impl IntoIterator<Item = &'a str>) -> Bm25 {
        Bm25::with_params(docs, 1.5, 0.75)
    }

    /// Indexes `docs` with the given k1 (term-frequency saturation) and b (length normalization).
    ///
    /// # Complexity
    /// O(total text length).
    pub fn with_params<'a>(docs: impl IntoIterator<Item = &'a str>, k1: f64, b: f64) -> Bm25 {
        let mut ix = Bm25 {
            k1,
            b,
            ..Bm25::default()
        };
        let mut tf: HashMap<u32, u32> = HashMap::new();
        for (d, text) in docs.into_iter().enumerate() {
            tf.clear();
            let mut len = 0u32;
            for (_, tok) in tokenize(text) {
                len += 1;
                let next = ix.vocab.len() as u32;
                let t = *ix.vocab.entry(tok).or_insert(next);
                if t == next {
                    ix.postings.push(Vec::new());
                }
                *tf.entry(t).or_insert(0) += 1;
            }
            let mut terms: Vec<(u32, u32)> = tf.iter().map(|(&t, &n)| (t, n)).collect();
            terms.sort_unstable();
            for (t, n) in terms {
                ix.postings[t as usize].push((d as u32, n));
            }
            ix.doc_len.push(len);
        }
        let total: u64 = ix.doc_len.iter().map(|&l| u64::from(l)).sum();
        ix.avg_len = if ix.doc_len.is_empty() {
            0.0
        } else {
            total as f64 / ix.doc_len.len() as f64
        };
        ix
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    /// True when no document was indexed.
    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    /// Number of distinct terms.
    pub fn vocabulary_len(&self) -> usize {
        self.vocab.len()
    }

    /// Inverse document frequency, `ln(1 + (N - df + 0.5) / (df + 0.5))` (never negative).
    fn idf(&self, df: usize) -> f64 {
        let n = self.doc_len.len() as f64;
        let df = df as f64;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// Returns up to `limit` (document, score) pairs with a positive score, best first; ties
    /// go to the lower document number. A query term repeated counts once per occurrence.
    ///
    /// # Complexity
    /// O(P + h log limit) for P postings of the query terms and h documents hit.
    pub fn search(&self, query: &str, limit: usize) -> Vec<(u32, f64)> {
        self.search_filtered(query, limit, |_| true)
    }

    /// As [`Bm25::search`], keeping only documents for which `keep` is true.
    ///
    /// # Complexity
    /// As [`Bm25::search`].
    pub fn search_filtered(
        &self,
        query: &str,
        limit: usize,
        keep: impl Fn(u32) -> bool,
    ) -> Vec<(u32, f64)> {
        let mut terms: Vec<u32> = tokenize(query)
            .filter_map(|(_, tok)| self.vocab.get(&tok).copied())
            .collect();
        terms.sort_unstable();
        let postings: usize = terms.iter().map(|&t| self.postings[t as usize].len()).sum();
        let mut scores = Scores::new(self.doc_len.len(), postings);
        for t in terms {
            let list = &self.postings[t as usize];
            let idf = self.idf(list.len());
            for &(d, tf) in list {
                let tf = f64::from(tf);
                let len = f64::from(self.doc_len[d as usize]);
                let norm = if self.avg_len > 0.0 {
                    len / self.avg_len
                } else {
                    1.0
                };
                scores.add(
                    d,
                    idf * tf * (self.k1 + 1.0) / (tf + self.k1 * (1.0 - self.b + self.b * norm)),
                );
            }
        }
        let hits: Vec<(u32, f64)> = scores
            .into_hits()
            .into_iter()
            .filter(|&(d, s)| s > 0.0 && keep(d))
            .collect();
        top_k(hits, limit)
    }
}

/// Score accumulation: a hash map when few postings are read, a dense array (plus the list of
/// documents touched) when many are, so a query on a common term stays a linear scan.
pub(crate) enum Scores {
    Sparse(HashMap<u32, f64>),
    Dense { scores: Vec<f64>, touched: Vec<u32> },
}

impl Scores {
    /// An accumulator for `docs` documents and about `postings` additions.
    pub(crate) fn new(docs: usize, postings: usize) -> Scores {
        if postings.saturating_mul(8) < docs {
            Scores::Sparse(HashMap::with_capacity(postings))
        } else {
            Scores::Dense {
                scores: vec![0.0; docs],
                touched: Vec::new(),
            }
        }
    }

    /// Adds a positive `score` to document `d`.
    pub(crate) fn add(&mut self, d: u32, score: f64) {
        match self {
            Scores::Sparse(map) => *map.entry(d).or_insert(0.0) += score,
            Scores::Dense { scores, touched } => {
                if let Some(slot) = scores.get_mut(d as usize) {
                    if *slot == 0.0 {
                        touched.push(d);
                    }
                    *slot += score;
                }
            }
        }
    }

    /// (document, total score) for every document touched.
    pub(crate) fn into_hits(self) -> Vec<(u32, f64)> {
        match self {
            Scores::Sparse(map) => map.into_iter().collect(),
            Scores::Dense { scores, touched } => touched
                .into_iter()
                .map(|d| (d, scores[d as usize]))
                .collect(),
        }
    }
}

/// The `limit` best (id, score) pairs, best first, ties by lower id.
///
/// # Complexity
/// O(n + limit log limit).
pub fn top_k(mut hits: Vec<(u32, f64)>, limit: usize) -> Vec<(u32, f64)> {
    let better = |a: &(u32, f64), b: &(u32, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if hits.len() > limit && limit > 0 {
        hits.select_nth_unstable_by(limit - 1, better);
    }
    hits.truncate(limit);
    hits.sort_unstable_by(better);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_lowercase_word_runs_with_offsets() {
        let t: Vec<(usize, String)> = tokenize("Hi, Mel_2! café").collect();
        assert_eq!(
            t,
            vec![(0, "hi".into()), (4, "mel_2".into()), (11, "café".into())]
        );
    }

    #[test]
    fn sparse_and_dense_accumulators_agree() {
        let adds = [(3u32, 0.5), (1, 1.0), (3, 0.25), (7, 2.0)];
        let mut results = Vec::new();
        for postings in [0, 1000] {
            let mut s = Scores::new(10, postings);
            assert_eq!(matches!(s, Scores::Dense { .. }), postings > 0);
            for (d, x) in adds {
                s.add(d, x);
            }
            let mut hits = s.into_hits();
            hits.sort_by_key(|h| h.0);
            results.push(hits);
        }
        assert_eq!(results[0], vec![(1, 1.0), (3, 0.75), (7, 2.0)]);
        assert_eq!(results[0], results[1]);
    }

    #[test]
    fn rare_terms_weigh_more_and_ties_go_to_lower_ids() {
        let ix = Bm25::build(["the cat sat", "the dog sat", "the cat ran far away"]);
        let r = ix.search("cat", 10);
        assert_eq!(r.iter().map(|h| h.0).collect::<Vec<_>>(), vec![0, 2]);
        assert!(r[0].1 > r[1].1, "shorter doc scores higher: {r:?}");
        let r = ix.search("dog sat", 10);
        assert_eq!(r[0].0, 1);
        assert!(ix.search("zebra", 10).is_empty());
        let ix = Bm25::build(["same words", "same words"]);
        assert_eq!(ix.search("same", 1), vec![(0, ix.search("same", 2)[0].1)]);
    }
}
