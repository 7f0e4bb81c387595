//! A character n-gram retriever: TF-IDF cosine over the character n-grams of normalized text.
//! It catches what word tokens miss: inflections ("camp" / "camping"), glued words, typos.

use std::collections::HashMap;

use super::bm25::{top_k, Scores};

/// An n-gram index. Documents are numbered 0.. in the order given.
#[derive(Debug, Clone, Default)]
pub struct NgramIndex {
    n: usize,
    vocab: HashMap<String, u32>,
    /// Per gram: (document, weight), the weight already divided by the document's norm.
    postings: Vec<Vec<(u32, f64)>>,
    docs: usize,
}

/// Lower-cases, turns every non-alphanumeric char into a space, collapses spaces, and pads with
/// one space on each side so word starts and ends make their own grams.
fn normalize(text: &str) -> Vec<char> {
    let mut out = vec![' '];
    for c in text.chars().flat_map(char::to_lowercase) {
        let c = if c.is_alphanumeric() { c } else { ' ' };
        if c == ' ' && out.last() == Some(&' ') {
            continue;
        }
        out.push(c);
    }
    if out.last() != Some(&' ') {
        out.push(' ');
    }
    out
}

fn gram_counts(text: &str, n: usize) -> HashMap<String, u32> {
    let chars = normalize(text);
    let mut counts = HashMap::new();
    if chars.len() >= n {
        for w in chars.windows(n) {
            *counts.entry(w.iter().collect::<String>()).or_insert(0) += 1;
        }
    }
    counts
}

impl NgramIndex {
    /// Indexes `docs` by character `n`-grams (3 is a good default; 0 is treated as 1).
    ///
    /// # Complexity
    /// O(total text length · n).
    pub fn build<'a>(docs: impl IntoIterator<Item = &'a str>, n: usize) -> NgramIndex {
        let n = n.max(1);
        let mut ix = NgramIndex {
            n,
            ..NgramIndex::default()
        };
        let mut raw: Vec<Vec<(u32, u32)>> = Vec::new();
        for text in docs {
            let mut grams: Vec<(u32, u32)> = gram_counts(text, n)
                .into_iter()
                .map(|(g, c)| {
                    let next = ix.vocab.len() as u32;
                    let t = *ix.vocab.entry(g).or_insert(next);
                    (t, c)
                })
                .collect();
            grams.sort_unstable();
            raw.push(grams);
        }
        ix.docs = raw.len();
        let mut df = vec![0u32; ix.vocab.len()];
        for grams in &raw {
            for &(t, _) in grams {
                df[t as usize] += 1;
            }
        }
        ix.postings = vec![Vec::new(); ix.vocab.len()];
        for (d, grams) in raw.iter().enumerate() {
            let weights: Vec<(u32, f64)> = grams
                .iter()
                .map(|&(t, c)| (t, f64::from(c) * ix.idf(df[t as usize] as usize)))
                .collect();
            let norm = weights.iter().map(|w| w.1 * w.1).sum::<f64>().sqrt();
            if norm == 0.0 {
                continue;
            }
            for (t, w) in weights {
                ix.postings[t as usize].push((d as u32, w / norm));
            }
        }
        ix
    }

    fn idf(&self, df: usize) -> f64 {
        ((1.0 + self.docs as f64) / (1.0 + df as f64)).ln() + 1.0
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.docs
    }

    /// True when no document was indexed.
    pub fn is_empty(&self) -> bool {
        self.docs == 0
    }

    /// Returns up to `limit` (document, cosine similarity) pairs with a positive score, best
    /// first; ties go to the lower document number.
    ///
    /// # Complexity
    /// O(q · n + P + h log limit) for query length q, P postings of its grams, h documents hit.
    pub fn search(&self, query: &str, limit: usize) -> Vec<(u32, f64)> {
        let q: Vec<(u32, f64)> = gram_counts(query, self.n)
            .into_iter()
            .filter_map(|(g, c)| {
                let &t = self.vocab.get(&g)?;
                let df = self.postings[t as usize].len();
                Some((t, f64::from(c) * self.idf(df)))
            })
            .collect();
        let norm = q.iter().map(|w| w.1 * w.1).sum::<f64>().sqrt();
        if norm == 0.0 {
            return Vec::new();
        }
        let postings: usize = q
            .iter()
            .map(|&(t, _)| self.postings[t as usize].len())
            .sum();
        let mut q = q;
        q.sort_unstable_by_key(|&(t, _)| t);
        let mut scores = Scores::new(self.docs, postings);
        for (t, w) in q {
            for &(d, dw) in &self.postings[t as usize] {
                scores.add(d, w / norm * dw);
            }
        }
        top_k(
            scores
                .into_hits()
                .into_iter()
                .filter(|h| h.1 > 0.0)
                .collect(),
            limit,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_inflections_that_tokens_miss() {
        let ix = NgramIndex::build(
            [
                "we went camping in June",
                "a charity race for mental health",
            ],
            3,
        );
        let r = ix.search("camp", 5);
        assert_eq!(r.first().map(|h| h.0), Some(0), "{r:?}");
        let r = ix.search("Mental-Health!", 5);
        assert_eq!(r.first().map(|h| h.0), Some(1));
        assert!(r[0].1 > 0.0 && r[0].1 <= 1.0 + 1e-9);
        assert!(ix.search("", 5).is_empty());
    }
}
