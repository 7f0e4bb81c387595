//! Values in smartcomment files are Python `repr()` strings by default (`'hello'`,
//! `['a', 'b']`, `{'k': 1.0, 'x': None}`), or JSON when the tracer had a schema.
//! This module reads both into JSON, and shows them as plain text.

use std::borrow::Cow;

use serde_json::{Map, Number, Value};

/// Deepest nesting this parser follows before it gives up and keeps the text.
const MAX_DEPTH: usize = 128;

/// Parses a Python literal (or JSON) into a JSON value; text that is neither stays a string.
///
/// # Example
/// ```
/// use memtrace::model::pyrepr::to_json;
/// assert_eq!(to_json("['7 May 2023']"), serde_json::json!(["7 May 2023"]));
/// assert_eq!(to_json("'it\\'s'"), serde_json::json!("it's"));
/// ```
pub fn to_json(text: &str) -> Value {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    p.ws();
    match p.value() {
        Some(v) => {
            p.ws();
            if p.i == p.s.len() {
                v
            } else {
                Value::String(text.to_owned())
            }
        }
        None => Value::String(text.to_owned()),
    }
}

/// The value as a person would read it: a string literal without its quotes and escapes,
/// anything else as given.
pub fn display(text: &str) -> String {
    shown(text).into_owned()
}

/// The value laid out for reading side by side (the page's inspector and its diffs): pretty
/// JSON when it parses as a JSON (or Python-literal) object or list, else [`display`].
pub fn pretty(text: &str) -> String {
    match to_json(text) {
        v @ (Value::Object(_) | Value::Array(_)) => {
            serde_json::to_string_pretty(&v).unwrap_or_else(|_| text.to_owned())
        }
        _ => display(text),
    }
}

/// [`display`], borrowing the text when it needs no unescaping.
pub fn shown(text: &str) -> Cow<'_, str> {
    let t = text.trim();
    let quote = match t.as_bytes() {
        [q @ (b'\'' | b'"'), .., last] if last == q => *q,
        _ => return Cow::Borrowed(text),
    };
    let inner = &t[1..t.len() - 1];
    if !inner.bytes().any(|b| b == b'\\' || b == quote) {
        return Cow::Borrowed(inner);
    }
    match to_json(t) {
        Value::String(s) => Cow::Owned(s),
        _ => Cow::Borrowed(text),
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Option<Value> {
        self.ws();
        match self.peek()? {
            b'\'' | b'"' => self.string().map(Value::String),
            b'[' | b'(' => self.seq(),
            b'{' => self.dict(),
            b'-' | b'+' | b'0'..=b'9' | b'.' => self.number(),
            _ => self.word(),
        }
    }

    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn seq(&mut self) -> Option<Value> {
        let close = if self.peek()? == b'[' { b']' } else { b')' };
        self.i += 1;
        self.nested(|p| {
            let mut items = Vec::new();
            loop {
                if p.eat(close) {
                    return Some(Value::Array(items));
                }
                items.push(p.value()?);
                if !p.eat(b',') {
                    return p.eat(close).then_some(Value::Array(items));
                }
            }
        })
    }

    fn dict(&mut self) -> Option<Value> {
        self.i += 1;
        self.nested(|p| {
            let mut map = Map::new();
            loop {
                if p.eat(b'}') {
                    return Some(Value::Object(map));
                }
                let key = match p.value()? {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                if !p.eat(b':') {
                    return None;
                }
                let v = p.value()?;
                map.insert(key, v);
                if !p.eat(b',') {
                    return p.eat(b'}').then_some(Value::Object(map));
                }
            }
        })
    }

    fn number(&mut self) -> Option<Value> {
        let start = self.i;
        while self.i < self.s.len()
            && matches!(
                self.s[self.i],
                b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9' | b'_'
            )
        {
            self.i += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.i])
            .ok()?
            .replace('_', "");
        if let Ok(n) = text.parse::<i64>() {
            return Some(Value::Number(n.into()));
        }
        let f = text.parse::<f64>().ok()?;
        Number::from_f64(f).map(Value::Number)
    }

    fn word(&mut self) -> Option<Value> {
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_')
        {
            self.i += 1;
        }
        match &self.s[start..self.i] {
            b"None" | b"null" => Some(Value::Null),
            b"True" | b"true" => Some(Value::Bool(true)),
            b"False" | b"false" => Some(Value::Bool(false)),
            _ => None,
        }
    }

    /// A Python or JSON string literal with its escapes.
    fn string(&mut self) -> Option<String> {
        let quote = self.peek()?;
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = self.peek()?;
            self.i += 1;
            if c == quote {
                return String::from_utf8(out).ok();
            }
            if c != b'\\' {
                out.push(c);
                continue;
            }
            self.i = escape(self.s, self.i, &mut out)?;
        }
    }
}

