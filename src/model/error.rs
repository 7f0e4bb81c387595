//! Errors of building the execution graph from its records: each says what is wrong and where
//! (a JSON path into the smartcomment shape). Readers wrap it in [`crate::format::FormatError`].

/// A record set that is not an execution graph. `Display` gives a sentence a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GraphError {
    #[error("{path}: {message}")]
    Field { path: String, message: String },

    // FormatError repeats these three variants for its flat JSON shape; the texts are shared.
    #[error("{}", dangling(path, kind, id))]
    Dangling {
        path: String,
        id: String,
        kind: String,
    },

    #[error("{}", duplicate_id(path, id, first))]
    DuplicateId {
        path: String,
        id: String,
        first: String,
    },

    #[error("{}", cycle(path, id))]
    Cycle { path: String, id: String },
}

pub(crate) fn dangling(path: &str, kind: &str, id: &str) -> String {
    format!("{path}: unknown {kind} id {id:?}. Every reference must name a record in the same file; was the file cut or merged from two runs?")
}

pub(crate) fn duplicate_id(path: &str, id: &str, first: &str) -> String {
    format!("{path}: duplicate id {id:?} (first at {first}). Ids must be unique; were two traces concatenated?")
}

pub(crate) fn cycle(path: &str, id: &str) -> String {
    format!("{path}: {id:?} lies on a cycle; an execution graph must flow one way. Check the edges around it.")
}
