//! The records of a smartcomment `ExecNetwork` file, field for field, in the order smartcomment
//! writes them. Unknown keys are kept in `extra` and written back after the known ones.
//!
//! smartcomment's pydantic models let many fields be `null` or left out (a variable recorded
//! without a comment has `"comment": null`). The model keeps reading plain values (`""`, `None`,
//! `{}`); each record's [`Unset`] remembers which fields the file had as `null` or absent, so a
//! write gives the file back as it was read.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::util::json_read::{Cursor, Read};

/// Which fields of a record the file had as `null` or left out (one bit per field, in
/// declaration order). A field that still holds its default is written back the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Unset {
    null: u32,
    absent: u32,
}

/// Declares a record struct whose fields are read by name (unknown keys go to `extra`) and
/// written in declaration order, then `extra`.
///
/// A field with `= default` may be absent; with `= default; nullable` it may also be `null`
/// (read as the default); with `= default; generated` the reader fills it in when absent
/// (ids, computed fields) and the writer leaves it out again. Absent and null fields that
/// still hold their default are written back as read.
///
/// Hand-written instead of `#[serde(flatten)]`, which buffers every record and halves load speed.
macro_rules! record {
    (@default [$($missing:tt)*] $f:ident, $unset:ident, $bit:expr) => {
        $($missing)*
    };
    (@default [$($missing:tt)*] $f:ident, $unset:ident, $bit:expr, $d:expr $(, $kind:ident)?) => {{
        if $unset.null & $bit == 0 {
            $unset.absent |= $bit;
        }
        $d
    }};
    (@read $map:ident, $unset:ident, $bit:expr, $t:ty) => {
        Some($map.next_value::<$t>()?)
    };
    (@read $map:ident, $unset:ident, $bit:expr, $t:ty, $d:expr) => {
        Some($map.next_value::<$t>()?)
    };
    (@read $map:ident, $unset:ident, $bit:expr, $t:ty, $d:expr, generated) => {
        Some($map.next_value::<$t>()?)
    };
    (@read $map:ident, $unset:ident, $bit:expr, $t:ty, $d:expr, nullable) => {{
        let v = $map.next_value::<Option<$t>>()?;
        if v.is_none() {
            $unset.null |= $bit;
        }
        v
    }};
    (@fast $c:ident, $unset:ident, $bit:expr, $t:ty $(, $d:expr)?) => {
        Some(<$t as Read>::read($c)?)
    };
    (@fast $c:ident, $unset:ident, $bit:expr, $t:ty, $d:expr, generated) => {
        Some(<$t as Read>::read($c)?)
    };
    (@fast $c:ident, $unset:ident, $bit:expr, $t:ty, $d:expr, nullable) => {{
        let v = <Option<$t> as Read>::read($c)?;
        if v.is_none() {
            $unset.null |= $bit;
        }
        v
    }};
    // What both readers start with: the field enum (a field's bit is its position), a slot per
    // field, the keys kept as read, the defaults taken.
    (@start $F:ident, $extra:ident, $unset:ident; $($f:ident: $t:ty),*) => {
        #[allow(non_camel_case_types, dead_code, clippy::enum_variant_names)]
        enum $F { $($f),* }
        $(let mut $f: Option<$t> = None;)*
        let mut $extra = Map::new();
        let mut $unset = Unset::default();
    };
    (@write $m:ident, $s:ident, $f:ident, $bit:expr) => {
        $m.serialize_entry(stringify!($f), &$s.$f)?
    };
    (@write $m:ident, $s:ident, $f:ident, $bit:expr, $d:expr) => {
        if $s.unset.absent & $bit == 0 || $s.$f != $d {
            $m.serialize_entry(stringify!($f), &$s.$f)?
        }
    };
    (@write $m:ident, $s:ident, $f:ident, $bit:expr, $d:expr, generated) => {
        if $s.unset.absent & $bit == 0 {
            $m.serialize_entry(stringify!($f), &$s.$f)?
        }
    };
    (@write $m:ident, $s:ident, $f:ident, $bit:expr, $d:expr, nullable) => {
        if ($s.unset.null | $s.unset.absent) & $bit == 0 || $s.$f != $d {
            $m.serialize_entry(stringify!($f), &$s.$f)?
        } else if $s.unset.null & $bit != 0 {
            $m.serialize_entry(stringify!($f), &())?
        }
    };
    ($(#[$m:meta])* pub struct $name:ident {
        $($(#[$fm:meta])* pub $f:ident : $t:ty $(= $default:expr $(; $kind:ident)?)?,)*
    }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            $($(#[$fm])* pub $f: $t,)*
            /// Keys this version of memtrace does not know; kept for the round trip.
            pub extra: Map<String, Value>,
            /// Which fields the file had as `null` or left out.
            pub unset: Unset,
        }

        impl $name {
            /// The known keys, in the order they are written.
            pub const FIELDS: &'static [&'static str] = &[$(stringify!($f)),*];

            fn bit(field: &str) -> u32 {
                Self::FIELDS.iter().position(|f| *f == field).map_or(0, |i| 1 << i)
            }

            /// True when the file had `field` as `null`.
            pub fn is_null(&self, field: &str) -> bool {
                self.unset.null & Self::bit(field) != 0
            }

            /// True when the file left `field` out.
            pub fn is_absent(&self, field: &str) -> bool {
                self.unset.absent & Self::bit(field) != 0
            }

            /// The longest string this record holds (a value, a key, or inside a JSON
            /// field), in bytes, and the field it is in.
            pub fn longest_string(&self) -> (usize, &str) {
                let mut best = (0, "");
                $(let n = StrLen::str_len(&self.$f);
                if n > best.0 {
                    best = (n, stringify!($f));
                })*
                for (k, v) in &self.extra {
                    let n = k.len().max(v.str_len());
                    if n > best.0 {
                        best = (n, k.as_str());
                    }
                }
                best
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                #[allow(non_camel_case_types, dead_code, clippy::enum_variant_names)]
                enum F { $($f),* }
                let mut m = s.serialize_map(None)?;
                $(record!(@write m, self, $f, 1u32 << (F::$f as u32) $(, $default $(, $kind)?)?);)*
                for (k, v) in &self.extra {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
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
                        record!(@start F, extra, unset; $($f: $t),*);
                        // Files keep smartcomment's key order: try the field after the last
                        // one first (one comparison a key instead of a search).
                        let mut next = 0;
                        while let Some(key) = map.next_key::<crate::model::record::Key<'de>>()? {
                            let k = key.as_str();
                            let at = if $name::FIELDS.get(next) == Some(&k) {
                                Some(next)
                            } else {
                                $name::FIELDS.iter().position(|f| *f == k)
                            };
                            next = at.map_or(next, |i| i + 1);
                            match at {
                                $(Some(i) if i == F::$f as usize => {
                                    $f = record!(@read map, unset, 1u32 << (F::$f as u32), $t $(, $default $(, $kind)?)?);
                                })*
                                _ => {
                                    extra.insert(k.to_owned(), map.next_value()?);
                                }
                            }
                        }
                        Ok($name {
                            $($f: match $f {
                                Some(v) => v,
                                None => record!(@default [return Err(serde::de::Error::missing_field(stringify!($f)))]
                                    $f, unset, 1u32 << (F::$f as u32) $(, $default $(, $kind)?)?),
                            },)*
                            extra,
                            unset,
                        })
                    }
                }
                d.deserialize_map(V)
            }
        }

        /// The same record as serde reads, or `None` where the quick reader gives up.
        impl Read for $name {
            fn read(c: &mut Cursor<'_>) -> Option<Self> {
                record!(@start F, extra, unset; $($f: $t),*);
                let mut next = 0;
                c.eat(b'{')?;
                let mut more = c.peek()? != b'}';
                if !more {
                    c.pos += 1;
                }
                while more {
                    let (at, k) = match $name::FIELDS.get(next) {
                        Some(f) if c.key_is(f)? => (Some(next), *f),
                        _ => {
                            let k = c.key()?;
                            ($name::FIELDS.iter().position(|f| *f == k), k)
                        }
                    };
                    next = at.map_or(next, |i| i + 1);
                    match at {
                        $(Some(i) if i == F::$f as usize => {
                            $f = record!(@fast c, unset, 1u32 << (F::$f as u32), $t $(, $default $(, $kind)?)?);
                        })*
                        _ => {
                            extra.insert(k.to_owned(), Value::read(c)?);
                        }
                    }
                    more = c.more(b'}')?;
                }
                Some($name {
                    $($f: match $f {
                        Some(v) => v,
                        None => record!(@default [return None] $f, unset, 1u32 << (F::$f as u32) $(, $default $(, $kind)?)?),
                    },)*
                    extra,
                    unset,
                })
            }
        }
    };
}

