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

use super::limits::{self, Scan};
use super::parts::Parts;
use super::{detect, load_with_limits, validate, Format, FormatError, Limits, LoadOptions, Loaded};
use crate::model::{DetectSteps, FlowSteps, Trace};

mod parser;

pub(super) use parser::parse_quick;
use parser::{Bad, Parser};

/// A load under way. `B` holds the file's bytes (`Vec<u8>`, `Rc<[u8]>`, `&[u8]` …).
pub struct StepLoad<B> {
    bytes: B,
    opts: LoadOptions,
    limits: Limits,
    phase: Phase,
    /// All of the file is in `bytes` (false while it is read: [`StepLoad::reading`]).
    complete: bool,
}

enum Phase {
    Limits(Scan),
    Parse(Box<Parser<'static>>),
    Validate(Box<(Parts, validate::Steps)>),
    Index(Box<(Trace, FlowSteps)>),
    Cases(Box<(Trace, DetectSteps)>),
    /// The parse of a file still being read stopped short: the whole file decides, once read.
    Deferred,
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

/// While the file is read, the parse stays this far behind the bytes read so far: a record
/// that starts before it ends before the bytes do (a longer one defers the parse to the end).
const AHEAD: usize = 4 * 1024 * 1024;

/// Bytes read before the format is looked at (the head `detect` reads).
const HEAD: usize = 64 * 1024;

impl StepLoad<Vec<u8>> {
    /// Starts loading a file that is still being read (`size`: its length, if known): add what
    /// is read with [`Self::push`], then say it is all there with [`Self::end`]. Until then a
    /// step parses what is there (a strict smartcomment file), or waits; the result is the one
    /// [`load`](super::load) gives for the whole file.
    pub fn reading(size: usize, opts: LoadOptions) -> Self {
        StepLoad {
            complete: false,
            ..StepLoad::new(Vec::with_capacity(size), opts)
        }
    }

    /// Adds the next bytes of the file.
    pub fn push(&mut self, more: &[u8]) {
        if !self.complete {
            self.bytes.extend_from_slice(more);
        }
    }

    /// Adds the next `n` bytes of the file, written into place by `fill`.
    pub fn push_with(&mut self, n: usize, fill: impl FnOnce(&mut [u8])) {
        if !self.complete {
            let at = self.bytes.len();
            self.bytes.resize(at + n, 0);
            fill(&mut self.bytes[at..]);
        }
    }

    /// All of the file has been pushed.
    pub fn end(&mut self) {
        self.complete = true;
    }

    /// The file's bytes, once the load is done with them.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

impl<B: AsRef<[u8]>> StepLoad<B> {
    /// Starts loading `bytes` as [`load`](super::load) would with `opts`.
    pub fn new(bytes: B, opts: LoadOptions) -> Self {
        StepLoad {
            bytes,
            opts,
            limits: Limits::default(),
            phase: Phase::Limits(Scan::default()),
            complete: true,
        }
    }

    /// True while nothing can be done until more of the file is pushed ([`StepLoad::reading`]).
    pub fn waiting(&self) -> bool {
        let len = self.bytes.as_ref().len();
        !self.complete
            && match &self.phase {
                Phase::Limits(scan) => scan.done() != 0 || self.fast_parse().is_none(),
                Phase::Parse(p) => p.pos.saturating_add(AHEAD) >= len,
                _ => true,
            }
    }

    /// The parse, with the limits left to the parser, when `load` would leave out the pre-pass:
    /// a strict smartcomment file whose parser enforces the limits (nesting itself, string
    /// lengths on the records read).
    fn fast_parse(&self) -> Option<Phase> {
        let all = self.bytes.as_ref();
        let bytes = all.strip_prefix(BOM).unwrap_or(all);
        let fast = (self.complete || all.len() >= HEAD)
            && !self.opts.lenient
            && limits::parser_enforces(&self.limits)
            && limits::check_size(all, &self.limits).is_ok()
            && self.opts.format.map_or_else(|| detect(bytes), Ok).ok()
                == Some(Format::Smartcomment);
        fast.then(|| Phase::Parse(Box::new(Parser::at(all.len() - bytes.len(), true))))
    }

    /// A step while the file is read: parses what is there, [`AHEAD`] short of its end.
    fn step_partial(&mut self, budget: usize) {
        let len = self.bytes.as_ref().len();
        let phase = std::mem::replace(&mut self.phase, Phase::Done);
        self.phase = match phase {
            Phase::Limits(scan) if scan.done() == 0 => {
                self.fast_parse().unwrap_or(Phase::Limits(scan))
            }
            Phase::Parse(mut p) if p.pos.saturating_add(AHEAD) < len => {
                let cap = len - AHEAD - p.pos;
                match p.step(self.bytes.as_ref(), budget.min(cap)) {
                    Ok(false) => Phase::Parse(p),
                    // Ended, or stopped on what may be cut off: the whole file decides.
                    _ => Phase::Deferred,
                }
            }
            other => other,
        };
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
            Phase::Deferred => 0.1,
            Phase::Done => 1.0,
        }
    }

    /// What the next step works on: `limits`, `parse`, `validate`, `index`, `failures`, or
    /// `done`.
    pub fn stage(&self) -> &'static str {
        match &self.phase {
            Phase::Limits(_) => "limits",
            Phase::Parse(_) | Phase::Deferred => "parse",
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
        if !self.complete {
            self.step_partial(budget.max(1));
            return None;
        }
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
            Next::Whole => Some(load_with_limits(
                self.bytes.as_ref(),
                self.opts,
                &self.limits,
            )),
        }
    }

    fn advance(&self, phase: Phase, budget: usize) -> Next {
        let all = self.bytes.as_ref();
        let bytes = all.strip_prefix(BOM).unwrap_or(all);
        match phase {
            // As `load`: no pre-pass when the parser enforces the limits.
            Phase::Limits(scan) if scan.done() == 0 && self.fast_parse().is_some() => {
                self.fast_parse().map_or(Next::Whole, Next::More)
            }
            Phase::Limits(mut scan) => match scan.step(all, &self.limits, budget) {
                Ok(false) => Next::More(Phase::Limits(scan)),
                // Only a strict smartcomment load is split.
                Ok(true) if self.opts.lenient => Next::Whole,
                Ok(true) => match self.opts.format.map_or_else(|| detect(bytes), Ok) {
                    Ok(Format::Smartcomment) => Next::More(Phase::Parse(Box::new(Parser::at(
                        all.len() - bytes.len(),
                        false,
                    )))),
                    _ => Next::Whole,
                },
                Err(_) => Next::Whole,
            },
            Phase::Parse(mut p) => match p.step(all, budget) {
                Ok(false) => Next::More(Phase::Parse(p)),
                Ok(true) => p.finish().map_or(Next::Whole, |(parts, check_strings)| {
                    if check_strings && limits::check_strings(&parts, &self.limits).is_err() {
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
            Phase::Deferred | Phase::Done => Next::Whole,
        }
    }
}
