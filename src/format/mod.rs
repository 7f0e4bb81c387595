//! Reading and writing trace files. The format is detected from the content; each reader
//! turns its file into records, [`validate`] checks them, and [`crate::model::Trace`] indexes them.

mod body;
mod buffered;
pub mod bundle;
pub mod conventions;
mod detect;
mod error;
mod inference;
pub mod langfuse;
pub mod limits;
pub mod obfuscate;
pub mod otlp;
mod otlp_agents;
pub mod otlp_join;
pub mod otlp_logs;
mod otlp_messages;
pub mod otlp_proto;
pub mod otlp_value;
mod parts;
mod reshape;
pub mod sidecar;
mod size;
pub mod smartcomment;
mod span_graph;
pub mod spans;
pub mod stepwise;
pub mod synth;
pub mod time;
mod turns;
mod validate;

pub use body::Encoding;
pub use conventions::{conventions, Conventions};
pub use error::{FormatError, FormatErrorKind, LoadOption};
pub use limits::Limits;
pub use validate::validate;

use serde::{Deserialize, Serialize};

use crate::model::{FailRule, GraphError, Mark, Trace};

/// The file formats memtrace reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// smartcomment `ExecNetwork` JSON; MemTraceBench files are this plus `data.annotations`.
    Smartcomment,
    /// OpenTelemetry OTLP JSON or JSON Lines (`gen_ai.*` and `OpenInference` attributes).
    Otlp,
    /// A Langfuse trace export (trace + observations + scores).
    Langfuse,
}

impl Format {
    /// The name used on the command line and in summaries.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Smartcomment => "smartcomment",
            Format::Otlp => "otlp",
            Format::Langfuse => "langfuse",
        }
    }

    /// Parses a `--format` value.
    ///
    /// # Errors
    /// The list of accepted names.
    pub fn parse(name: &str) -> Result<Format, String> {
        match name {
            "smartcomment" | "memtracebench" => Ok(Format::Smartcomment),
            "otlp" | "otel" | "opentelemetry" | "openinference" => Ok(Format::Otlp),
            "langfuse" => Ok(Format::Langfuse),
            other => Err(format!(
                "unknown format {other:?}; expected smartcomment, otlp or langfuse"
            )),
        }
    }
}

/// How strictly to read, how large a file may be, and how failures are found.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LoadOptions {
    /// Use this format instead of detecting it.
    pub format: Option<Format>,
    /// Keep what is valid and report the rest as problems instead of failing.
    pub lenient: bool,
    /// A graded judge score below this fails the question (`None`: 0.5); see
    /// `docs/failures.md`.
    pub judge_threshold: Option<f64>,
    /// The largest file (the setting a user raises), the deepest nesting and the longest
    /// string read; a file over them is refused before it is parsed.
    pub limits: Limits,
}

impl LoadOptions {
    /// The default options with the largest file set to `max_file_bytes`.
    pub fn with_max_file_bytes(max_file_bytes: u64) -> Self {
        LoadOptions {
            limits: Limits::with_max_file_bytes(max_file_bytes),
            ..LoadOptions::default()
        }
    }
}

/// A loaded trace with the format it was read as and, in lenient mode, what was dropped.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub trace: Trace,
    pub format: Format,
    pub problems: Vec<FormatError>,
}

/// The file's bytes decompressed when it is gzip or zstd (a `.gz` or `.zst` trace, bundle or
/// annotation file), else as they are; at most `max_bytes` once decompressed (a host's
/// [`Limits::max_file_bytes`]).
///
/// # Errors
/// A compressed body that does not decompress, or decompresses past the limit.
pub fn decompressed(
    bytes: &[u8],
    max_bytes: u64,
) -> Result<std::borrow::Cow<'_, [u8]>, FormatError> {
    body::decompressed(bytes, max_bytes)
}

/// The first `n` bytes of a file, decompressed when it is gzip or zstd (see [`body::head`]).
pub fn head(bytes: &[u8], n: usize) -> std::borrow::Cow<'_, [u8]> {
    body::head(bytes, n)
}

/// A file's name without its `.gz` / `.zst` / `.zstd` ending (any case): the name it is shown
/// and kept under once [`decompressed`].
pub fn plain_name(name: &str) -> &str {
    [".gz", ".zst", ".zstd"]
        .iter()
        .find_map(|end| {
            let cut = name.len().checked_sub(end.len())?;
            let tail = name.get(cut..)?;
            (tail.eq_ignore_ascii_case(end) && cut > 0).then(|| &name[..cut])
        })
        .unwrap_or(name)
}

/// Detects the format from the first bytes of the content.
///
/// # Errors
/// [`FormatError::Unknown`] when nothing matches.
pub fn detect(bytes: &[u8]) -> Result<Format, FormatError> {
    let (body, _) = body::decode(bytes, limits::MAX_FILE_BYTES)?;
    let bytes = &body[..];
    let head = &bytes[..bytes.len().min(64 * 1024)];
    let head = String::from_utf8_lossy(head);
    let trimmed = head.trim_start_matches('\u{feff}').trim_start();
    if trimmed.is_empty() {
        return Err(FormatError::Unknown {
            reason: "the file is empty".into(),
        });
    }
    if !trimmed.starts_with('{') && !trimmed.starts_with('[') {
        return Err(FormatError::Unknown {
            reason: "it does not start with `{` or `[`, so it is not JSON, and it is not an \
                     OTLP protobuf request (gzip and zstd bodies are read too)"
                .into(),
        });
    }
    if let Some(f) = detect::by_keys(bytes) {
        return Ok(f);
    }
    Err(FormatError::Unknown {
        reason: "it is JSON, but has none of the keys of a known trace format".into(),
    })
}

