//! Queries over the execution graph, one file per algorithm.
//!
//! - [`graph`]: the [`GraphIndex`] (petgraph CSR adjacency both ways, topological order by
//!   (dependencies, `created_at`, id)), ancestors, descendants, an op's subgraph;
//! - [`slice`](mod@slice): the backward slice of a failed answer and the forward impact of a variable;
//! - [`lifeline`](mod@lifeline): the version chain of a variable identity, def-use chains;
//! - [`filter`]: operations and variables by session, category and time window;
//! - [`search`]: BM25, character n-gram and regex search over variable values;
//! - [`rrf`]: reciprocal rank fusion;
//! - [`start_points`](mod@start_points): the ranked message nodes where an investigation of a failure starts;
//! - [`render`]: text views for agents (op XML, value window, preview, flat log), paginated.
//!
//! Everything here is pure and deterministic: the same trace gives the same answer natively and
//! in the browser.

pub mod filter;
pub mod graph;
pub mod lifeline;
pub mod render;
pub mod rrf;
pub mod search;
pub mod slice;
pub mod start_points;
pub mod text;

pub use filter::{filter_ops, filter_vars, Filter};
pub use graph::{
    defining_producers, op_subgraph, GraphIndex, GraphIndexBuild, NodeRef, OpSubgraph,
};
pub use lifeline::{def_use, lifeline, DefUse, Lifeline, LifelineVersion, VersionKind};
pub use rrf::reciprocal_rank_fusion;
pub use search::{Hit, RegexOptions, SearchIndex};
pub(crate) use slice::first_producer;
pub use slice::{answer_op, backward_slice, failure_slice, forward_impact, Slice};
pub use start_points::{
    evaluate_start_points, recall_at_k, start_points, MessageIndex, RecallReport, Retriever,
    StartPointOptions,
};

/// Why an algorithm could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AlgoError {
    #[error("the trace index is stale ({what}); call Trace::reindex() after changing records")]
    Stale { what: String },
    #[error("the graph has a cycle through {id}; a trace must be a DAG (check its edges)")]
    Cycle { id: String },
    #[error(
        "no variable {id:?} in this trace; ids look like `name@version` (see `memtrace search`)"
    )]
    UnknownVar { id: String },
    #[error("no operation {id:?} in this trace; ids look like `op-<32 hex>`")]
    UnknownOp { id: String },
    #[error("invalid regular expression {pattern:?}: {message}")]
    Regex { pattern: String, message: String },
    #[error("page {page} does not exist: there are {pages} pages, numbered from 0")]
    PageOutOfRange { page: usize, pages: usize },
    #[error(
        "failure case {query_id} has neither a prediction variable nor an answer op to slice from"
    )]
    NoAnswer { query_id: String },
}
