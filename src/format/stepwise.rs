//! [`load`](super::load) in bounded steps, for a caller that must stay responsive: the page runs
//! steps for a few milliseconds, lets the browser paint, and runs more. Pure: the caller owns
//! the clock; a step's size is counted in bytes of the file.
//!
//! A strict smartcomment load is split: the parse (one record at a time, with the quick reader
//! of `util::json_read`, serde_json where it gives up; the limits pre-pass only where the parser
//! does not enforce the limits itself, as in `load`), validation and
//! the bipartite index go about `budget` bytes a step, then failure detection one step per
//! rule. The same parser reads a whole file at once for [`load`](super::load). Any other
//! format, or a lenient load, is one step. The result is always the one `load` gives: at the
//! first sign of a problem the loader runs `load` itself on the whole file, so its errors read
//! the same.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::limits::{self, Scan};
use super::parts::Parts;
use super::{detect, load, validate, Format, FormatError, LoadOptions, Loaded};
use crate::model::{DetectSteps, FlowSteps, Trace};
use crate::util::json_read::{Cursor, Read};

/// A load under way. `B` holds the file's bytes (`Vec<u8>`, `Rc<[u8]>`, `&[u8]` …).
pub struct StepLoad<B> {
    bytes: B,
    opts: LoadOptions,
    phase: Phase,
}

enum Phase {
    Limits(Scan),
    Parse(Box<Parser<'static>>),
    Validate(Box<(Parts, validate::Steps)>),
    Index(Box<(Trace, FlowSteps)>),
    Cases(Box<(Trace, DetectSteps)>),
    Done,
}

/// What a step leads to.
enum Next {
    More(Phase),
    Ready(Box<Loaded>),
    /// Not split, or a problem: the plain load of the whole file says what.
    Whole,
}

/// Bytes of the file a validated record stands for, in a step's budget (a record is some
/// hundreds of bytes; validating one costs less than parsing it).
const RECORD_BYTES: usize = 128;

/// The byte order mark `load` skips.
const BOM: &[u8] = b"\xef\xbb\xbf";

impl<B: AsRef<[u8]>> StepLoad<B> {
    /// Starts loading `bytes` as [`load`](super::load) would with `opts`.
    pub fn new(bytes: B, opts: LoadOptions) -> Self {
        StepLoad {
            bytes,
            opts,
            phase: Phase::Limits(Scan::default()),
        }
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &B {
        &self.bytes
    }

    /// How far the load is, from 0 to 1.
    #[allow(clippy::cast_precision_loss)] // a fraction for a progress bar
    pub fn progress(&self) -> f64 {
        let len = self.bytes.as_ref().len().max(1) as f64;
        match &self.phase {
            Phase::Limits(s) => 0.1 * s.done() as f64 / len,
            Phase::Parse(p) => 0.1 + 0.7 * p.pos as f64 / len,
            Phase::Validate(_) => 0.8,
            Phase::Index(_) => 0.85,
            Phase::Cases(_) => 0.95,
            Phase::Done => 1.0,
        }
    }

    /// What the next step works on: `limits`, `parse`, `validate`, `index`, `failures`, or
    /// `done`.
    pub fn stage(&self) -> &'static str {
        match &self.phase {
            Phase::Limits(_) => "limits",
            Phase::Parse(_) => "parse",
            Phase::Validate(_) => "validate",
            Phase::Index(_) => "index",
            Phase::Cases(_) => "failures",
            Phase::Done => "done",
        }
    }

    /// Does about `budget` bytes' worth of work (at least one record or one stage). `None`
    /// while there is more to do, then once the result [`load`](super::load) gives; `None`
    /// again after that.
    pub fn step(&mut self, budget: usize) -> Option<Result<Loaded, FormatError>> {
        let phase = std::mem::replace(&mut self.phase, Phase::Done);
        if matches!(phase, Phase::Done) {
            return None;
        }
        match self.advance(phase, budget.max(1)) {
            Next::More(p) => {
                self.phase = p;
                None
            }
            Next::Ready(l) => Some(Ok(*l)),
            Next::Whole => Some(load(self.bytes.as_ref(), self.opts)),
        }
    }

