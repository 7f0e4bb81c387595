//! The traces a command works on: a trace file, or each trace of a project bundle the page saved
//! (with the role overrides, failure rules and marked questions the user set there); with
//! `--annotations FILE`, plus the ground truth of an annotation file the page exported.

use std::borrow::Cow;
use std::path::Path;

use anyhow::{bail, Context};
use memtrace::format::{load, FormatError, Loaded};
use memtrace::session::{self, ReadOptions};

use crate::rules::{ReadArgs, RuleArgs};

/// One trace to work on (`name` is the file, or `BUNDLE:NAME` for a trace from a bundle).
pub type Input = session::Input;

/// Reads `path` (a trace in any readable format, or a bundle: read by [`session::read`]) into
/// the traces it holds, with failure cases found by `rules` (after a bundle's saved ones) and
/// annotations merged from `rules.annotations`; `overrides` (`NAME=ROLE`) over a bundle's saved
/// role overrides.
///
/// # Errors
/// An unreadable file, a trace or bundle that does not load, an annotation
/// file given as the trace, or an annotation file that fits none of the traces.
pub fn read_with(
    path: &Path,
    rules: &RuleArgs,
    overrides: &[String],
) -> anyhow::Result<Vec<Input>> {
    let max_bytes = rules.read.size.max_file_bytes();
    let mut bytes = bytes(path, max_bytes)?;
    if let Some(logs) = &rules.logs {
        bytes = with_logs(path, bytes, logs, max_bytes)?;
    }
    let annotations = match &rules.annotations {
        Some(file) => Some((
            file.display().to_string(),
            std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?,
        )),
        None => None,
    };
    let shown = if path.as_os_str() == "-" {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    };
    let options = ReadOptions {
        format: rules.read.format.map(|f| f.as_str().to_owned()),
        lenient: rules.read.lenient,
        max_bytes: Some(max_bytes),
        judge_threshold: rules.judge_threshold,
        failed_if: rules.failed_if.iter().map(ToString::to_string).collect(),
        roles: overrides.to_vec(),
        annotations,
    };
    let (inputs, skipped) = session::read(&shown, &bytes, &options).map_err(|e| match e {
        session::SessionError::Argument(m) if m.contains("annotation file, not a trace") => {
            anyhow::anyhow!(
                "{shown} is an annotation file, not a trace: pass the trace, and this file with \
                 --annotations {shown}"
            )
        }
        e => e.into(),
    })?;
    for e in skipped {
        eprintln!("warning: {e}; the rule is skipped (fix it on the page, or pass --failed-if)");
    }
    for input in &inputs {
        report_problems(&input.problems, &input.name);
    }
    Ok(inputs)
}

/// [`read_with`] without role overrides.
///
/// # Errors
/// As [`read_with`].
pub fn read(path: &Path, rules: &RuleArgs) -> anyhow::Result<Vec<Input>> {
    read_with(path, rules, &[])
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
    report_problems(&loaded.problems, name);
    Ok(loaded)
}

/// In lenient mode, each problem on stderr.
fn report_problems(problems: &[FormatError], name: &str) {
    for p in problems {
        eprintln!("warning: {name}: skipped: {p}");
    }
}

/// The one trace of `path` a single-trace command works on: the only one, or the one the page
/// had on screen when it saved the bundle; `overrides` as [`read_with`].
///
/// # Errors
/// As [`read_with`].
pub fn read_one(path: &Path, rules: &RuleArgs, overrides: &[String]) -> anyhow::Result<Input> {
    let inputs = read_with(path, rules, overrides)?;
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
