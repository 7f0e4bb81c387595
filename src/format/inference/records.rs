//! What the builder hands on: retrieved documents, op records, sentinels for spans that read
//! nothing, and the finished records.

use serde_json::{Map, Value};

use super::{Builder, Edge};
use crate::format::parts::Parts;
use crate::format::spans::{Port, Span};
use crate::format::time::format_nanos;
use crate::model::{EdgeRecord, NodeRecord, OpRecord, Unset};

impl Builder<'_> {
    /// A retrieved document, reading the memory unit with its id (or a value equal to it).
    pub(super) fn document(
        &mut self,
        port: &Port,
        s: &Span,
        session: &str,
        inputs: &[(usize, &str)],
        op: usize,
    ) -> usize {
        let ident = match &port.doc_id {
            Some(id) => self.ident(
                format!("d\u{0}{id}"),
                id.clone(),
                Some("retrieved_document"),
                false,
            ),
            None => self.content_ident(port),
        };
        let v = self.new_var(
            ident,
            Some(port),
            port.text.clone(),
            s,
            session,
            (s.end_ns, true),
        );
        let unit = port
            .doc_id
            .as_ref()
            .and_then(|id| self.by_key.get(&format!("m\u{0}{id}")).copied());
        let source = unit
            .and_then(|m| {
                self.latest_visible(m)
                    .map(|u| (u, "inferred: the memory unit with this document id"))
            })
            .or_else(|| {
                let p = self.patterns.get(&port.text)?;
                let owner = *self.owners.get(*p as usize)?.last()?;
                Some((owner, "inferred: a value equal to this document"))
            });
        if let Some((u, link)) = source.filter(|(u, _)| !inputs.iter().any(|(x, _)| x == u)) {
            self.edges.push(Edge {
                from: u,
                to: v,
                op,
                link,
            });
        }
        v
    }

    pub(super) fn op_record(&self, s: &Span, session: &str) -> OpRecord {
        let mut metadata = s.metadata.clone();
        metadata.insert("trace_id".into(), Value::String(s.trace_id.clone()));
        metadata.insert("span_id".into(), Value::String(s.id.clone()));
        if let Some(p) = &s.parent {
            metadata.insert("parent_span_id".into(), Value::String(p.clone()));
        }
        OpRecord {
            created_at: format_nanos(s.start_ns),
            filename: s.filename.clone(),
            lineno: 0,
            op_id: format!("op-{}", s.id),
            op_name: s.name.clone(),
            comment: String::new(),
            category: s.kind.category().to_owned(),
            graph_id: self.meta.graph_id.clone(),
            user_id: self.meta.user_id.clone(),
            project_id: self.meta.project_id.clone(),
            session_id: session.to_owned(),
            metadata: Value::Object(metadata),
            trigger_point: String::new(),
            extra: Map::new(),
            unset: Unset::default(),
        }
    }

    pub(super) fn sentinel_var(&mut self, s: &Span) -> usize {
        if let Some(v) = self.sentinel {
            return v;
        }
        let ident = self.ident("sentinel".into(), "NONE".into(), Some("COMMENT"), true);
        let port = Port::new("COMMENT", "sentinel", "NONE".into());
        let v = self.new_var(
            ident,
            Some(&port),
            "NONE".into(),
            s,
            "__none__",
            (s.start_ns, false),
        );
        self.vars[v].filename = "<sentinel>".into();
        self.sentinel = Some(v);
        v
    }

    pub(in crate::format) fn finish(self) -> Parts {
        let mut used = vec![false; self.vars.len()];
        for e in &self.edges {
            used[e.from] = true;
            used[e.to] = true;
        }
        let mut version = vec![0u32; self.vars.len()];
        for id in &self.idents {
            let mut k = 0;
            for &v in &id.versions {
                if used[v] {
                    k += 1;
                    version[v] = k;
                }
            }
        }
        let full = |v: usize| {
            let id = &self.idents[self.vars[v].ident];
            match &id.class {
                Some(c) => format!("{c}:{}@{}", id.name, version[v]),
                None => format!("{}@{}", id.name, version[v]),
            }
        };
        let meta = self.meta;
        let mut parts = Parts::default();
        for (v, var) in self.vars.iter().enumerate().filter(|(v, _)| used[*v]) {
            let id = &self.idents[var.ident];
            parts.nodes.push(NodeRecord {
                created_at: format_nanos(var.created_ns),
                filename: var.filename.clone(),
                lineno: 0,
                name: id.name.clone(),
                version: version[v],
                value: var.text.clone(),
                comment: String::new(),
                category: var.category.clone(),
                graph_id: meta.graph_id.clone(),
                user_id: meta.user_id.clone(),
                class_name: id.class.clone(),
                project_id: meta.project_id.clone(),
                session_id: var.session.clone(),
                metadata: Value::Object(var.metadata.clone()),
                trigger_point: String::new(),
                full_name: String::new(),
                node_id: String::new(),
                full_node_id: full(v),
                extra: Map::new(),
                unset: Unset::default(),
            });
        }
        for (k, e) in self.edges.iter().enumerate() {
            let op = &self.ops[e.op];
            let mut metadata = Map::new();
            if !e.link.is_empty() {
                metadata.insert("inferred".into(), Value::Bool(true));
            }
            parts.edges.push(EdgeRecord {
                created_at: format_nanos(self.op_ends[e.op]),
                filename: op.filename.clone(),
                lineno: 0,
                edge_id: format!("edge-{k:032x}"),
                graph_id: meta.graph_id.clone(),
                user_id: meta.user_id.clone(),
                project_id: meta.project_id.clone(),
                session_id: op.session_id.clone(),
                op_id: op.op_id.clone(),
                category: op.category.clone(),
                source_full_node_id: full(e.from),
                target_full_node_id: full(e.to),
                comment: e.link.to_owned(),
                metadata: Value::Object(metadata),
                trigger_point: String::new(),
                extra: Map::new(),
                unset: Unset::default(),
            });
        }
        parts.ops = self.ops;
        parts
    }
}