    fn advance(&self, phase: Phase, budget: usize) -> Next {
        let all = self.bytes.as_ref();
        let bytes = all.strip_prefix(BOM).unwrap_or(all);
        match phase {
            // As `load`: a strict smartcomment file needs no pre-pass when its parser enforces
            // the limits (nesting itself, string lengths on the records read).
            Phase::Limits(scan)
                if scan.done() == 0
                    && !self.opts.lenient
                    && limits::parser_enforces(&self.opts.limits)
                    && limits::check_size(all, &self.opts.limits).is_ok()
                    && self.opts.format.map_or_else(|| detect(bytes), Ok).ok()
                        == Some(Format::Smartcomment) =>
            {
                Next::More(Phase::Parse(Box::new(Parser {
                    pos: all.len() - bytes.len(),
                    check_strings: true,
                    ..Parser::default()
                })))
            }
            Phase::Limits(mut scan) => match scan.step(all, &self.opts.limits, budget) {
                Ok(false) => Next::More(Phase::Limits(scan)),
                // Only a strict smartcomment load is split.
                Ok(true) if self.opts.lenient => Next::Whole,
                Ok(true) => match self.opts.format.map_or_else(|| detect(bytes), Ok) {
                    Ok(Format::Smartcomment) => Next::More(Phase::Parse(Box::new(Parser {
                        pos: all.len() - bytes.len(),
                        ..Parser::default()
                    }))),
                    _ => Next::Whole,
                },
                Err(_) => Next::Whole,
            },
            Phase::Parse(mut p) => match p.step(all, budget) {
                Ok(false) => Next::More(Phase::Parse(p)),
                Ok(true) => p.finish().map_or(Next::Whole, |(parts, check_strings)| {
                    if check_strings && limits::check_strings(&parts, &self.opts.limits).is_err() {
                        return Next::Whole;
                    }
                    let steps = validate::Steps::new(&parts);
                    Next::More(Phase::Validate(Box::new((parts, steps))))
                }),
                Err(Bad) => Next::Whole,
            },
            Phase::Validate(mut v) => {
                let (parts, steps) = &mut *v;
                match steps.step(parts, budget / RECORD_BYTES) {
                    Ok(false) => Next::More(Phase::Validate(v)),
                    Ok(true) => {
                        let mut trace = v.0.into_trace();
                        trace.judge_threshold = self.opts.judge_threshold;
                        Next::More(Phase::Index(Box::new((trace, FlowSteps::default()))))
                    }
                    Err(validate::Refused) => Next::Whole,
                }
            }
            Phase::Index(mut x) => match x.1.step(&x.0, budget / RECORD_BYTES) {
                Ok(false) => Next::More(Phase::Index(x)),
                Ok(true) => {
                    let (mut t, steps) = *x;
                    match steps.finish(&t) {
                        Ok(flow) => {
                            t.flow = flow;
                            Next::More(Phase::Cases(Box::new((t, DetectSteps::default()))))
                        }
                        Err(_) => Next::Whole,
                    }
                }
                Err(_) => Next::Whole,
            },
            Phase::Cases(mut c) => {
                if !c.1.step(&c.0, &[]) {
                    return Next::More(Phase::Cases(c));
                }
                let (mut trace, steps) = *c;
                match steps.finish(&trace, &[], &[]) {
                    Ok(d) => {
                        trace.cases = d.cases;
                        Next::Ready(Box::new(Loaded {
                            trace,
                            format: Format::Smartcomment,
                            problems: Vec::new(),
                        }))
                    }
                    Err(_) => Next::Whole,
                }
            }
            Phase::Done => Next::Whole,
        }
    }
}

/// Bytes of the file a step's quick reader sees past its budget, for the record it ends in.
const WINDOW_MARGIN: usize = 64 * 1024;

/// Something the split parse does not take: the plain load says what.
#[derive(Debug)]
struct Bad;

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
struct Parser<'a> {
    pos: usize,
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
    check_strings: bool,
}

impl Parser<'_> {
    /// Parses on for about `budget` bytes; true when the top-level object is closed and only
    /// whitespace follows.
    fn step(&mut self, b: &[u8], budget: usize) -> Result<bool, Bad> {
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
    fn finish(self) -> Result<(Parts, bool), Bad> {
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
/// [`smartcomment::parse`]: super::smartcomment::parse
pub(super) fn parse_quick(bytes: &[u8]) -> Option<(Parts, usize)> {
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
