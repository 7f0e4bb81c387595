//! Records a memory system's execution as a smartcomment-compatible trace, in the style of
//! `tracing`: sessions and operations are [`Scope`]s that become current while an
//! [`Entered`] guard lives (or inside [`Scope::in_scope`], or around every poll of an
//! [`Instrument`]ed future); variables are recorded with their identity (a name, or the
//! content identity `<type>:<sha1>`), and versioned when their value changes or an operation
//! mutates them; edges record which inputs an operation turned into which outputs.
//!
//! ```
//! use std::sync::Arc;
//! use memtrace_record::{GraphInfo, OpSpec, Recorder, SessionSpec, SteppingClock, VarSpec};
//! let clock = Arc::new(SteppingClock::starting_at("2026-01-01 00:00:00", 1));
//! let rec = Recorder::new(GraphInfo::new("user-1", "demo"), clock, 7);
//! let session = rec.session(SessionSpec::new("memory_construction"));
//! let op = session.op(OpSpec::new("memory_system.extract_facts", "extraction"));
//! let msg = op.var(VarSpec::named("U1:D1:1", "Mom drinks hot cocoa.".into()).category("message"));
//! let fact = op.var(VarSpec::content("extracted_facts", serde_json::json!(["Mom drinks hot cocoa."])));
//! op.io(&[&msg], &[&fact], "The LLM extracts facts.");
//! let file = rec.to_json();
//! assert!(String::from_utf8_lossy(&file).contains("memory_system.extract_facts"));
//! ```
//!
//! A disabled recorder ([`Recorder::disabled`]) records nothing and returns empty handles.
//! Thread-safe: handles are `Send + Sync`; each thread has its own current scope.

mod clock;
mod identity;
mod scope;
mod state;

pub use clock::{format_timestamp, parse_timestamp, Clock, SteppingClock};
pub use identity::{content_id, py_json_dumps, py_repr, py_str_repr, py_type, sha1_hex};
pub use scope::{Entered, Instrument, Instrumented, Scope};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::{Map, Value};

use state::{Common, NodeSpec, Site, State};

/// The graph-level fields of the file.
#[derive(Debug, Clone)]
pub struct GraphInfo {
    pub user_id: Value,
    pub project_id: Value,
    pub metadata: Map<String, Value>,
    /// Use this graph id instead of a generated one.
    pub graph_id: Option<String>,
}

impl GraphInfo {
    /// A graph for `user_id` in `project_id`, with empty metadata.
    pub fn new(user_id: &str, project_id: &str) -> Self {
        Self {
            user_id: Value::from(user_id),
            project_id: Value::from(project_id),
            metadata: Map::new(),
            graph_id: None,
        }
    }
}

/// How a variable's value is written into the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Render {
    /// Python `repr()` (smartcomment's default): `'text'`, `['a']`.
    #[default]
    Repr,
    /// JSON indented by four spaces with sorted keys (smartcomment with an encoder).
    Json,
    /// A string as is; other values as compact JSON.
    Text,
}

/// A recorded variable version: the key edges and annotations use.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Var {
    full_name: String,
    version: u32,
}

impl Var {
    /// `class_name:name` (or `name`).
    pub fn full_name(&self) -> &str {
        &self.full_name
    }

    /// The version, from 1 (0 for the handle a disabled recorder returns).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// `full_name@version`, the id used by edges and annotations.
    pub fn full_node_id(&self) -> String {
        format!("{}@{}", self.full_name, self.version)
    }
}

/// What to record for a session.
#[derive(Debug, Clone, Default)]
pub struct SessionSpec {
    pub category: String,
    pub id: Option<String>,
    pub name: Option<String>,
    pub comment: String,
    pub metadata: Map<String, Value>,
}

/// The `comment` and `meta` setters of a spec (session, operation, variable), on its own
/// `comment` and `metadata` fields; the docs are written here, once, and rustdoc shows them on
/// each spec.
macro_rules! annotation_setters {
    ($($spec:ty),*) => {$(
        impl $spec {
            /// The record's `comment`.
            #[must_use]
            pub fn comment(mut self, c: &str) -> Self {
                c.clone_into(&mut self.comment);
                self
            }
            /// One entry of the record's `metadata`.
            #[must_use]
            pub fn meta(mut self, key: &str, v: Value) -> Self {
                self.metadata.insert(key.to_owned(), v);
                self
            }
        }
    )*};
}

annotation_setters!(SessionSpec, OpSpec, VarSpec);

impl SessionSpec {
    /// A session of this category with a generated id.
    pub fn new(category: &str) -> Self {
        Self {
            category: category.to_owned(),
            ..Self::default()
        }
    }
    /// Use this id (e.g. `locomo-1-session-1`).
    #[must_use]
    pub fn id(mut self, id: &str) -> Self {
        self.id = Some(id.to_owned());
        self
    }
}

/// What to record for an operation.
#[derive(Debug, Clone, Default)]
pub struct OpSpec {
    pub name: String,
    pub category: String,
    pub comment: String,
    pub metadata: Map<String, Value>,
}

