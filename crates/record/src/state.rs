//! What a recorder holds: the records in creation order, the latest version of each variable,
//! and the id generator. Records are JSON objects with smartcomment's keys in its order.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use crate::identity::sha1_hex;

/// Where a record was made (`#[track_caller]` location).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Site {
    pub file: &'static str,
    pub line: u32,
}

impl Site {
    pub(crate) const SENTINEL: Site = Site {
        file: "<sentinel>",
        line: 0,
    };

    #[track_caller]
    pub(crate) fn here() -> Site {
        let l = std::panic::Location::caller();
        Site {
            file: l.file(),
            line: l.line(),
        }
    }
}

/// The graph-level fields every record repeats.
#[allow(clippy::struct_field_names)] // the field names smartcomment uses
#[derive(Debug, Clone)]
pub(crate) struct Common {
    pub graph_id: String,
    pub user_id: Value,
    pub project_id: Value,
}

/// The latest version of a variable and what it looked like.
#[derive(Debug, Clone)]
pub(crate) struct Latest {
    pub version: u32,
    pub value: String,
    pub class_name: Option<String>,
    pub category: String,
    pub comment: String,
}

#[derive(Debug)]
pub(crate) struct State {
    pub common: Common,
    pub meta: Map<String, Value>,
    pub seed: u64,
    pub counter: u64,
    pub sessions: Vec<Value>,
    pub nodes: Vec<Value>,
    pub ops: Vec<Value>,
    pub edges: Vec<Value>,
    pub latest: HashMap<String, Latest>,
    pub op_sessions: HashMap<String, (String, String)>,
    pub sentinels: Sentinels,
}

#[derive(Debug, Default)]
pub(crate) struct Sentinels {
    pub session: bool,
    pub op: bool,
    pub var: bool,
}

pub(crate) const NONE_SESSION: &str = "__none__";
pub(crate) const NONE_OP: &str = "__none_op__";
pub(crate) const NONE_VAR: &str = "COMMENT:NONE";

impl State {
    /// A fresh id: `prefix-` + 32 hex digits derived from the seed and a counter.
    pub(crate) fn next_id(&mut self, prefix: &str) -> String {
        self.counter += 1;
        let h = sha1_hex(format!("{}:{prefix}:{}", self.seed, self.counter).as_bytes());
        format!("{prefix}-{}", &h[..32])
    }

