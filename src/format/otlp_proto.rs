//! OTLP protobuf (the OTLP/HTTP default and the file exporter's `proto` format): an
//! `ExportTraceServiceRequest` / `TracesData` or `ExportLogsServiceRequest` / `LogsData`,
//! decoded by hand (varints and length-delimited fields of the messages we read) into the
//! OTLP JSON shape the JSON reader takes: ids as lowercase hex, 64-bit integers as decimal
//! strings, `bytesValue` as base64, field names in lowerCamelCase. Unknown fields are skipped,
//! as protobuf requires; a field of the wrong wire type is an error.

use serde_json::{Map, Value};

/// How a field's value is written in JSON.
#[derive(Clone, Copy)]
enum Ty {
    /// A nested message, described by the function's field table.
    Msg(fn() -> &'static [Field]),
    Str,
    /// `bytes` as lowercase hex (trace and span ids).
    Hex,
    /// `bytes` as base64 (`AnyValue.bytes_value`).
    Base64,
    /// `fixed64` as a decimal string (timestamps).
    Fixed64,
    Fixed32,
    /// `int64` / `uint64` varint as a decimal string.
    Int64,
    /// An enum or small integer varint, as a number.
    Enum,
    Bool,
    Double,
}

/// One field of a message: number, JSON name, type, repeated.
struct Field(u32, &'static str, Ty, bool);

const fn one(n: u32, name: &'static str, ty: Ty) -> Field {
    Field(n, name, ty, false)
}
const fn many(n: u32, name: &'static str, ty: Ty) -> Field {
    Field(n, name, ty, true)
}

fn traces_request() -> &'static [Field] {
    const T: &[Field] = &[many(1, "resourceSpans", Ty::Msg(resource_spans))];
    T
}
fn logs_request() -> &'static [Field] {
    const T: &[Field] = &[many(1, "resourceLogs", Ty::Msg(resource_logs))];
    T
}
fn resource_spans() -> &'static [Field] {
    const T: &[Field] = &[
        one(1, "resource", Ty::Msg(resource)),
        many(2, "scopeSpans", Ty::Msg(scope_spans)),
        one(3, "schemaUrl", Ty::Str),
    ];
    T
}
fn resource_logs() -> &'static [Field] {
    const T: &[Field] = &[
        one(1, "resource", Ty::Msg(resource)),
        many(2, "scopeLogs", Ty::Msg(scope_logs)),
        one(3, "schemaUrl", Ty::Str),
    ];
    T
}
fn resource() -> &'static [Field] {
    const T: &[Field] = &[many(1, "attributes", Ty::Msg(key_value))];
    T
}
fn scope() -> &'static [Field] {
    const T: &[Field] = &[
        one(1, "name", Ty::Str),
        one(2, "version", Ty::Str),
        many(3, "attributes", Ty::Msg(key_value)),
    ];
    T
}
fn scope_spans() -> &'static [Field] {
    const T: &[Field] = &[
        one(1, "scope", Ty::Msg(scope)),
        many(2, "spans", Ty::Msg(span)),
        one(3, "schemaUrl", Ty::Str),
    ];
    T
}
fn scope_logs() -> &'static [Field] {
    const T: &[Field] = &[
        one(1, "scope", Ty::Msg(scope)),
        many(2, "logRecords", Ty::Msg(log_record)),
        one(3, "schemaUrl", Ty::Str),
    ];
    T
}
fn span() -> &'static [Field] {
    const T: &[Field] = &[
        one(1, "traceId", Ty::Hex),
        one(2, "spanId", Ty::Hex),
        one(3, "traceState", Ty::Str),
        one(4, "parentSpanId", Ty::Hex),
        one(5, "name", Ty::Str),
        one(6, "kind", Ty::Enum),
        one(7, "startTimeUnixNano", Ty::Fixed64),
        one(8, "endTimeUnixNano", Ty::Fixed64),
        many(9, "attributes", Ty::Msg(key_value)),
        many(11, "events", Ty::Msg(event)),
        one(15, "status", Ty::Msg(status)),
        one(16, "flags", Ty::Fixed32),
    ];
    T
}
fn event() -> &'static [Field] {
    const T: &[Field] = &[
        one(1, "timeUnixNano", Ty::Fixed64),
        one(2, "name", Ty::Str),
        many(3, "attributes", Ty::Msg(key_value)),
    ];
    T
}
fn status() -> &'static [Field] {
    const T: &[Field] = &[one(2, "message", Ty::Str), one(3, "code", Ty::Enum)];
    T
}
fn log_record() -> &'static [Field] {
    const T: &[Field] = &[
        one(1, "timeUnixNano", Ty::Fixed64),
        one(11, "observedTimeUnixNano", Ty::Fixed64),
        one(2, "severityNumber", Ty::Enum),
        one(3, "severityText", Ty::Str),
        one(5, "body", Ty::Msg(any_value)),
        many(6, "attributes", Ty::Msg(key_value)),
        one(8, "flags", Ty::Fixed32),
        one(9, "traceId", Ty::Hex),
        one(10, "spanId", Ty::Hex),
        one(12, "eventName", Ty::Str),
    ];
    T
}
fn key_value() -> &'static [Field] {
    const T: &[Field] = &[one(1, "key", Ty::Str), one(2, "value", Ty::Msg(any_value))];
    T
}
fn any_value() -> &'static [Field] {
    const T: &[Field] = &[
        one(1, "stringValue", Ty::Str),
        one(2, "boolValue", Ty::Bool),
        one(3, "intValue", Ty::Int64),
        one(4, "doubleValue", Ty::Double),
        one(5, "arrayValue", Ty::Msg(values)),
        one(6, "kvlistValue", Ty::Msg(kv_values)),
        one(7, "bytesValue", Ty::Base64),
    ];
    T
}
fn values() -> &'static [Field] {
    const T: &[Field] = &[many(1, "values", Ty::Msg(any_value))];
    T
}
fn kv_values() -> &'static [Field] {
    const T: &[Field] = &[many(1, "values", Ty::Msg(key_value))];
    T
}

