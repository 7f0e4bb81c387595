//! The records of a trace file as read, before validation: what every reader hands on.

use serde_json::{Map, Value};

use crate::model::{
    AnnotationRecord, EdgeRecord, GraphMeta, NodeRecord, OpRecord, SessionRecord, Trace,
};

/// The records of one file, before validation.
#[derive(Debug, Default, PartialEq)]
pub struct Parts {
    pub meta: GraphMeta,
    pub sessions: Vec<SessionRecord>,
    pub nodes: Vec<NodeRecord>,
    pub ops: Vec<OpRecord>,
    pub edges: Vec<EdgeRecord>,
    pub annotations: Option<Vec<AnnotationRecord>>,
    pub data_extra: Map<String, Value>,
    /// Keys of `data` in the order read, so a writer can keep it.
    pub data_order: Vec<String>,
}

impl Parts {
    /// A trace of these records, not yet indexed (call [`Trace::reindex`]).
    pub fn into_trace(self) -> Trace {
        Trace {
            meta: self.meta,
            sessions: self.sessions,
            vars: self.nodes,
            ops: self.ops,
            edges: self.edges,
            annotations: self.annotations,
            data_extra: self.data_extra,
            ..Trace::default()
        }
    }
}
