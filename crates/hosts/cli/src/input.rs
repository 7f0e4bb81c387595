//! The traces a command works on: a trace file, or each trace of a project bundle the page saved
//! (with the role overrides, failure rules and marked questions the user set there); with
//! `--annotations FILE`, plus the ground truth of an annotation file the page exported.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context};
use memtrace::attribution::roles::OpRole;
use memtrace::format::{load, sidecar, Format, FormatError, Loaded};
use memtrace::model::{AnnotationRecord, Detection};
use memtrace::session::{self, Opened, Settings};
use memtrace::Trace;

use crate::rules::{ReadArgs, RuleArgs};

/// One trace to work on.
pub struct Input {
    /// The file, or `BUNDLE:NAME` for a trace from a bundle.
    pub name: String,
    pub trace: Trace,
    pub format: Format,
    /// How rules and marks found the failure cases (`None` when there were none: see
    /// [`Input::detection`]).
    detection: Option<Detection>,
    /// Role overrides saved with the trace in a bundle (`--role` flags come on top).
    pub roles: BTreeMap<String, OpRole>,
    /// The trace the page had on screen when it saved the bundle (true for a plain file).
    pub current: bool,
}

impl Input {
    /// How the failure cases were found (what was looked for when there are none). Without
    /// rules or marks, detection runs here, only for the commands that report it.
    ///
    /// # Errors
    /// As [`Trace::detect`].
    pub fn detection(&self) -> anyhow::Result<Cow<'_, Detection>> {
        Ok(match &self.detection {
            Some(d) => Cow::Borrowed(d),
            None => Cow::Owned(self.trace.detect(&[], &[])?),
        })
    }
}

/// Reads `path` (a trace in any readable format, or a bundle: sorted by
/// [`memtrace::session::open`]) into the traces it holds, with failure cases found by `rules`
/// and annotations merged from `rules.annotations`.
///
/// # Errors
/// An unreadable file, a trace or bundle that does not load, an annotation
/// file given as the trace, or an annotation file that fits none of the traces.
pub fn read(path: &Path, rules: &RuleArgs) -> anyhow::Result<Vec<Input>> {
    let options = rules.read.options();
    let max_bytes = options.limits.max_file_bytes;
    let mut bytes = bytes(path, max_bytes)?;
    if let Some(logs) = &rules.logs {
        bytes = with_logs(path, bytes, logs, max_bytes)?;
    }
    let records = match &rules.annotations {
        Some(file) => Some((file.as_path(), annotation_file(file)?)),
        None => None,
    };
    let shown = if path.as_os_str() == "-" {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    };
    let (files, settings) = match session::open(&shown, &bytes, options)? {
        Opened::Trace(loaded) => (vec![(String::new(), Ok(*loaded))], Settings::default()),
        Opened::Bundle {
            traces, settings, ..
        } => (
            traces.into_iter().map(|t| (t.name, t.loaded)).collect(),
            *settings,
        ),
        Opened::Annotations(_) => bail!(
            "{shown} is an annotation file, not a trace: pass the trace, and this file with \
             --annotations {shown}"
        ),
    };
    let (saved_rules, bad_rules) = settings.usable_rules(&shown);
    for e in bad_rules {
        eprintln!("warning: {e}; the rule is skipped (fix it on the page, or pass --failed-if)");
    }
    let mut out = Vec::with_capacity(files.len());
    for (file_name, loaded) in files {
        let name = if file_name.is_empty() {
            shown.clone()
        } else {
            format!("{shown}:{file_name}")
        };
        let loaded = loaded.with_context(|| name.clone())?;
        report_problems(&loaded, &name);
        let input = Input {
            trace: loaded.trace,
            format: loaded.format,
            detection: None,
            roles: settings.roles.get(&file_name).cloned().unwrap_or_default(),
            current: file_name.is_empty() || settings.current.as_deref() == Some(&file_name),
            name,
        };
        out.push((file_name, input));
    }
    // The annotations go to the trace whose questions they name, the current one first.
    if let Some((file, records)) = records {
        let current = out.iter().position(|(_, i)| i.current);
        let traces = out.iter().map(|(_, i)| &i.trace);
        let at =
            session::annotation_target(traces, current, &file.display().to_string(), &records)?;
        let input = &mut out[at].1;
        sidecar::merge(&mut input.trace, records)
            .with_context(|| format!("{} into {}", file.display(), input.name))?;
    }
    out.into_iter()
        .map(|(file_name, mut input)| {
            let marks = settings
                .marks
                .get(&file_name)
                .map_or(&[][..], Vec::as_slice);
            input.detection = rules.apply(&mut input.trace, &saved_rules, marks)?;
            Ok(input)
        })
        .collect()
}

