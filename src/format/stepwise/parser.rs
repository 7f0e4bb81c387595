//! The smartcomment reader of [`super::StepLoad`]: one value at a time, a step's text at a time.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::format::parts::Parts;
use crate::util::json_read::{Cursor, Read};

/// Bytes of the file a step's quick reader sees past its budget, for the record it ends in.
const WINDOW_MARGIN: usize = 64 * 1024;

/// Something the split parse does not take: the plain load says what.
#[derive(Debug)]
pub(super) struct Bad;

/// Where the parse is in the smartcomment object.
#[derive(Debug, Clone, Copy, Default)]
enum At {
    /// Before the top-level `{`.
    #[default]
    Open,
    /// At a top-level key (`first`: right after `{`).
    TopKey { first: bool },
    /// At a key of `data`.
    DataKey { first: bool },
    /// In one of the record lists of `data`.
    Items { list: List, first: bool },
    /// After the top-level `}`.
    Close,
}

#[derive(Debug, Clone, Copy)]
enum List {
    Nodes,
    Edges,
    Ops,
}

impl List {
    fn key(self) -> &'static str {
        match self {
            List::Nodes => "nodes",
            List::Edges => "edges",
            List::Ops => "operations",
        }
    }
}

/// smartcomment's reader (`smartcomment::parse`) one value at a time: the same keys in the
/// same order give the same [`Parts`].
#[derive(Default)]
pub(super) struct Parser<'a> {
    pub(super) pos: usize,
    at: At,
    parts: Parts,
    meta: Map<String, Value>,
    saw_data: bool,
    /// A whole file read at once, as text: only the quick reader, so that serde_json's own
    /// limits (nesting) hold for the file as a whole; anything it gives up on gives up the parse.
    whole: Option<&'a str>,
    /// In a whole-file read: no string read is longer than this (see [`Cursor::longest`]).
    longest: usize,
    /// The limits pre-pass was left out: the records' strings are checked once read.
    pub(super) check_strings: bool,
}

