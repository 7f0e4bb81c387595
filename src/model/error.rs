//! Errors of building the execution graph from its records: each says what is wrong and where
//! (a JSON path into the smartcomment shape). Readers wrap it in [`crate::format::FormatError`].

/// A record set that is not an execution graph. `Display` gives a sentence a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GraphError {
    #[error("{path}: {message}")]
    Field { path: String, message: String },

    // Kept twin (duplicates): FormatError repeats these three for its flat JSON shape.
    #[error("{path}: unknown {kind} id {id:?}. Every reference must name a record in the same file; was the file cut or merged from two runs?")]
    Dangling {
        path: String,
        id: String,
        kind: String,
    },

    #[error("{path}: duplicate id {id:?} (first at {first}). Ids must be unique; were two traces concatenated?")]
    DuplicateId {
        path: String,
        id: String,
        first: String,
    },

    #[error("{path}: {id:?} lies on a cycle; an execution graph must flow one way. Check the edges around it.")]
    Cycle { path: String, id: String },
}