/// The longest string in a field's value, in bytes (0 for numbers and booleans).
pub(crate) trait StrLen {
    fn str_len(&self) -> usize;
}

impl StrLen for String {
    fn str_len(&self) -> usize {
        self.len()
    }
}

impl<T: StrLen> StrLen for Option<T> {
    fn str_len(&self) -> usize {
        self.as_ref().map_or(0, StrLen::str_len)
    }
}

impl<T: StrLen> StrLen for Vec<T> {
    fn str_len(&self) -> usize {
        self.iter().map(StrLen::str_len).max().unwrap_or(0)
    }
}

impl StrLen for Value {
    fn str_len(&self) -> usize {
        match self {
            Value::String(s) => s.len(),
            Value::Array(a) => a.str_len(),
            Value::Object(m) => m
                .iter()
                .map(|(k, v)| k.len().max(v.str_len()))
                .max()
                .unwrap_or(0),
            Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        }
    }
}

macro_rules! no_strings {
    ($($t:ty),*) => {$(
        impl StrLen for $t {
            fn str_len(&self) -> usize {
                0
            }
        }
    )*};
}
no_strings!(i64, u32, bool);

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
        pub created_at: String = String::new(),
        pub filename: String,
        pub lineno: i64,
        pub name: String,
        pub version: u32 = 1,
        pub value: String,
        pub comment: String = String::new(); nullable,
        pub category: String = "variable".to_owned(),
        pub graph_id: String = String::new(),
        pub user_id: Value = Value::Null; nullable,
        pub class_name: Option<String> = None; nullable,
        pub project_id: Value = Value::Null; nullable,
        pub session_id: String = String::new(),
        pub metadata: Value = empty_object(); nullable,
        pub trigger_point: String = String::new(); generated,
        pub full_name: String = String::new(); generated,
        pub node_id: String = String::new(); generated,
        pub full_node_id: String = String::new(); generated,
    }
}

