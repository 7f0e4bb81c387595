//! A quick reader for JSON in the shape trace files hold: records of strings, integers, `null`
//! and small objects. It reads what it knows and gives up (`None`) on anything else; the caller
//! then reads the same bytes with serde_json, which accepts or refuses them and says why.
//! Whatever it accepts, serde_json reads to the same value.
//!
//! Faster than serde_json where the time goes on wasm32: the text is checked for UTF-8 once,
//! not string by string; strings are scanned eight bytes at a time (serde_json's word is four
//! bytes there); a record's keys are compared with the one expected next.

use serde_json::{Map, Value};

/// Nesting a value read through serde_json may have before the reader gives up, so that a
/// record inside a file stays well under serde_json's own limit of 128 for the whole file.
const MAX_DEPTH: usize = 64;

/// A position in JSON text (valid UTF-8 checked once for all its strings).
pub(crate) struct Cursor<'a> {
    text: &'a str,
    b: &'a [u8],
    pub(crate) pos: usize,
    /// No string read so far (key or value, escapes decoded) is longer than this: the longest
    /// one's bytes as written, or the whole of a value serde_json read.
    pub(crate) longest: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(text: &'a str, pos: usize) -> Self {
        Cursor {
            text,
            b: text.as_bytes(),
            pos,
            longest: 0,
        }
    }

    /// The next byte that is not whitespace (not consumed).
    pub(crate) fn peek(&mut self) -> Option<u8> {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.b.get(self.pos) {
            self.pos += 1;
        }
        self.b.get(self.pos).copied()
    }

    /// Consumes `c` after any whitespace.
    pub(crate) fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.pos += 1)
    }

    /// After a member or item: `,` (true) or the `close` of its object or array (false).
    pub(crate) fn more(&mut self, close: u8) -> Option<bool> {
        let c = self.peek()?;
        self.pos += 1;
        match c {
            b',' => Some(true),
            c if c == close => Some(false),
            _ => None,
        }
    }

    /// An object key without escapes and its `:`.
    pub(crate) fn key(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let end = special(self.b, self.pos)?;
        if self.b[end] != b'"' {
            return None;
        }
        let key = self.text.get(self.pos..end)?;
        self.longest = self.longest.max(key.len());
        self.pos = end + 1;
        self.eat(b':')?;
        Some(key)
    }

    /// Consumes the key `key` and its `:` when it comes next (`Some(false)`, nothing consumed,
    /// when another key does).
    pub(crate) fn key_is(&mut self, key: &str) -> Option<bool> {
        self.peek()?;
        let n = key.len();
        let at = self.pos;
        let hit = self.b.get(at) == Some(&b'"')
            && self.b.get(at + 1..at + 1 + n) == Some(key.as_bytes())
            && self.b.get(at + 1 + n) == Some(&b'"');
        if hit {
            self.pos = at + n + 2;
            self.eat(b':')?;
        }
        Some(hit)
    }

    /// A string, its escapes decoded.
    pub(crate) fn string(&mut self) -> Option<String> {
        self.eat(b'"')?;
        let b = self.b;
        let first = self.pos;
        let mut start = first;
        let mut end = special(b, start)?;
        if b[end] == b'"' {
            self.pos = end + 1;
            self.longest = self.longest.max(end - first);
            return self.text.get(start..end).map(str::to_owned);
        }
        let mut out = String::with_capacity(end - start + 16);
        loop {
            out.push_str(self.text.get(start..end)?);
            match b[end] {
                b'"' => {
                    self.pos = end + 1;
                    self.longest = self.longest.max(end - first);
                    return Some(out);
                }
                b'\\' => start = escape(b, end + 1, &mut out)?,
                _ => return None, // a control character: serde_json refuses it
            }
            end = special(b, start)?;
        }
    }

    /// An integer as JSON writes it (no fraction, no exponent, no `-0`).
    pub(crate) fn int(&mut self) -> Option<i64> {
        let negative = self.peek()? == b'-';
        self.pos += usize::from(negative);
        let start = self.pos;
        let mut n: i64 = 0;
        while let Some(d @ b'0'..=b'9') = self.b.get(self.pos) {
            n = n.checked_mul(10)?.checked_add(i64::from(d - b'0'))?;
            self.pos += 1;
        }
        let digits = self.pos - start;
        let leading_zero = self.b.get(start) == Some(&b'0') && (digits > 1 || negative);
        if digits == 0 || leading_zero || matches!(self.b.get(self.pos), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        Some(if negative { -n } else { n })
    }

    /// Consumes `null` when it comes next.
    pub(crate) fn null(&mut self) -> bool {
        self.word(b"null")
    }

    fn word<const N: usize>(&mut self, w: &[u8; N]) -> bool {
        let hit = self.peek() == Some(w[0]) && self.b.get(self.pos..self.pos + N) == Some(w);
        if hit {
            self.pos += N;
        }
        hit
    }

    /// Any JSON value, through serde_json when it is not a short one.
    fn value(&mut self) -> Option<Value> {
        match self.peek()? {
            b'"' => return self.string().map(Value::String),
            b'n' if self.null() => return Some(Value::Null),
            b't' if self.word(b"true") => return Some(Value::Bool(true)),
            b'f' if self.word(b"false") => return Some(Value::Bool(false)),
            b'{' | b'[' => {
                let at = self.pos;
                self.pos += 1;
                match (self.b[at], self.peek()) {
                    (b'{', Some(b'}')) => {
                        self.pos += 1;
                        return Some(Value::Object(Map::new()));
                    }
                    (b'[', Some(b']')) => {
                        self.pos += 1;
                        return Some(Value::Array(Vec::new()));
                    }
                    _ => self.pos = at,
                }
            }
            _ => {}
        }
        let mut s = serde_json::Deserializer::from_slice(self.b.get(self.pos..)?).into_iter();
        let v = s.next()?.ok()?;
        self.pos += s.byte_offset();
        self.longest = self.longest.max(s.byte_offset());
        (depth(&v) <= MAX_DEPTH).then_some(v)
    }
}

