//! The records of a smartcomment `ExecNetwork` file, field for field, in the order smartcomment
//! writes them. Unknown keys are kept in `extra` and written back after the known ones.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Declares a record struct whose fields are read by name (unknown keys go to `extra`, missing
/// ones take their default) and written in declaration order, then `extra`.
///
/// Hand-written instead of `#[serde(flatten)]`, which buffers every record and halves load speed.
macro_rules! record {
    (@default $f:ident) => {
        return Err(serde::de::Error::missing_field(stringify!($f)))
    };
    (@default $f:ident, $d:expr) => {
        $d
    };
    ($(#[$m:meta])* pub struct $name:ident {
        $($(#[$fm:meta])* pub $f:ident : $t:ty $(= $default:expr)?,)*
    }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Serialize)]
        pub struct $name {
            $($(#[$fm])* pub $f: $t,)*
            /// Keys this version of memtrace does not know; kept for the round trip.
            #[serde(flatten)]
            pub extra: Map<String, Value>,
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(concat!("a ", stringify!($name), " object"))
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<$name, A::Error> {
                        $(let mut $f: Option<$t> = None;)*
                        let mut extra = Map::new();
                        while let Some(key) = map.next_key::<crate::model::record::Key<'de>>()? {
                            match key.as_str() {
                                $(stringify!($f) => $f = Some(map.next_value()?),)*
                                other => {
                                    extra.insert(other.to_owned(), map.next_value()?);
                                }
                            }
                        }
                        Ok($name {
                            $($f: match $f {
                                Some(v) => v,
                                None => record!(@default $f $(, $default)?),
                            },)*
                            extra,
                        })
                    }
                }
                d.deserialize_map(V)
            }
        }
    };
}

/// A map key, borrowed from the input when it has no escapes.
pub(crate) enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(s) => s,
            Key::Owned(s) => s,
        }
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct K;
        impl<'de> serde::de::Visitor<'de> for K {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key::Borrowed(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v))
            }
        }
        d.deserialize_str(K)
    }
}

record! {
    /// One version of a variable (smartcomment calls it a node).
    pub struct NodeRecord {
        pub created_at: String,
        pub filename: String,
        pub lineno: i64,
        pub name: String,
        pub version: u32,
        pub value: String,
        pub comment: String = String::new(),
        pub category: String = String::new(),
        pub graph_id: String = String::new(),
        pub user_id: Value = Value::Null,
        pub class_name: Option<String> = None,
        pub project_id: Value = Value::Null,
        pub session_id: String = String::new(),
        pub metadata: Value = empty_object(),
        pub trigger_point: String = String::new(),
        pub full_name: String = String::new(),
        pub node_id: String = String::new(),
        pub full_node_id: String = String::new(),
    }
}

record! {
    /// An operation: the edges carrying its `op_id` make its subgraph.
    pub struct OpRecord {
        pub created_at: String,
        pub filename: String,
        pub lineno: i64,
        pub op_id: String,
        pub op_name: String,
        pub comment: String = String::new(),
        pub category: String = String::new(),
        pub graph_id: String = String::new(),
        pub user_id: Value = Value::Null,
        pub project_id: Value = Value::Null,
        pub session_id: String = String::new(),
        pub metadata: Value = empty_object(),
        pub trigger_point: String = String::new(),
    }
}

record! {
    /// A variable → variable edge caused by the operation `op_id`.
    pub struct EdgeRecord {
        pub created_at: String,
        pub filename: String,
        pub lineno: i64,
        pub edge_id: String,
        pub graph_id: String = String::new(),
        pub user_id: Value = Value::Null,
        pub project_id: Value = Value::Null,
        pub session_id: String = String::new(),
        pub op_id: String,
        pub category: String = String::new(),
        pub source_full_node_id: String,
        pub target_full_node_id: String,
        pub comment: String = String::new(),
        pub metadata: Value = empty_object(),
        pub trigger_point: String = String::new(),
    }
}

record! {
    /// A session: a group of records (one conversation session, a search phase, ...).
    pub struct SessionRecord {
        pub created_at: String,
        pub filename: String,
        pub lineno: i64,
        pub session_id: String,
        pub session_name: Option<String> = None,
        pub graph_id: String = String::new(),
        pub user_id: Value = Value::Null,
        pub project_id: Value = Value::Null,
        pub comment: String = String::new(),
        pub category: String = String::new(),
        pub metadata: Value = empty_object(),
        pub trigger_point: String = String::new(),
    }
}

record! {
    /// A MemTraceBench annotation: the decisive op and error type of one failed question.
    pub struct AnnotationRecord {
        pub query_id: String,
        pub query: String = String::new(),
        pub golden_answers: Value = Value::Null,
        pub golden_answers_id: Option<String> = None,
        pub prediction: Value = Value::Null,
        pub prediction_id: Option<String> = None,
        pub source_evidence_ids: Vec<String> = Vec::new(),
        pub final_error_type: String = String::new(),
        pub final_op_id: String = String::new(),
    }
}

record! {
    /// The graph-level fields of a smartcomment file (everything but `data`).
    pub struct GraphMeta {
        pub graph_id: String,
        pub user_id: Value = Value::Null,
        pub project_id: Value = Value::Null,
        pub storage_path: Option<String> = None,
        pub strict: bool = false,
        pub driver_type: String = "in_memory".to_owned(),
        pub created_at: String = String::new(),
        pub metadata: Value = empty_object(),
    }
}

impl Default for GraphMeta {
    fn default() -> Self {
        Self {
            graph_id: String::new(),
            user_id: Value::Null,
            project_id: Value::Null,
            storage_path: None,
            strict: false,
            driver_type: "in_memory".to_owned(),
            created_at: String::new(),
            metadata: empty_object(),
            extra: Map::new(),
        }
    }
}

pub(crate) fn empty_object() -> Value {
    Value::Object(Map::new())
}

impl NodeRecord {
    /// `class_name:name`, or `name` when there is no class name.
    pub fn compute_full_name(&self) -> String {
        match &self.class_name {
            Some(c) => format!("{c}:{}", self.name),
            None => self.name.clone(),
        }
    }

    /// Fills the fields smartcomment computes on export (`full_name`, ids, `trigger_point`).
    pub fn fill_computed(&mut self) {
        self.full_name = self.compute_full_name();
        self.node_id = format!("{}@{}", self.name, self.version);
        self.full_node_id = format!("{}@{}", self.full_name, self.version);
        self.trigger_point = format!("{}:{}", self.filename, self.lineno);
    }
}