impl Parser<'_> {
    /// A parser starting at byte `pos` of the file; `check_strings` when the limits pre-pass
    /// was left out.
    pub(super) fn at(pos: usize, check_strings: bool) -> Self {
        Parser {
            pos,
            check_strings,
            ..Parser::default()
        }
    }

    /// Parses on for about `budget` bytes; true when the top-level object is closed and only
    /// whitespace follows.
    pub(super) fn step(&mut self, b: &[u8], budget: usize) -> Result<bool, Bad> {
        let stop = self.pos.saturating_add(budget);
        let window = self.window(b, budget);
        loop {
            if let At::Close = self.at {
                self.ws(b);
                return if self.pos == b.len() {
                    Ok(true)
                } else {
                    Err(Bad)
                };
            }
            if self.pos >= stop {
                return Ok(false);
            }
            self.at = match self.at {
                At::Open => {
                    self.eat(b, b'{')?;
                    At::TopKey { first: true }
                }
                At::TopKey { first } => {
                    if first && self.peek(b) == Some(b'}') {
                        self.pos += 1;
                        At::Close
                    } else {
                        let key: String = self.key(b)?;
                        if key == "data" {
                            self.saw_data = true;
                            self.eat(b, b'{')?;
                            At::DataKey { first: true }
                        } else {
                            let v: Value = self.value(b)?;
                            self.meta.insert(key, v);
                            self.after_top(b)?
                        }
                    }
                }
                At::DataKey { first } => {
                    if first && self.peek(b) == Some(b'}') {
                        self.pos += 1;
                        self.after_top(b)?
                    } else {
                        self.data_value(b)?
                    }
                }
                At::Items { list, first } => {
                    if first && self.peek(b) == Some(b']') {
                        self.pos += 1;
                        self.parts.data_order.push(list.key().to_owned());
                        self.after_data(b)?
                    } else {
                        match list {
                            List::Nodes => {
                                let v = self.record(b, window)?;
                                self.parts.nodes.push(v);
                            }
                            List::Edges => {
                                let v = self.record(b, window)?;
                                self.parts.edges.push(v);
                            }
                            List::Ops => {
                                let v = self.record(b, window)?;
                                self.parts.ops.push(v);
                            }
                        }
                        match self.peek(b) {
                            Some(b',') => {
                                self.pos += 1;
                                At::Items { list, first: false }
                            }
                            Some(b']') => {
                                self.pos += 1;
                                self.parts.data_order.push(list.key().to_owned());
                                self.after_data(b)?
                            }
                            _ => return Err(Bad),
                        }
                    }
                }
                At::Close => At::Close,
            };
        }
    }

    /// One key of `data` and its value (a record list is only opened).
    fn data_value(&mut self, b: &[u8]) -> Result<At, Bad> {
        let key = self.key(b)?;
        let list = match key.as_str() {
            "nodes" => Some(List::Nodes),
            "edges" => Some(List::Edges),
            "operations" => Some(List::Ops),
            _ => None,
        };
        if let Some(list) = list {
            // A key seen again replaces the list, as in the whole-file reader.
            let p = &mut self.parts;
            match list {
                List::Nodes => p.nodes.clear(),
                List::Edges => p.edges.clear(),
                List::Ops => p.ops.clear(),
            }
            self.eat(b, b'[')?;
            return Ok(At::Items { list, first: true });
        }
        match key.as_str() {
            "sessions" => self.parts.sessions = self.value(b)?,
            "annotations" => self.parts.annotations = Some(self.value(b)?),
            _ => {
                let v: Value = self.value(b)?;
                self.parts.data_extra.insert(key.clone(), v);
            }
        }
        self.parts.data_order.push(key);
        self.after_data(b)
    }

    /// After a value in `data`: the next key, or the end of `data`.
    fn after_data(&mut self, b: &[u8]) -> Result<At, Bad> {
        if self.comma(b)? {
            Ok(At::DataKey { first: false })
        } else {
            self.after_top(b)
        }
    }

    /// After a top-level value: the next key, or the end of the file's object.
    fn after_top(&mut self, b: &[u8]) -> Result<At, Bad> {
        if self.comma(b)? {
            Ok(At::TopKey { first: false })
        } else {
            Ok(At::Close)
        }
    }

    /// After an object member: consumes `,` (true) or the object's `}` (false).
    fn comma(&mut self, b: &[u8]) -> Result<bool, Bad> {
        let more = match self.peek(b) {
            Some(b',') => true,
            Some(b'}') => false,
            _ => return Err(Bad),
        };
        self.pos += 1;
        Ok(more)
    }

    /// A key and its `:`.
    fn key(&mut self, b: &[u8]) -> Result<String, Bad> {
        if let Some(text) = self.whole {
            let mut c = Cursor::new(text, self.pos);
            let k = c.key().ok_or(Bad)?;
            self.pos = c.pos;
            self.longest = self.longest.max(c.longest);
            return Ok(k.to_owned());
        }
        let k = value(b, &mut self.pos)?;
        self.eat(b, b':')?;
        Ok(k)
    }

    /// The text of the file from `pos` on for a step of `budget` bytes and a record past it
    /// (up to where it stops being UTF-8), with its offset in the file; none in a whole-file read.
    fn window<'b>(&self, b: &'b [u8], budget: usize) -> Option<(&'b str, usize)> {
        if self.whole.is_some() {
            return None;
        }
        let end = b.len().min(
            self.pos
                .saturating_add(budget)
                .saturating_add(WINDOW_MARGIN),
        );
        let bytes = b.get(self.pos..end)?;
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => text,
            // The window may end inside a character: the text before it.
            Err(e) => std::str::from_utf8(bytes.get(..e.valid_up_to())?).ok()?,
        };
        Some((text, self.pos))
    }

    /// A record: the quick reader's over the step's `window` when it reads it there (a record
    /// that runs past the window, or that it gives up on, is serde_json's), else [`Self::value`].
    fn record<T: DeserializeOwned + Read>(
        &mut self,
        b: &[u8],
        window: Option<(&str, usize)>,
    ) -> Result<T, Bad> {
        if let Some((text, at)) = window.filter(|&(_, at)| at <= self.pos) {
            let mut c = Cursor::new(text, self.pos - at);
            if let Some(v) = T::read(&mut c) {
                self.pos = at + c.pos;
                return Ok(v);
            }
        }
        self.value(b)
    }

    /// The value at `pos`: read by the quick reader (a whole file), else by serde_json.
    fn value<T: DeserializeOwned + Read>(&mut self, b: &[u8]) -> Result<T, Bad> {
        if let Some(text) = self.whole {
            let mut c = Cursor::new(text, self.pos);
            let v = T::read(&mut c).ok_or(Bad)?;
            self.pos = c.pos;
            self.longest = self.longest.max(c.longest);
            return Ok(v);
        }
        value(b, &mut self.pos)
    }

    fn ws(&mut self, b: &[u8]) {
        while matches!(b.get(self.pos), Some(b' ' | b'\n' | b'\t' | b'\r')) {
            self.pos += 1;
        }
    }

    fn peek(&mut self, b: &[u8]) -> Option<u8> {
        self.ws(b);
        b.get(self.pos).copied()
    }

    fn eat(&mut self, b: &[u8], c: u8) -> Result<(), Bad> {
        if self.peek(b) == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(Bad)
        }
    }

    /// The parts, once the object is closed: the top-level keys become the graph's meta.
    /// With whether the records' strings are still to be checked against the limits.
    pub(super) fn finish(self) -> Result<(Parts, bool), Bad> {
        if !self.saw_data {
            return Err(Bad);
        }
        let mut parts = self.parts;
        parts.meta = serde_json::from_value(Value::Object(self.meta)).map_err(|_| Bad)?;
        Ok((parts, self.check_strings))
    }
}

/// The records of a smartcomment file read by the quick reader, or `None` where it gives up
/// (a file it does not know the shape of, or a bad one): [`smartcomment::parse`] then reads it
/// with serde_json, which says what is wrong. With the records, a length no string in the file
/// (key or value, escapes decoded) exceeds.
///
/// [`smartcomment::parse`]: crate::format::smartcomment::parse
pub(crate) fn parse_quick(bytes: &[u8]) -> Option<(Parts, usize)> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut p = Parser {
        whole: Some(text),
        ..Parser::default()
    };
    match p.step(bytes, usize::MAX) {
        Ok(true) => {
            let longest = p.longest;
            Some((p.finish().ok()?.0, longest))
        }
        _ => None,
    }
}

/// The JSON value at `pos`, moving `pos` past it.
fn value<T: DeserializeOwned>(b: &[u8], pos: &mut usize) -> Result<T, Bad> {
    let rest = b.get(*pos..).ok_or(Bad)?;
    let mut s = serde_json::Deserializer::from_slice(rest).into_iter::<T>();
    let v = s.next().ok_or(Bad)?.map_err(|_| Bad)?;
    *pos += s.byte_offset();
    Ok(v)
}