/// Which request a protobuf body holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    Traces,
    Logs,
}

/// Decodes a protobuf OTLP traces or logs request into its JSON form, or says why it is not one.
/// A body that decodes as neither, or holds no resource, is not OTLP protobuf.
///
/// # Errors
/// The byte offset and field where decoding failed (for the traces reading).
pub fn decode(bytes: &[u8]) -> Result<(Request, Value), String> {
    let traces = Reader::new(bytes).message(traces_request(), 0);
    match traces {
        Ok(v) if v.get("resourceSpans").is_some() => Ok((Request::Traces, v)),
        other => match Reader::new(bytes).message(logs_request(), 0) {
            Ok(v) if v.get("resourceLogs").is_some() => Ok((Request::Logs, v)),
            _ => Err(match other {
                Err(e) => format!("not an OTLP protobuf request: {e}"),
                Ok(_) => "not an OTLP protobuf request: no resourceSpans".into(),
            }),
        },
    }
}

/// Messages nest at most this deep (an `AnyValue` can nest without end).
const MAX_DEPTH: usize = 64;

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// Offset of `bytes` in the whole body, for error messages.
    base: usize,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader {
            bytes,
            pos: 0,
            base: 0,
        }
    }

    fn err(&self, what: &str) -> String {
        format!("byte {}: {what}", self.base + self.pos)
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self
                .bytes
                .get(self.pos)
                .ok_or_else(|| self.err("truncated varint"))?;
            self.pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(self.err("varint longer than 10 bytes"))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| self.err("field runs past the end"))?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn fixed(&mut self, n: usize) -> Result<u64, String> {
        let b = self.take(n)?;
        Ok(b.iter()
            .rev()
            .fold(0u64, |acc, &x| (acc << 8) | u64::from(x)))
    }

    /// Reads fields until the end of this reader's bytes.
    fn message(&mut self, fields: &[Field], depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(self.err("messages nested too deep"));
        }
        let mut out = Map::new();
        while self.pos < self.bytes.len() {
            let tag = self.varint()?;
            let (num, wire) = (tag >> 3, tag & 7);
            let Some(f) = fields.iter().find(|f| u64::from(f.0) == num) else {
                self.skip(wire)?;
                continue;
            };
            let v = self.value(f, wire, depth)?;
            if f.3 {
                let list = out.entry(f.1).or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(a) = list {
                    a.push(v);
                }
            } else {
                out.insert(f.1.to_owned(), v);
            }
        }
        Ok(Value::Object(out))
    }

    fn value(&mut self, f: &Field, wire: u64, depth: usize) -> Result<Value, String> {
        let want = match f.2 {
            Ty::Enum | Ty::Int64 | Ty::Bool => 0,
            Ty::Fixed64 | Ty::Double => 1,
            Ty::Fixed32 => 5,
            Ty::Msg(_) | Ty::Str | Ty::Hex | Ty::Base64 => 2,
        };
        if wire != want {
            return Err(self.err(&format!("field {} ({}) has wire type {wire}", f.0, f.1)));
        }
        Ok(match f.2 {
            Ty::Enum => Value::from(self.varint()?),
            // int64 is two's complement in the varint.
            Ty::Int64 => {
                Value::String(i64::from_ne_bytes(self.varint()?.to_ne_bytes()).to_string())
            }
            Ty::Bool => Value::Bool(self.varint()? != 0),
            Ty::Fixed64 => Value::String(self.fixed(8)?.to_string()),
            Ty::Fixed32 => Value::from(self.fixed(4)?),
            Ty::Double => Value::from(f64::from_bits(self.fixed(8)?)),
            Ty::Msg(_) | Ty::Str | Ty::Hex | Ty::Base64 => {
                let n = usize::try_from(self.varint()?).map_err(|_| self.err("huge length"))?;
                let base = self.base + self.pos;
                let body = self.take(n)?;
                match f.2 {
                    Ty::Msg(sub) => Reader {
                        bytes: body,
                        pos: 0,
                        base,
                    }
                    .message(sub(), depth + 1)?,
                    Ty::Str => Value::String(
                        std::str::from_utf8(body)
                            .map_err(|_| self.err(&format!("field {} is not UTF-8", f.1)))?
                            .to_owned(),
                    ),
                    Ty::Hex => Value::String(hex(body)),
                    _ => Value::String(base64(body)),
                }
            }
        })
    }

    fn skip(&mut self, wire: u64) -> Result<(), String> {
        match wire {
            0 => self.varint().map(drop),
            1 => self.take(8).map(drop),
            5 => self.take(4).map(drop),
            2 => {
                let n = usize::try_from(self.varint()?).map_err(|_| self.err("huge length"))?;
                self.take(n).map(drop)
            }
            _ => Err(self.err(&format!("unknown wire type {wire}"))),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ABC[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hand_encoded_span_decodes() {
        // TracesData { resource_spans { scope_spans { spans { trace_id: 0xab, name: "x",
        // start: 5, attributes { key: "k", value { int_value: 3 } } } } } }
        let kv = [0x0a, 1, b'k', 0x12, 2, 0x18, 3];
        let mut span = vec![
            0x0a, 1, 0xab, 0x2a, 1, b'x', 0x39, 5, 0, 0, 0, 0, 0, 0, 0, 0x4a, 7,
        ];
        span.extend(kv);
        let mut ss = vec![0x12, span.len() as u8];
        ss.extend(span);
        let mut rs = vec![0x12, ss.len() as u8];
        rs.extend(ss);
        let mut req = vec![0x0a, rs.len() as u8];
        req.extend(rs);
        let (kind, v) = decode(&req).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(kind, Request::Traces);
        let s = &v["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        assert_eq!(s["traceId"], "ab");
        assert_eq!(s["startTimeUnixNano"], "5");
        assert_eq!(s["attributes"][0]["value"]["intValue"], "3");
        assert!(decode(b"{\"resourceSpans\": []}").is_err());
        assert!(decode(&req[..req.len() - 1]).is_err());
        assert_eq!(base64(b"hello"), "aGVsbG8=");
    }
}
