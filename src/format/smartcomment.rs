//! smartcomment `ExecNetwork` JSON (the MemTraceBench format): read and write.
//!
//! Writing a file we read gives the same JSON values, keys in smartcomment's order, unknown
//! keys kept (after the known ones), indented by four spaces like `json.dump(…, indent=4)`.

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Serialize;
use serde_json::{Map, Value};

use super::error::from_json;
use super::FormatError;
use crate::model::{
    AnnotationRecord, EdgeRecord, GraphMeta, NodeRecord, OpRecord, SessionRecord, Trace,
};

pub use super::parts::Parts;

/// True when the bytes look like a smartcomment file (a top-level object with `data.nodes`).
pub fn sniff(head: &str) -> bool {
    head.contains("\"graph_id\"") || (head.contains("\"data\"") && head.contains("\"nodes\""))
}

/// Parses the records of a smartcomment file.
///
/// # Errors
/// [`FormatError::Json`] for bad JSON; [`FormatError::Field`] naming the JSON path of a
/// field of the wrong type or a missing required field.
pub fn parse(bytes: &[u8]) -> Result<Parts, FormatError> {
    parse_bounded(bytes).map(|(parts, _)| parts)
}

/// [`parse`], and when the quick reader read the file, a length no string in it exceeds (so
/// that the string limit need not walk the records again).
pub(super) fn parse_bounded(bytes: &[u8]) -> Result<(Parts, Option<usize>), FormatError> {
    match super::stepwise::parse_quick(bytes) {
        Some((parts, longest)) => Ok((parts, Some(longest))),
        None => parse_serde(bytes).map(|parts| (parts, None)),
    }
}

/// [`parse`] with serde_json alone: slower, and says what is wrong with a bad file.
fn parse_serde(bytes: &[u8]) -> Result<Parts, FormatError> {
    // Valid UTF-8 checked once for the whole file is much faster than string by string (a
    // trace holds millions of short strings); the byte reader names where it is not.
    let parsed = match std::str::from_utf8(bytes) {
        Ok(text) => parse_from(serde_json::Deserializer::from_str(text)),
        Err(_) => parse_from(serde_json::Deserializer::from_slice(bytes)),
    };
    match parsed {
        Ok(parts) => Ok(parts),
        Err(e) if e.is_syntax() || e.is_eof() => Err(from_json(&e)),
        Err(e) => Err(locate(bytes, &e)),
    }
}

fn parse_from<'de, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
) -> Result<Parts, serde_json::Error> {
    FileVisitor::run(&mut de).and_then(|p| de.end().map(|()| p))
}

/// Re-reads with path tracking to name where a type error is.
fn locate(bytes: &[u8], first: &serde_json::Error) -> FormatError {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let path_err = serde_path_to_error::deserialize::<_, Parts>(&mut de);
    let (line, column) = (first.line(), first.column());
    match path_err {
        Err(e) => {
            let path = e.path().to_string();
            let inner = e.into_inner().to_string();
            let message = inner
                .rsplit_once(" at line ")
                .map_or(inner.as_str(), |(m, _)| m)
                .to_owned();
            FormatError::Field {
                path,
                message: format!("{message} (line {line}, column {column})"),
            }
        }
        Ok(_) => from_json(first),
    }
}

impl<'de> serde::Deserialize<'de> for Parts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        FileVisitor::run(d)
    }
}

struct FileVisitor;

impl FileVisitor {
    fn run<'de, D: Deserializer<'de>>(d: D) -> Result<Parts, D::Error> {
        d.deserialize_map(FileVisitor)
    }
}

impl<'de> Visitor<'de> for FileVisitor {
    type Value = Parts;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a smartcomment graph object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parts, A::Error> {
        let mut meta = Map::new();
        let mut parts = Parts::default();
        // smartcomment would read an object without `data` as an empty graph, but it always
        // writes `data`: without it this is another kind of file, so say so. A list missing
        // from `data` is read as empty.
        let mut saw_data = false;
        while let Some(key) = map.next_key::<String>()? {
            if key == "data" {
                saw_data = true;
                map.next_value_seed(DataSeed(&mut parts))?;
            } else {
                meta.insert(key, map.next_value()?);
            }
        }
        if !saw_data {
            return Err(de::Error::missing_field("data"));
        }
        parts.meta = serde_json::from_value(Value::Object(meta)).map_err(de::Error::custom)?;
        Ok(parts)
    }
}

