//! Where the generator's records go: a JSON writer (one record list per pass) or vectors.

use std::io::{self, Write};

use serde::Serialize;

use crate::model::{EdgeRecord, NodeRecord, OpRecord, SessionRecord};

/// Where generated records go; each list is one pass.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum List {
    Nodes,
    Edges,
    Operations,
    Sessions,
}

pub(super) trait Sink {
    fn node(&mut self, r: &NodeRecord) -> io::Result<()>;
    fn edge(&mut self, r: &EdgeRecord) -> io::Result<()>;
    fn op(&mut self, r: &OpRecord) -> io::Result<()>;
    fn session(&mut self, r: &SessionRecord) -> io::Result<()>;
}

pub(super) struct ListWriter<'w, W: Write> {
    pub(super) out: &'w mut W,
    pub(super) list: List,
    pub(super) first: bool,
}

impl<W: Write> ListWriter<'_, W> {
    fn put<T: Serialize>(&mut self, list: List, r: &T) -> io::Result<()> {
        if list != self.list {
            return Ok(());
        }
        if !self.first {
            self.out.write_all(b",\n")?;
        }
        self.first = false;
        serde_json::to_writer(&mut *self.out, r).map_err(io::Error::other)
    }
}

impl<W: Write> Sink for ListWriter<'_, W> {
    fn node(&mut self, r: &NodeRecord) -> io::Result<()> {
        self.put(List::Nodes, r)
    }
    fn edge(&mut self, r: &EdgeRecord) -> io::Result<()> {
        self.put(List::Edges, r)
    }
    fn op(&mut self, r: &OpRecord) -> io::Result<()> {
        self.put(List::Operations, r)
    }
    fn session(&mut self, r: &SessionRecord) -> io::Result<()> {
        self.put(List::Sessions, r)
    }
}

#[derive(Default)]
pub(super) struct Collect {
    pub(super) nodes: Vec<NodeRecord>,
    pub(super) edges: Vec<EdgeRecord>,
    pub(super) ops: Vec<OpRecord>,
    pub(super) sessions: Vec<SessionRecord>,
}

impl Sink for Collect {
    fn node(&mut self, r: &NodeRecord) -> io::Result<()> {
        self.nodes.push(r.clone());
        Ok(())
    }
    fn edge(&mut self, r: &EdgeRecord) -> io::Result<()> {
        self.edges.push(r.clone());
        Ok(())
    }
    fn op(&mut self, r: &OpRecord) -> io::Result<()> {
        self.ops.push(r.clone());
        Ok(())
    }
    fn session(&mut self, r: &SessionRecord) -> io::Result<()> {
        self.sessions.push(r.clone());
        Ok(())
    }
}