/// The traces file's bytes with the log records of `logs` joined to the spans they name.
fn with_logs(path: &Path, traces: Vec<u8>, logs: &Path, max_bytes: u64) -> anyhow::Result<Vec<u8>> {
    let files = vec![
        (path.display().to_string(), traces),
        (logs.display().to_string(), bytes(logs, max_bytes)?),
    ];
    let mut joined = memtrace::format::otlp_join::join_logs_to_traces(files);
    if joined.len() != 1 {
        bail!(
            "{} holds no OTLP log records of {}'s spans: pass the logs file exported with \
             that traces file (the same run), or leave out --logs",
            logs.display(),
            path.display()
        );
    }
    Ok(joined.remove(0).1)
}

/// The bytes of `path`; `-` is standard input. A gzip or zstd file (a `.gz` trace or bundle) is
/// decompressed. A file over `max_bytes` is refused before it is read (standard input once that
/// much is read).
///
/// # Errors
/// An unreadable file or standard input, one over `max_bytes` (as the core's
/// [`FormatError::TooLarge`]), or a compressed one that does not decompress.
pub fn bytes(path: &Path, max_bytes: u64) -> anyhow::Result<Vec<u8>> {
    let too_large = |size_bytes: u64| {
        let e = FormatError::TooLarge {
            size_bytes,
            limit_bytes: max_bytes,
        };
        anyhow::Error::new(e).context(path.display().to_string())
    };
    let raw = if path.as_os_str() == "-" {
        let mut out = Vec::new();
        let stdin = std::io::stdin().lock();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(stdin, max_bytes.saturating_add(1)),
            &mut out,
        )
        .context("cannot read standard input")?;
        out
    } else {
        let size = std::fs::metadata(path).map_or(0, |m| m.len());
        if size > max_bytes {
            return Err(too_large(size));
        }
        std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?
    };
    if raw.len() as u64 > max_bytes {
        return Err(too_large(raw.len() as u64));
    }
    match memtrace::format::decompressed(&raw, max_bytes) {
        Ok(Cow::Borrowed(_)) => Ok(raw),
        Ok(Cow::Owned(plain)) => Ok(plain),
        Err(e) => Err(anyhow::Error::new(e).context(path.display().to_string())),
    }
}

/// Loads `content` (named `name` in messages) as `read` says; in lenient mode each problem is
/// printed on stderr.
///
/// # Errors
/// A trace that does not load.
pub fn load_reporting(content: &[u8], read: ReadArgs, name: &str) -> anyhow::Result<Loaded> {
    let loaded = load(content, read.options()).with_context(|| name.to_owned())?;
    report_problems(&loaded, name);
    Ok(loaded)
}

/// In lenient mode, each problem of `loaded` on stderr.
fn report_problems(loaded: &Loaded, name: &str) {
    for p in &loaded.problems {
        eprintln!("warning: {name}: skipped: {p}");
    }
}

fn annotation_file(file: &Path) -> anyhow::Result<Vec<AnnotationRecord>> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    sidecar::parse(&bytes).with_context(|| file.display().to_string())
}

/// The one trace of `path` a single-trace command works on: the only one, or the one the page
/// had on screen when it saved the bundle.
///
/// # Errors
/// As [`read`].
pub fn read_one(path: &Path, rules: &RuleArgs) -> anyhow::Result<Input> {
    let inputs = read(path, rules)?;
    let n = inputs.len();
    let Some(input) = inputs.into_iter().max_by_key(|i| i.current) else {
        bail!("{} holds no trace", path.display());
    };
    if n > 1 {
        eprintln!(
            "{}: {n} traces in the bundle; using {}",
            path.display(),
            input.name
        );
    }
    Ok(input)
}
