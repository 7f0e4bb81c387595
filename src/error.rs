//! The crate error: one variant per module that can fail.

/// Any error of the memtrace core.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Format(#[from] crate::format::FormatError),
    #[error(transparent)]
    Graph(#[from] crate::model::GraphError),
}