struct DataSeed<'a>(&'a mut Parts);

impl<'de> de::DeserializeSeed<'de> for DataSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for DataSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a `data` object with nodes, edges, operations and sessions")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let p = self.0;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "nodes" => p.nodes = map.next_value()?,
                "edges" => p.edges = map.next_value()?,
                "operations" => p.ops = map.next_value()?,
                "sessions" => p.sessions = map.next_value()?,
                "annotations" => p.annotations = Some(map.next_value()?),
                _ => {
                    let v: Value = map.next_value()?;
                    p.data_extra.insert(key.clone(), v);
                }
            }
            p.data_order.push(key);
        }
        Ok(())
    }
}

/// Writes a trace as smartcomment JSON (indent 4, UTF-8, keys in smartcomment's order).
///
/// # Errors
/// Only if serialization itself fails (it does not for a valid [`Trace`]).
pub fn write(t: &Trace) -> Result<Vec<u8>, serde_json::Error> {
    #[derive(Serialize)]
    struct Data<'a> {
        nodes: &'a [NodeRecord],
        edges: &'a [EdgeRecord],
        operations: &'a [OpRecord],
        sessions: &'a [SessionRecord],
        #[serde(skip_serializing_if = "Option::is_none")]
        annotations: Option<&'a Vec<AnnotationRecord>>,
        #[serde(flatten)]
        extra: &'a Map<String, Value>,
    }
    #[derive(Serialize)]
    struct File<'a> {
        #[serde(flatten)]
        meta: &'a GraphMeta,
        data: Data<'a>,
    }
    let file = File {
        meta: &t.meta,
        data: Data {
            nodes: &t.vars,
            edges: &t.edges,
            operations: &t.ops,
            sessions: &t.sessions,
            annotations: t.annotations.as_ref(),
            extra: &t.data_extra,
        },
    };
    let mut out = Vec::with_capacity(t.vars.len() * 1024);
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    file.serialize(&mut ser)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::rng::SplitMix64;

    /// Bytes that make JSON strings, numbers and structure go wrong or go unusual.
    const PIECES: &[&[u8]] = &[
        b"\\",
        b"\\\"",
        b"\\u00e9",
        b"\\ud83d\\ude00",
        b"\\ud83d",
        b"\\x",
        b"\t",
        b"\xc3\xa9",
        b"\xff",
        b" ",
        b"\n",
        b"null",
        b"-0",
        b"01",
        b"1.5",
        b"{}",
        b"[]",
        b",",
        b"}",
        b"\"",
        b"\x00",
    ];

    /// Whatever the quick reader accepts, serde_json reads the same, and no string in it is
    /// longer than the bound it gives; checked on the fixtures and on thousands of corruptions
    /// of them (escapes, long and short strings, values serde_json reads).
    #[test]
    fn quick_reader_agrees_with_serde() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/smartcomment");
        let mut rng = SplitMix64::new(7);
        let (mut quick, mut total) = (0, 0);
        for name in ["mem0_bare.json", "mem0_commented.json"] {
            let file = std::fs::read(format!("{dir}/{name}")).unwrap();
            assert_eq!(
                super::super::stepwise::parse_quick(&file)
                    .map(|(p, _)| p)
                    .as_ref(),
                Some(&parse_serde(&file).unwrap()),
                "{name}"
            );
            for _ in 0..1500 {
                let mut bytes = file.clone();
                for _ in 0..=rng.below(3) {
                    let at = rng.below(bytes.len());
                    let cut = rng.below(3);
                    let piece = PIECES[rng.below(PIECES.len())];
                    bytes.splice(at..(at + cut).min(bytes.len()), piece.iter().copied());
                }
                total += 1;
                if let Some((parts, longest)) = super::super::stepwise::parse_quick(&bytes) {
                    quick += 1;
                    // No string is longer than the bound it gives.
                    let limits = crate::format::limits::Limits {
                        max_string_bytes: longest as u64,
                        ..Default::default()
                    };
                    assert!(crate::format::limits::check_strings(&parts, &limits).is_ok());
                    let serde = parse_serde(&bytes);
                    assert_eq!(
                        Some(&parts),
                        serde.as_ref().ok(),
                        "{name}: {}",
                        String::from_utf8_lossy(&bytes)
                    );
                }
            }
        }
        // Some corruptions keep the file readable (those inside a string), most do not.
        assert!(
            quick > total / 10 && quick < total,
            "{quick} of {total} read quickly"
        );
    }
}
