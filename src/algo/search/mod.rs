//! Search over variable values: BM25 ranking and regex matching, with offsets and snippets.
//! The index is built once per trace ([`SearchIndex::build`]).
//!
//! Offsets are in chars (not bytes) of the variable's text ([`super::text::var_text`]), so they
//! can be passed straight to the value window.

pub mod bm25;
pub mod ngram;
pub mod pattern;

use serde::{Deserialize, Serialize};

use super::text::{byte_at_char, char_at_byte, var_text};
use super::AlgoError;
use crate::model::{Trace, VarIx};
use crate::text::one_line;
pub use bm25::Bm25;
pub use ngram::NgramIndex;
pub use pattern::{compile, RegexOptions};

/// One search hit inside one variable's text.
#[cfg_attr(feature = "ts", derive(tsify_next::Tsify))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    pub var: VarIx,
    /// The variable's `full_node_id`.
    pub id: String,
    /// BM25 score for ranked search, 1.0 for a regex match.
    pub score: f64,
    /// Char offset where the match (or the first matching query term) starts.
    pub start: usize,
    /// Char offset where it ends.
    pub end: usize,
    /// One line of surrounding text, `…` where cut.
    pub snippet: String,
}

/// The texts of all variables plus a BM25 index over them.
#[derive(Debug, Clone, Default)]
pub struct SearchIndex {
    texts: Vec<String>,
    ids: Vec<String>,
    bm25: Bm25,
}

/// Context chars on each side of a BM25 hit's snippet.
const SNIPPET_CONTEXT: usize = 60;

impl SearchIndex {
    /// Indexes the text of every variable of `trace`.
    ///
    /// # Complexity
    /// O(total value length).
    pub fn build(trace: &Trace) -> SearchIndex {
        let texts: Vec<String> = trace.vars.iter().map(var_text).collect();
        let bm25 = Bm25::build(texts.iter().map(String::as_str));
        let ids = trace.vars.iter().map(|v| v.full_node_id.clone()).collect();
        SearchIndex { texts, ids, bm25 }
    }

    /// The searchable text of `var`.
    pub fn text(&self, var: VarIx) -> Option<&str> {
        self.texts.get(var.get()).map(String::as_str)
    }

    /// The BM25 index (documents numbered like variables).
    pub fn bm25_index(&self) -> &Bm25 {
        &self.bm25
    }

    /// Returns up to `limit` variables ranked by BM25 against `query`, best first, each with the
    /// offset of its first token that occurs in the query.
    ///
    /// # Complexity
    /// As [`Bm25::search`], plus O(text length) per returned hit for the offset.
    pub fn bm25(&self, query: &str, limit: usize) -> Vec<Hit> {
        let terms: std::collections::HashSet<String> = bm25::tokenize(query).map(|t| t.1).collect();
        self.bm25
            .search(query, limit)
            .into_iter()
            .map(|(d, score)| {
                let text = &self.texts[d as usize];
                let (start_b, end_b) = bm25::tokenize(text)
                    .find(|(_, t)| terms.contains(t))
                    .map_or((0, 0), |(b, t)| (b, b + t.len()));
                self.hit(VarIx(d), score, start_b, end_b, SNIPPET_CONTEXT)
            })
            .collect()
    }

    /// Returns regex matches over all variable texts, in variable order and then text order,
    /// at most `opts.max_hits`.
    ///
    /// # Errors
    /// [`AlgoError::Regex`] when the pattern does not compile.
    ///
    /// # Complexity
    /// O(total text length) (the regex engine is linear time).
    pub fn regex(&self, pattern: &str, opts: &RegexOptions) -> Result<Vec<Hit>, AlgoError> {
        let re = compile(pattern, opts)?;
        let mut hits = Vec::new();
        'outer: for (i, text) in self.texts.iter().enumerate() {
            for m in re.find_iter(text) {
                if hits.len() >= opts.max_hits {
                    break 'outer;
                }
                hits.push(self.hit(VarIx(i as u32), 1.0, m.start(), m.end(), opts.context_chars));
            }
        }
        Ok(hits)
    }

    fn hit(&self, var: VarIx, score: f64, start_b: usize, end_b: usize, context: usize) -> Hit {
        let text = &self.texts[var.get()];
        let (start, end) = (char_at_byte(text, start_b), char_at_byte(text, end_b));
        Hit {
            var,
            id: self.ids[var.get()].clone(),
            score,
            start,
            end,
            snippet: snippet(text, start, end, context),
        }
    }
}

/// `context` chars either side of chars `start..end`, on one line, `…` where cut.
pub fn snippet(text: &str, start: usize, end: usize, context: usize) -> String {
    let a = byte_at_char(text, start.saturating_sub(context));
    let b = byte_at_char(text, end.saturating_add(context));
    let mut s = String::new();
    if a > 0 {
        s.push('…');
    }
    s.push_str(&one_line(&text[a..b]));
    if b < text.len() {
        s.push('…');
    }
    s
}