/// Decodes the escape whose letter is at `s[i]` (just after a backslash) onto `out`: the index
/// after it, or `None` (having written nothing) for a `\x` / `\u` / `\U` without its hex
/// digits. Python's and JSON's escapes; any other character stands for itself.
fn escape(s: &[u8], i: usize, out: &mut Vec<u8>) -> Option<usize> {
    let hex = |at: usize, n: usize| {
        let digits = s.get(at..at + n)?;
        u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
    };
    let e = *s.get(i)?;
    let next = match e {
        b'n' | b't' | b'r' | b'b' | b'f' | b'0' => {
            out.push(match e {
                b'n' => b'\n',
                b't' => b'\t',
                b'r' => b'\r',
                b'b' => 8,
                b'f' => 12,
                _ => 0,
            });
            i + 1
        }
        b'x' => {
            push_char(out, hex(i + 1, 2)?);
            i + 3
        }
        b'u' => {
            let mut ch = hex(i + 1, 4)?;
            let mut next = i + 5;
            // JSON surrogate pair.
            if (0xD800..0xDC00).contains(&ch) && s.get(next..next + 2) == Some(b"\\u") {
                let lo = hex(next + 2, 4)?;
                ch = 0x10000 + ((ch - 0xD800) << 10) + (lo.wrapping_sub(0xDC00) & 0x3FF);
                next += 6;
            }
            push_char(out, ch);
            next
        }
        b'U' => {
            push_char(out, hex(i + 1, 8)?);
            i + 9
        }
        other => {
            out.push(other);
            i + 1
        }
    };
    Some(next)
}

/// `text` with every backslash escape decoded wherever it stands (a JSON value, or one quoted
/// inside a prompt); a backslash that starts no escape stays.
pub fn unescape(text: &str) -> String {
    let s = text.as_bytes();
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        i += 1;
        if c != b'\\' {
            out.push(c);
            continue;
        }
        match escape(s, i, &mut out) {
            Some(next) => i = next,
            None => out.push(c),
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

fn push_char(out: &mut Vec<u8>, code: u32) {
    let ch = char::from_u32(code).unwrap_or('\u{FFFD}');
    let mut buf = [0u8; 4];
    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_pretty_printed_when_structured() {
        assert_eq!(pretty("'hello'"), "hello");
        let p = pretty("{'memory': 'likes tea', 'score': 1.0}");
        assert!(p.contains("\n  \"memory\": \"likes tea\""), "{p}");
        assert_eq!(pretty("plain text"), "plain text");
    }
    use serde_json::json;

    #[test]
    fn python_literals() {
        assert_eq!(
            to_json("{'a': None, 'b': [1, 2.5, True]}"),
            json!({"a": null, "b": [1, 2.5, true]})
        );
        assert_eq!(to_json("\"it's\""), json!("it's"));
        assert_eq!(to_json("'caf\\xe9 \\u263a'"), json!("café ☺"));
        assert_eq!(to_json("not a literal"), json!("not a literal"));
        assert_eq!(to_json("0.0"), json!(0.0));
    }

    #[test]
    fn unescape_decodes_escapes_anywhere_and_keeps_a_stray_backslash() {
        assert_eq!(
            unescape(r#"New facts: ["a piece called \"Finding Freedom\"\n\u00e9"]"#),
            "New facts: [\"a piece called \"Finding Freedom\"\n\u{e9}\"]"
        );
        assert_eq!(unescape(r"\ud83d\ude00 ok \u12"), "\u{1f600} ok \\u12");
        assert_eq!(unescape("no escapes"), "no escapes");
    }

    #[test]
    fn display_unquotes_only_strings() {
        assert_eq!(display("'hello'"), "hello");
        assert!(matches!(shown("'hello'"), Cow::Borrowed("hello")));
        assert_eq!(shown(r"'it\'s'"), "it's");
        assert_eq!(display("[1, 2]"), "[1, 2]");
        assert_eq!(display("'a' + 'b'"), "'a' + 'b'");
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let deep = "[".repeat(100_000);
        assert_eq!(to_json(&deep), Value::String(deep.clone()));
    }
}