    fn base(created_at: &str, site: Site) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("created_at".into(), json!(created_at));
        m.insert("filename".into(), json!(site.file));
        m.insert("lineno".into(), json!(site.line));
        m
    }

    #[allow(clippy::too_many_arguments)] // one argument per record field
    pub(crate) fn push_session(
        &mut self,
        created_at: &str,
        site: Site,
        id: &str,
        name: Option<&str>,
        comment: &str,
        category: &str,
        metadata: Value,
    ) {
        let mut m = Self::base(created_at, site);
        m.insert("session_id".into(), json!(id));
        m.insert("session_name".into(), json!(name));
        m.insert("graph_id".into(), json!(self.common.graph_id));
        m.insert("user_id".into(), self.common.user_id.clone());
        m.insert("project_id".into(), self.common.project_id.clone());
        m.insert("comment".into(), json!(comment));
        m.insert("category".into(), json!(category));
        m.insert("metadata".into(), metadata);
        m.insert(
            "trigger_point".into(),
            json!(format!("{}:{}", site.file, site.line)),
        );
        self.sessions.push(Value::Object(m));
    }

    #[allow(clippy::too_many_arguments)] // one argument per record field
    pub(crate) fn push_op(
        &mut self,
        created_at: &str,
        site: Site,
        id: &str,
        name: &str,
        comment: &str,
        category: &str,
        session_id: &str,
        metadata: Value,
    ) {
        let mut m = Self::base(created_at, site);
        m.insert("op_id".into(), json!(id));
        m.insert("op_name".into(), json!(name));
        m.insert("comment".into(), json!(comment));
        m.insert("category".into(), json!(category));
        m.insert("graph_id".into(), json!(self.common.graph_id));
        m.insert("user_id".into(), self.common.user_id.clone());
        m.insert("project_id".into(), self.common.project_id.clone());
        m.insert("session_id".into(), json!(session_id));
        m.insert("metadata".into(), metadata);
        m.insert(
            "trigger_point".into(),
            json!(format!("{}:{}", site.file, site.line)),
        );
        self.ops.push(Value::Object(m));
        self.op_sessions
            .insert(id.to_owned(), (session_id.to_owned(), category.to_owned()));
    }

    /// Adds a node record for `name` at `version`.
    pub(crate) fn push_node(
        &mut self,
        created_at: &str,
        site: Site,
        n: &NodeSpec<'_>,
        version: u32,
        session_id: &str,
    ) {
        let full_name = match n.class_name {
            Some(c) => format!("{c}:{}", n.name),
            None => n.name.to_owned(),
        };
        let mut m = Self::base(created_at, site);
        m.insert("name".into(), json!(n.name));
        m.insert("version".into(), json!(version));
        m.insert("value".into(), json!(n.value));
        m.insert("comment".into(), json!(n.comment));
        m.insert("category".into(), json!(n.category));
        m.insert("graph_id".into(), json!(self.common.graph_id));
        m.insert("user_id".into(), self.common.user_id.clone());
        m.insert("class_name".into(), json!(n.class_name));
        m.insert("project_id".into(), self.common.project_id.clone());
        m.insert("session_id".into(), json!(session_id));
        m.insert("metadata".into(), n.metadata.clone());
        m.insert(
            "trigger_point".into(),
            json!(format!("{}:{}", site.file, site.line)),
        );
        m.insert("full_name".into(), json!(full_name));
        m.insert("node_id".into(), json!(format!("{}@{version}", n.name)));
        m.insert(
            "full_node_id".into(),
            json!(format!("{full_name}@{version}")),
        );
        self.nodes.push(Value::Object(m));
        self.latest.insert(
            full_name,
            Latest {
                version,
                value: n.value.to_owned(),
                class_name: n.class_name.map(str::to_owned),
                category: n.category.to_owned(),
                comment: n.comment.to_owned(),
            },
        );
    }

    #[allow(clippy::too_many_arguments)] // one argument per record field
    pub(crate) fn push_edge(
        &mut self,
        created_at: &str,
        site: Site,
        op_id: &str,
        session_id: &str,
        category: &str,
        source: &str,
        target: &str,
        comment: &str,
    ) {
        let id = self.next_id("edge");
        let mut m = Self::base(created_at, site);
        m.insert("edge_id".into(), json!(id));
        m.insert("graph_id".into(), json!(self.common.graph_id));
        m.insert("user_id".into(), self.common.user_id.clone());
        m.insert("project_id".into(), self.common.project_id.clone());
        m.insert("session_id".into(), json!(session_id));
        m.insert("op_id".into(), json!(op_id));
        m.insert("category".into(), json!(category));
        m.insert("source_full_node_id".into(), json!(source));
        m.insert("target_full_node_id".into(), json!(target));
        m.insert("comment".into(), json!(comment));
        m.insert("metadata".into(), json!({}));
        m.insert(
            "trigger_point".into(),
            json!(format!("{}:{}", site.file, site.line)),
        );
        self.edges.push(Value::Object(m));
    }

    /// The sentinel session, op and variable, created on first use.
    pub(crate) fn ensure_sentinels(&mut self, created_at: &str, var: bool, op: bool) {
        if !self.sentinels.session {
            self.sentinels.session = true;
            self.push_session(
                created_at,
                Site::SENTINEL,
                NONE_SESSION,
                None,
                "Objects made outside any session.",
                "sentinel",
                json!({}),
            );
        }
        if var && !self.sentinels.var {
            self.sentinels.var = true;
            let spec = NodeSpec {
                name: NONE_VAR,
                class_name: None,
                value: "NONE",
                comment: "An empty input or output list.",
                category: "sentinel",
                metadata: json!({}),
            };
            self.push_node(created_at, Site::SENTINEL, &spec, 1, NONE_SESSION);
        }
        if op && !self.sentinels.op {
            self.sentinels.op = true;
            self.push_op(
                created_at,
                Site::SENTINEL,
                NONE_OP,
                NONE_OP,
                "Links made outside an operation.",
                "sentinel",
                NONE_SESSION,
                json!({}),
            );
        }
    }

    pub(crate) fn export(&self, created_at: &str) -> Value {
        let mut m = Map::new();
        m.insert("graph_id".into(), json!(self.common.graph_id));
        m.insert("user_id".into(), self.common.user_id.clone());
        m.insert("project_id".into(), self.common.project_id.clone());
        m.insert("storage_path".into(), Value::Null);
        m.insert("strict".into(), json!(true));
        m.insert("driver_type".into(), json!("in_memory"));
        m.insert("created_at".into(), json!(created_at));
        m.insert("metadata".into(), Value::Object(self.meta.clone()));
        m.insert(
            "data".into(),
            json!({ "nodes": self.nodes, "edges": self.edges, "operations": self.ops, "sessions": self.sessions }),
        );
        Value::Object(m)
    }
}

/// The fields of a node to write.
pub(crate) struct NodeSpec<'a> {
    pub name: &'a str,
    pub class_name: Option<&'a str>,
    pub value: &'a str,
    pub comment: &'a str,
    pub category: &'a str,
    pub metadata: Value,
}