impl OpSpec {
    /// An operation named `name` (e.g. `memory_system.extract_facts`) of `category`.
    pub fn new(name: &str, category: &str) -> Self {
        Self {
            name: name.to_owned(),
            category: category.to_owned(),
            ..Self::default()
        }
    }
}

/// What to record for a variable: identity, value and labels.
#[derive(Debug, Clone)]
pub struct VarSpec {
    name: Option<String>,
    class_name: Option<String>,
    value: Value,
    render: Render,
    category: String,
    comment: String,
    metadata: Map<String, Value>,
}

impl VarSpec {
    /// Identity by name: the same name with a different value becomes a new version.
    pub fn named(name: &str, value: Value) -> Self {
        Self {
            name: Some(name.to_owned()),
            ..Self::content_free(value)
        }
    }

    /// Identity by content, `<type>:<sha1>`, under the namespace `class_name`.
    pub fn content(class_name: &str, value: Value) -> Self {
        Self {
            class_name: Some(class_name.to_owned()),
            ..Self::content_free(value)
        }
    }

    fn content_free(value: Value) -> Self {
        Self {
            name: None,
            class_name: None,
            value,
            render: Render::Repr,
            category: "variable".into(),
            comment: String::new(),
            metadata: Map::new(),
        }
    }

    /// Put the variable in a namespace (`class_name`).
    #[must_use]
    pub fn class_name(mut self, c: &str) -> Self {
        self.class_name = Some(c.to_owned());
        self
    }
    #[must_use]
    pub fn category(mut self, c: &str) -> Self {
        c.clone_into(&mut self.category);
        self
    }
    #[must_use]
    pub fn render(mut self, r: Render) -> Self {
        self.render = r;
        self
    }

    fn text(&self) -> String {
        render(&self.value, self.render)
    }
}

/// The text of a value as written into the file.
pub fn render(value: &Value, how: Render) -> String {
    match (how, value) {
        (Render::Repr, v) => py_repr(v),
        (Render::Text, Value::String(s)) => s.clone(),
        (Render::Text, v) => v.to_string(),
        (Render::Json, v) => pretty_sorted(v),
    }
}

/// JSON with sorted keys, indented by four spaces (`json.dumps(v, indent=4, sort_keys=True)`
/// without ASCII escaping).
pub fn pretty_sorted(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .filter_map(|k| m.get(k).map(|x| (k.clone(), sort(x))))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    match serde::Serialize::serialize(&sort(v), &mut ser) {
        Ok(()) => String::from_utf8(out).unwrap_or_default(),
        Err(_) => v.to_string(),
    }
}

/// A handle to a trace being recorded. Cloning shares the trace.
#[derive(Clone, Default)]
pub struct Recorder {
    pub(crate) inner: Option<Arc<Inner>>,
}

pub(crate) struct Inner {
    pub(crate) key: u64,
    pub(crate) clock: Arc<dyn Clock>,
    created_at: String,
    pub(crate) state: Mutex<State>,
}

static NEXT_KEY: AtomicU64 = AtomicU64::new(1);

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("enabled", &self.is_enabled())
            .finish()
    }
}

impl Recorder {
    /// A recorder writing one graph. `seed` makes the generated ids (`graph-`, `session-`,
    /// `op-`, `edge-` + 32 hex) reproducible.
    pub fn new(info: GraphInfo, clock: Arc<dyn Clock>, seed: u64) -> Self {
        let created_at = format_timestamp(clock.now_ms());
        let mut state = State {
            common: Common {
                graph_id: String::new(),
                user_id: info.user_id,
                project_id: info.project_id,
            },
            meta: info.metadata,
            seed,
            counter: 0,
            sessions: Vec::new(),
            nodes: Vec::new(),
            ops: Vec::new(),
            edges: Vec::new(),
            latest: std::collections::HashMap::new(),
            op_sessions: std::collections::HashMap::new(),
            sentinels: state::Sentinels::default(),
        };
        state.common.graph_id = info.graph_id.unwrap_or_else(|| state.next_id("graph"));
        let key = NEXT_KEY.fetch_add(1, Ordering::Relaxed);
        Self {
            inner: Some(Arc::new(Inner {
                key,
                clock,
                created_at,
                state: Mutex::new(state),
            })),
        }
    }

    /// A recorder that records nothing.
    pub fn disabled() -> Self {
        Self { inner: None }
    }

    /// False for a disabled recorder.
    pub fn is_enabled(&self) -> bool {
        self.inner.is_some()
    }

    pub(crate) fn key(&self) -> u64 {
        self.inner.as_ref().map_or(0, |i| i.key)
    }

    fn lock(&self) -> Option<(MutexGuard<'_, State>, String)> {
        let inner = self.inner.as_ref()?;
        let guard = inner.state.lock().unwrap_or_else(PoisonError::into_inner);
        let now = format_timestamp(inner.clock.now_ms());
        Some((guard, now))
    }

    /// The graph id (empty when disabled).
    pub fn graph_id(&self) -> String {
        self.lock()
            .map(|(s, _)| s.common.graph_id.clone())
            .unwrap_or_default()
    }