/// The trace of a strict smartcomment file with nothing wrong in it, or `None`: the records
/// checked once each ([`validate::Steps`]: timestamps, sessions, edge ids), leaving duplicate and
/// dangling ids to the index and the annotations to failure detection, which refuse them as
/// well, and then [`validate`] names the first problem in its own order. Saves the id maps
/// `validate` builds and the index builds again.
fn strict_smartcomment(mut parts: smartcomment::Parts, threshold: Option<f64>) -> Option<Trace> {
    let mut steps = validate::Steps::new(&parts);
    if !matches!(steps.step(&mut parts, usize::MAX), Ok(true)) {
        return None;
    }
    let mut trace = parts.into_trace();
    trace.judge_threshold = threshold;
    trace.index_flow().ok()?;
    Some(trace)
}

/// A Phoenix span export as OTLP JSON, a Langfuse flat observation list as Langfuse traces
/// (`reshape`), or `None` for any other content.
fn reshaped(bytes: &[u8]) -> Result<Option<Vec<u8>>, FormatError> {
    let Some(shape) = detect::shape(bytes) else {
        return Ok(None);
    };
    let doc: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| FormatError::Json {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let out = match shape {
        detect::Shape::Phoenix => reshape::phoenix_to_otlp(&doc),
        detect::Shape::OtlpSpanList => reshape::otlp_span_list(&doc),
        detect::Shape::LangfuseFlat => reshape::langfuse_flat_to_traces(&doc),
    };
    Ok(out.and_then(|v| serde_json::to_vec(&v).ok()))
}

/// Reads a trace from bytes.
///
/// # Errors
/// The first problem found (strict mode), or one that leaves nothing to load (lenient mode); a
/// file over `opts.limits` gives [`FormatError::TooLarge`] or a located [`FormatError::Field`]
/// before any parsing.
pub fn load(bytes: &[u8], opts: LoadOptions) -> Result<Loaded, FormatError> {
    Ok(load_indexed(bytes, opts)?.find_cases())
}

/// A trace read, checked and indexed whose failed questions are not looked for yet: what a
/// host that answers many queries holds until one needs them ([`Indexed::find_cases`]).
#[derive(Debug, Clone)]
pub struct Indexed(Loaded);

impl Indexed {
    /// The format the trace was read as.
    pub fn format(&self) -> Format {
        self.0.format
    }

    /// What lenient mode dropped.
    pub fn problems(&self) -> &[FormatError] {
        &self.0.problems
    }

    /// The loaded trace with its failure cases (no user rules): what [`load`] gives.
    pub fn find_cases(self) -> Loaded {
        self.find_with(&[], &[])
    }

    /// The loaded trace with the failure cases these user rules and marks find.
    pub fn find_with(mut self, rules: &[FailRule], marks: &[Mark]) -> Loaded {
        let t = &mut self.0.trace;
        // Cannot fail: the only refusal of failure detection, a bad annotation, was checked
        // when the index was built (`Trace::index_flow`).
        t.cases = t.detect(rules, marks).map(|d| d.cases).unwrap_or_default();
        self.0
    }
}

/// [`load`] up to the failure cases: the same checks and errors, a trace whose `cases` are not
/// found yet.
///
/// # Errors
/// As [`load`].
pub fn load_indexed(bytes: &[u8], opts: LoadOptions) -> Result<Indexed, FormatError> {
    let limits = &opts.limits;
    limits::check_size(bytes, limits)?;
    let (body, _) = body::decode(bytes, limits.max_file_bytes)?;
    let bytes = &body[..];
    let format = match opts.format {
        Some(f) => f,
        None => detect(bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes))?,
    };
    let fast = format == Format::Smartcomment && limits::parser_enforces(limits);
    if !fast {
        limits::check(bytes, limits)?;
    }
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let smartcomment = || -> Result<smartcomment::Parts, FormatError> {
        let (parts, longest) = smartcomment::parse_bounded(bytes)?;
        let short = longest.is_some_and(|n| n as u64 <= limits.max_string_bytes);
        if fast && !short {
            limits::check_strings(&parts, limits)?;
        }
        Ok(parts)
    };
    let (mut parts, mut problems) = match format {
        Format::Smartcomment if !opts.lenient => {
            match strict_smartcomment(smartcomment()?, opts.judge_threshold) {
                Some(trace) => {
                    return Ok(Indexed(Loaded {
                        trace,
                        format,
                        problems: Vec::new(),
                    }))
                }
                // Something is wrong: the full checks below say what, in their order.
                None => (smartcomment()?, Vec::new()),
            }
        }
        Format::Smartcomment => (smartcomment()?, Vec::new()),
        Format::Otlp | Format::Langfuse => {
            let reshaped = reshaped(bytes)?;
            let bytes = reshaped.as_deref().unwrap_or(bytes);
            let imported = if format == Format::Otlp {
                otlp::parse(bytes, opts.lenient)?
            } else {
                langfuse::parse(bytes, opts.lenient)?
            };
            span_graph::build(imported, opts.lenient)?
        }
    };
    problems.extend(validate(&mut parts, opts.lenient)?);
    let mut trace = parts.into_trace();
    trace.judge_threshold = opts.judge_threshold;
    loop {
        match trace.index_flow() {
            Ok(()) => break,
            Err(GraphError::Cycle { path, id })
                if opts.lenient && trace.edges.iter().any(|e| e.target_full_node_id == id) =>
            {
                // Cut the cycle at this variable: drop the edges that produce it.
                trace.edges.retain(|e| e.target_full_node_id != id);
                problems.push(FormatError::Cycle { path, id });
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Indexed(Loaded {
        trace,
        format,
        problems,
    }))
}