impl NodeRecord {
    /// A record with every field at its default: no name or value, version 1 (builders of
    /// traces set what they know over it, `NodeRecord { name, value, ..NodeRecord::blank() }`).
    pub fn blank() -> Self {
        NodeRecord {
            created_at: String::new(),
            filename: String::new(),
            lineno: 0,
            name: String::new(),
            version: 1,
            value: String::new(),
            comment: String::new(),
            category: "variable".to_owned(),
            graph_id: String::new(),
            user_id: Value::Null,
            class_name: None,
            project_id: Value::Null,
            session_id: String::new(),
            metadata: empty_object(),
            trigger_point: String::new(),
            full_name: String::new(),
            node_id: String::new(),
            full_node_id: String::new(),
            extra: Map::new(),
            unset: Unset::default(),
        }
    }
}

record! {
    /// An operation: the edges carrying its `op_id` make its subgraph.
    pub struct OpRecord {
        pub created_at: String = String::new(),
        pub filename: String,
        pub lineno: i64,
        pub op_id: String = String::new(); generated,
        pub op_name: String = String::new(); nullable,
        pub comment: String = String::new(); nullable,
        pub category: String = "operation".to_owned(),
        pub graph_id: String = String::new(),
        pub user_id: Value = Value::Null; nullable,
        pub project_id: Value = Value::Null; nullable,
        pub session_id: String = String::new(),
        pub metadata: Value = empty_object(); nullable,
        pub trigger_point: String = String::new(); generated,
    }
}

record! {
    /// A variable → variable edge caused by the operation `op_id`.
    pub struct EdgeRecord {
        pub created_at: String = String::new(),
        pub filename: String,
        pub lineno: i64,
        pub edge_id: String = String::new(); generated,
        pub graph_id: String = String::new(),
        pub user_id: Value = Value::Null; nullable,
        pub project_id: Value = Value::Null; nullable,
        pub session_id: String = String::new(),
        pub op_id: String,
        pub category: String = "operation".to_owned(),
        pub source_full_node_id: String,
        pub target_full_node_id: String,
        pub comment: String = String::new(); nullable,
        pub metadata: Value = empty_object(); nullable,
        pub trigger_point: String = String::new(); generated,
    }
}

record! {
    /// A session: a group of records (one conversation session, a search phase, ...).
    pub struct SessionRecord {
        pub created_at: String = String::new(),
        pub filename: String,
        pub lineno: i64,
        pub session_id: String = String::new(); generated,
        pub session_name: Option<String> = None; nullable,
        pub graph_id: String = String::new(),
        pub user_id: Value = Value::Null; nullable,
        pub project_id: Value = Value::Null; nullable,
        pub comment: String = String::new(); nullable,
        pub category: String = "session".to_owned(),
        pub metadata: Value = empty_object(); nullable,
        pub trigger_point: String = String::new(); generated,
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
        pub source_evidence_ids: Vec<String> = Vec::<String>::new(),
        pub final_error_type: String = String::new(),
        pub final_op_id: String = String::new(),
    }
}

record! {
    /// The graph-level fields of a smartcomment file (everything but `data`).
    pub struct GraphMeta {
        pub graph_id: String = String::new(),
        pub user_id: Value = Value::Null; nullable,
        pub project_id: Value = Value::Null; nullable,
        pub storage_path: Option<String> = None; nullable,
        pub strict: bool = false,
        pub driver_type: String = "in_memory".to_owned(),
        pub created_at: String = String::new(),
        pub metadata: Value = empty_object(); nullable,
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
            unset: Unset::default(),
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

    /// Fills the fields smartcomment computes on export (`full_name`, ids, `trigger_point`);
    /// fields that already hold their value are left as they are (no allocation).
    pub fn fill_computed(&mut self) {
        use crate::util::strings::{decimal, set_joined};
        let mut buf = [0; 20];
        let version = decimal(i64::from(self.version), &mut buf);
        match &self.class_name {
            Some(c) => set_joined(&mut self.full_name, &[c, ":", &self.name]),
            None => set_joined(&mut self.full_name, &[&self.name]),
        }
        set_joined(&mut self.node_id, &[&self.name, "@", version]);
        set_joined(&mut self.full_node_id, &[&self.full_name, "@", version]);
        let mut buf = [0; 20];
        let line = decimal(self.lineno, &mut buf);
        set_joined(&mut self.trigger_point, &[&self.filename, ":", line]);
    }
}