/// How deeply arrays and objects nest in `v` (0 for a scalar).
fn depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(m) => 1 + m.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// The index of the first `"`, `\` or control character at or after `i`.
fn special(b: &[u8], mut i: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = b.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let x = u64::from_le_bytes(*chunk);
        let quote = x ^ (ONES * u64::from(b'"'));
        let slash = x ^ (ONES * u64::from(b'\\'));
        // A byte below n sets its high bit in (x - n) & !x. Bytes after the first such one may
        // be flagged falsely (the borrow), the first one is exact: it is the lowest bit set.
        let hit = ((quote.wrapping_sub(ONES) & !quote)
            | (slash.wrapping_sub(ONES) & !slash)
            | (x.wrapping_sub(ONES * 0x20) & !x))
            & HIGH;
        if hit != 0 {
            return Some(i + (hit.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    b.get(i..)?
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        .map(|p| i + p)
}

/// Decodes the JSON escape whose letter is at `b[i]` onto `out`: the index after it, or `None`
/// for one JSON does not have (or a lone surrogate, which serde_json refuses too).
fn escape(b: &[u8], i: usize, out: &mut String) -> Option<usize> {
    let c = match *b.get(i)? {
        c @ (b'"' | b'\\' | b'/') => char::from(c),
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let hi = hex4(b, i + 1)?;
            let (code, next) = match hi {
                0xD800..=0xDBFF if b.get(i + 5..i + 7) == Some(b"\\u") => {
                    let lo = hex4(b, i + 7)?;
                    if !(0xDC00..=0xDFFF).contains(&lo) {
                        return None;
                    }
                    (0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00), i + 11)
                }
                0xD800..=0xDFFF => return None,
                _ => (hi, i + 5),
            };
            out.push(char::from_u32(code)?);
            return Some(next);
        }
        _ => return None,
    };
    out.push(c);
    Some(i + 1)
}

fn hex4(b: &[u8], i: usize) -> Option<u32> {
    let digits = std::str::from_utf8(b.get(i..i + 4)?).ok()?;
    if !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

/// A value [`Cursor`] reads, or gives up on.
pub(crate) trait Read: Sized {
    fn read(c: &mut Cursor<'_>) -> Option<Self>;
}

impl Read for String {
    fn read(c: &mut Cursor<'_>) -> Option<Self> {
        c.string()
    }
}

impl Read for i64 {
    fn read(c: &mut Cursor<'_>) -> Option<Self> {
        c.int()
    }
}

impl Read for u32 {
    fn read(c: &mut Cursor<'_>) -> Option<Self> {
        c.int().and_then(|n| u32::try_from(n).ok())
    }
}

impl Read for bool {
    fn read(c: &mut Cursor<'_>) -> Option<Self> {
        if c.word(b"true") {
            Some(true)
        } else {
            c.word(b"false").then_some(false)
        }
    }
}

impl Read for Value {
    fn read(c: &mut Cursor<'_>) -> Option<Self> {
        c.value()
    }
}

impl<T: Read> Read for Option<T> {
    fn read(c: &mut Cursor<'_>) -> Option<Self> {
        if c.null() {
            Some(None)
        } else {
            T::read(c).map(Some)
        }
    }
}

impl<T: Read> Read for Vec<T> {
    fn read(c: &mut Cursor<'_>) -> Option<Self> {
        c.eat(b'[')?;
        let mut items = Vec::new();
        if c.peek()? == b']' {
            c.pos += 1;
            return Some(items);
        }
        loop {
            items.push(T::read(c)?);
            if !c.more(b']')? {
                return Some(items);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same<T: Read + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(json: &str) {
        let fast = T::read(&mut Cursor::new(json, 0));
        let serde = serde_json::from_str::<T>(json).ok();
        if let Some(v) = &fast {
            assert_eq!(Some(v), serde.as_ref(), "{json}");
        }
    }

    #[test]
    fn special_finds_the_first_special_byte() {
        // Every position in and past the eight-byte words, after bytes that borrow (0x20, 0x22,
        // 0x5c ± 1) and before a second special byte the word trick may flag falsely.
        for hit in [b'"', b'\\', 0x00, 0x1f] {
            for filler in [b'a', 0x20, 0x21, 0x23, 0x5b, 0x5d, 0xc3] {
                for at in 0..20 {
                    let mut b = vec![filler; 24];
                    b[at] = hit;
                    b[(at + 1).min(23)] = b'"';
                    assert_eq!(
                        special(&b, 0),
                        Some(at),
                        "{hit:#x} at {at} after {filler:#x}"
                    );
                }
            }
        }
        assert_eq!(special(b"abcdefghijk", 0), None);
    }

    #[test]
    fn reads_what_serde_reads_or_gives_up() {
        for s in [
            r#""plain""#,
            r#""a\"b\\c\/d\n\t\r\b\f""#,
            r#""\u00e9\ud83d\ude00 x""#,
            r#""\ud83d""#,
            r#""\udc00x""#,
            r#""\x41""#,
            "\"tab\tin\"",
            r#""é long enough to take the eight-byte scan path, twice over""#,
        ] {
            same::<String>(s);
            same::<Value>(s);
        }
        for n in [
            "0",
            "7",
            "-12",
            "-0",
            "01",
            "1.5",
            "1e3",
            "9223372036854775807",
            "9223372036854775808",
        ] {
            same::<i64>(n);
            same::<u32>(n);
            same::<Value>(n);
        }
        for v in [
            "null",
            "true",
            "false",
            "{}",
            "[ ]",
            r#"{"a": [1, {"b": null}]}"#,
            "[1,]",
        ] {
            same::<Value>(v);
            same::<Option<String>>(v);
        }
        same::<Vec<String>>(r#"[ "a" , "b\n" ]"#);
    }

    #[test]
    fn gives_up_on_what_it_does_not_know() {
        for s in [r#""\ud83d""#, r#""\x41""#, "\"tab\tin\"", "\"open"] {
            assert_eq!(String::read(&mut Cursor::new(s, 0)), None, "{s}");
        }
        for n in ["-0", "01", "1.5", "1e3", "9223372036854775808", "-"] {
            assert_eq!(i64::read(&mut Cursor::new(n, 0)), None, "{n}");
        }
        let deep = format!("{}{}", "[".repeat(70), "]".repeat(70));
        assert_eq!(Value::read(&mut Cursor::new(&deep, 0)), None);
    }

    #[test]
    fn reads_escapes_and_long_strings() {
        let s = r#""\u00e9\ud83d\ude00 and some more text after the escapes, \"quoted\"""#;
        let got = String::read(&mut Cursor::new(s, 0));
        assert_eq!(
            got.as_deref(),
            Some("é😀 and some more text after the escapes, \"quoted\"")
        );
    }
}