    /// Starts a session. It becomes current only while entered.
    #[track_caller]
    pub fn session(&self, spec: SessionSpec) -> Scope {
        let site = Site::here();
        let Some((mut s, now)) = self.lock() else {
            return Scope::none();
        };
        let id = spec.id.clone().unwrap_or_else(|| s.next_id("session"));
        s.push_session(
            &now,
            site,
            &id,
            spec.name.as_deref(),
            &spec.comment,
            &spec.category,
            Value::Object(spec.metadata),
        );
        drop(s);
        Scope::new_session(self.clone(), id)
    }

    /// Starts an operation in the current scope's session (or the sentinel session).
    #[track_caller]
    pub fn op(&self, spec: OpSpec) -> Scope {
        let session = self.current().map(|c| c.session_id().to_owned());
        self.op_in(session, spec, Site::here())
    }

    pub(crate) fn op_in(&self, session: Option<String>, spec: OpSpec, site: Site) -> Scope {
        let Some((mut s, now)) = self.lock() else {
            return Scope::none();
        };
        let session = session.unwrap_or_else(|| {
            s.ensure_sentinels(&now, false, false);
            state::NONE_SESSION.to_owned()
        });
        let id = s.next_id("op");
        s.push_op(
            &now,
            site,
            &id,
            &spec.name,
            &spec.comment,
            &spec.category,
            &session,
            Value::Object(spec.metadata),
        );
        drop(s);
        Scope::new_op(self.clone(), id, session, spec.category)
    }

    /// Records a variable in the current scope's session.
    #[track_caller]
    pub fn var(&self, spec: VarSpec) -> Var {
        let session = self.current().map(|c| c.session_id().to_owned());
        self.var_in(session, spec, Site::here())
    }

    pub(crate) fn var_in(&self, session: Option<String>, spec: VarSpec, site: Site) -> Var {
        let Some((mut s, now)) = self.lock() else {
            return Var::default();
        };
        let session = session.unwrap_or_else(|| {
            s.ensure_sentinels(&now, false, false);
            state::NONE_SESSION.to_owned()
        });
        let text = spec.text();
        let name = spec.name.clone().unwrap_or_else(|| content_id(&spec.value));
        let full_name = match &spec.class_name {
            Some(c) => format!("{c}:{name}"),
            None => name.clone(),
        };
        let version = match s.latest.get(&full_name) {
            Some(l) if l.value == text => {
                return Var {
                    full_name,
                    version: l.version,
                }
            }
            Some(l) => l.version + 1,
            None => 1,
        };
        let node = NodeSpec {
            name: &name,
            class_name: spec.class_name.as_deref(),
            value: &text,
            comment: &spec.comment,
            category: &spec.category,
            metadata: Value::Object(spec.metadata),
        };
        s.push_node(&now, site, &node, version, &session);
        Var { full_name, version }
    }

    /// A link from `source` to `target` made by the current operation, or by the sentinel
    /// operation `__none_op__` outside any.
    #[track_caller]
    pub fn link(&self, source: &Var, target: &Var, comment: &str) {
        let site = Site::here();
        if let Some(op) = self.current().filter(Scope::is_op) {
            op.link_at(source, target, None, comment, site);
        } else if let Some((mut s, now)) = self.lock() {
            s.ensure_sentinels(&now, false, true);
            s.push_edge(
                &now,
                site,
                state::NONE_OP,
                state::NONE_SESSION,
                "link",
                &source.full_node_id(),
                &target.full_node_id(),
                comment,
            );
        }
    }

    /// The scope entered last on this thread for this recorder.
    pub fn current(&self) -> Option<Scope> {
        scope::current(self.key())
    }

    /// The latest version of a variable, if recorded.
    pub fn latest(&self, full_name: &str) -> Option<Var> {
        let (s, _) = self.lock()?;
        s.latest.get(full_name).map(|l| Var {
            full_name: full_name.to_owned(),
            version: l.version,
        })
    }

    /// Sets one key of the graph metadata.
    pub fn set_meta(&self, key: &str, value: Value) {
        if let Some((mut s, _)) = self.lock() {
            s.meta.insert(key.to_owned(), value);
        }
    }

    /// Counts of (sessions, nodes, operations, edges) recorded so far.
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        self.lock().map_or((0, 0, 0, 0), |(s, _)| {
            (s.sessions.len(), s.nodes.len(), s.ops.len(), s.edges.len())
        })
    }

    /// The trace as a smartcomment `ExecNetwork` JSON value; `None` when disabled.
    pub fn export(&self) -> Option<Value> {
        let inner = self.inner.as_ref()?;
        let s = inner.state.lock().unwrap_or_else(PoisonError::into_inner);
        Some(s.export(&inner.created_at))
    }

    /// The trace as smartcomment writes it (`indent=4`, UTF-8); empty when disabled.
    pub fn to_json(&self) -> Vec<u8> {
        self.export().map(|v| to_json_bytes(&v)).unwrap_or_default()
    }
}

/// A JSON value indented by four spaces, keys in their order.
pub fn to_json_bytes(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    match serde::Serialize::serialize(v, &mut ser) {
        Ok(()) => out,
        Err(_) => Vec::new(),
    }
}
