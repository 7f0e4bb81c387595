//! A file given to memtrace, sorted once for every host: a trace, a project bundle (traces with
//! the settings the page saved) or an annotation file (ground truth for an open trace).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::verdict::{Label, Verdict};
use super::SessionError;
use crate::attribution::roles::OpRole;
use crate::format::{self, bundle, sidecar, FormatError, LoadOptions, Loaded};
use crate::model::{AnnotationRecord, FailRule, Mark};

/// The part of a project's saved settings that changes analysis (a host keeps the rest, e.g.
/// the page's panels, from [`Opened::Bundle`]'s `raw_settings`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// The trace on screen when the project was saved.
    pub current: Option<String>,
    /// Role overrides per trace name: op name → role (as [`crate::attribution::RoleConfig`]
    /// reads them).
    pub roles: BTreeMap<String, BTreeMap<String, OpRole>>,
    /// Failure rules as typed (`span=NAME output~REGEX`).
    pub rules: Vec<String>,
    /// Questions marked failed, per trace name.
    pub marks: BTreeMap<String, Vec<Mark>>,
    /// Verdicts per trace name, then per question (`query_id`).
    pub verdicts: BTreeMap<String, BTreeMap<String, Verdict>>,
    /// A person's labels per trace name, then per question.
    pub labels: BTreeMap<String, BTreeMap<String, Label>>,
}

impl Settings {
    /// The saved failure rules that parse, and why each other one does not.
    pub fn usable_rules(&self, file: &str) -> (Vec<FailRule>, Vec<SessionError>) {
        split_rules(&self.rules, file)
    }
}

/// Parses failure rules typed or saved in `file` (`""` when typed).
///
/// # Errors
/// [`SessionError::Rule`] naming the first rule that does not parse.
pub fn parse_rules(rules: &[String], file: &str) -> Result<Vec<FailRule>, SessionError> {
    let (good, bad) = split_rules(rules, file);
    bad.into_iter().next().map_or(Ok(good), Err)
}

/// The rules that parse, and a [`SessionError::Rule`] for each one that does not.
fn split_rules(rules: &[String], file: &str) -> (Vec<FailRule>, Vec<SessionError>) {
    let (good, bad) = FailRule::parse_all(rules);
    let bad = bad
        .into_iter()
        .map(|(index, error)| SessionError::Rule {
            file: file.to_owned(),
            index,
            error,
        })
        .collect();
    (good, bad)
}

/// One trace of a bundle: its name, and the trace or why it did not load.
#[derive(Debug)]
pub struct BundleTrace {
    pub name: String,
    /// The file's text, kept for saving the project again.
    pub bytes: Vec<u8>,
    pub loaded: Result<Loaded, FormatError>,
}

/// An annotation file kept in a bundle (the page saves them next to their trace).
#[derive(Debug)]
pub struct BundleAnnotations {
    pub name: String,
    /// The file's text, kept for saving the project again.
    pub bytes: Vec<u8>,
    pub records: Result<Vec<AnnotationRecord>, FormatError>,
}

/// What a file turned out to be.
#[derive(Debug)]
pub enum Opened {
    /// A trace file.
    Trace(Box<Loaded>),
    /// A project bundle: each trace (loaded or not), and its settings.
    Bundle {
        traces: Vec<BundleTrace>,
        /// Its annotation files, in order, to merge once `traces` are open.
        annotations: Vec<BundleAnnotations>,
        settings: Box<Settings>,
        /// All saved settings, for a host's own fields.
        raw_settings: serde_json::Value,
    },
    /// An annotation file: ground truth for the open trace whose questions it names.
    Annotations(Vec<AnnotationRecord>),
}

/// What kind of file `bytes` (already decompressed) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Trace,
    Bundle,
    Annotations,
}

/// Sorts `bytes` by kind from their first 4 KB (decompressed first when gzip or zstd), without
/// reading them further: what [`open`] decides first (a host that parses traces in steps asks
/// this before).
pub fn kind_of(bytes: &[u8]) -> FileKind {
    let head = format::head(bytes, 4096);
    if bundle::is_bundle(&head) {
        FileKind::Bundle
    } else if sidecar::is_annotation_file(&head) {
        FileKind::Annotations
    } else {
        FileKind::Trace
    }
}

/// A file made readable: `bytes` decompressed when gzip or zstd, and then named without its
/// `.gz` / `.zst` ending (as it is shown and kept); a plain file as it is. `options` gives the
/// largest file ([`format::Limits::max_file_bytes`]).
///
/// # Errors
/// [`SessionError::Format`] for a compressed file that does not decompress, or decompresses
/// past the largest file.
pub fn readable<'a>(
    name: &str,
    bytes: &'a [u8],
    options: &LoadOptions,
) -> Result<(String, std::borrow::Cow<'a, [u8]>), SessionError> {
    match format::decompressed(bytes, options.limits.max_file_bytes) {
        Ok(plain @ std::borrow::Cow::Owned(_)) => Ok((format::plain_name(name).to_owned(), plain)),
        Ok(same) => Ok((name.to_owned(), same)),
        Err(error) => Err(SessionError::Format {
            file: name.to_owned(),
            error,
        }),
    }
}

/// Sorts `bytes` (decompressed first when gzip or zstd) into a trace, a bundle or an annotation
/// file, and reads it. `name` only names the file in errors.
///
/// # Errors
/// [`SessionError::Format`] for a file that does not decompress, a trace that does not load, an
/// annotation file that is not valid; [`SessionError::Bundle`] for a bundle that is not. A bad saved rule is kept as saved: the host
/// parses [`Settings::rules`] and says which one is bad.
pub fn open(name: &str, bytes: &[u8], options: LoadOptions) -> Result<Opened, SessionError> {
    let located = |error| SessionError::Format {
        file: name.to_owned(),
        error,
    };
    let bytes = format::decompressed(bytes, options.limits.max_file_bytes).map_err(located)?;
    let bytes: &[u8] = &bytes;
    // A bundle or annotation file too: no file over the limit is parsed.
    format::limits::check_size(bytes, &options.limits).map_err(located)?;
    let kind = kind_of(bytes);
    if kind == FileKind::Bundle {
        let located = |error| SessionError::Bundle {
            file: name.to_owned(),
            error,
        };
        let b = bundle::parse::<serde_json::Value>(bytes).map_err(located)?;
        let settings: Settings = if b.settings.is_null() {
            Settings::default()
        } else {
            serde_json::from_value(b.settings.clone()).map_err(|e| {
                located(FormatError::Field {
                    path: "settings".into(),
                    message: e.to_string(),
                })
            })?
        };
        let (mut traces, mut annotations) = (Vec::new(), Vec::new());
        for f in b.traces {
            let bytes = f.content.into_bytes();
            if sidecar::is_annotation_file(&bytes) {
                let records = sidecar::parse(&bytes);
                annotations.push(BundleAnnotations {
                    name: f.name,
                    bytes,
                    records,
                });
            } else {
                let loaded = format::load(&bytes, options);
                traces.push(BundleTrace {
                    name: f.name,
                    bytes,
                    loaded,
                });
            }
        }
        return Ok(Opened::Bundle {
            traces,
            annotations,
            settings: Box::new(settings),
            raw_settings: b.settings,
        });
    }
    if kind == FileKind::Annotations {
        return sidecar::parse(bytes)
            .map(Opened::Annotations)
            .map_err(located);
    }
    format::load(bytes, options)
        .map(|l| Opened::Trace(Box::new(l)))
        .map_err(located)
}
