//! A typed project: the open traces and everything a person or a method added to them.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::cases::annotation_target;
use super::open::{open, readable, Opened, Settings};
use super::verdict::{Label, Verdict};
use super::SessionError;
use crate::attribution::roles::OpRole;
use crate::attribution::Roles;
use crate::format::{sidecar, Format, LoadOptions};
use crate::model::{AnnotationRecord, Detection, FailRule, Mark, Summary, Trace};

mod edit;
mod shown;
mod view;

pub use view::View;

/// One open trace. Shared parts are `Arc`s: a host that keeps copies of its state (the page,
/// once per action) copies pointers, not traces.
#[derive(Debug, Clone)]
pub struct Entry {
    pub name: String,
    pub trace: Arc<Trace>,
    pub format: Format,
    /// The trace's counts, kept equal to `trace`.
    pub summary: Summary,
    /// The file's bytes (decompressed), kept for saving the project.
    pub bytes: Arc<[u8]>,
    /// Annotation files merged into this trace (name, bytes), kept for saving the project.
    pub annotation_files: Vec<(String, Arc<[u8]>)>,
    /// The roles inferred with no overrides, when a host inferred them while the file loaded;
    /// dropped whenever the trace's cases change (they are inferred from the failed cases).
    pub inferred: Option<Arc<Roles>>,
    /// The roles in force the last time they were asked for ([`Project::roles_in_force`]), with
    /// the overrides they were inferred under; dropped with `inferred`.
    pub in_force: Option<(BTreeMap<String, OpRole>, Arc<Roles>)>,
}

impl PartialEq for Entry {
    /// The same name, trace, file and annotation files (pointers compared, not contents).
    fn eq(&self, other: &Self) -> bool {
        let same_files = self.annotation_files.len() == other.annotation_files.len()
            && self
                .annotation_files
                .iter()
                .zip(&other.annotation_files)
                .all(|(a, b)| a.0 == b.0 && Arc::ptr_eq(&a.1, &b.1));
        self.name == other.name
            && Arc::ptr_eq(&self.trace, &other.trace)
            && Arc::ptr_eq(&self.bytes, &other.bytes)
            && same_files
            && match (&self.inferred, &other.inferred) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (a, b) => a.is_none() && b.is_none(),
            }
            && match (&self.in_force, &other.in_force) {
                (Some((o, a)), Some((p, b))) => o == p && Arc::ptr_eq(a, b),
                (a, b) => a.is_none() && b.is_none(),
            }
    }
}

impl Entry {
    /// A trace read from `bytes` under `name`, with the roles inferred while it loaded if any.
    pub fn new(
        name: &str,
        trace: Arc<Trace>,
        format: Format,
        bytes: Arc<[u8]>,
        inferred: Option<Arc<Roles>>,
    ) -> Self {
        Entry {
            name: name.to_owned(),
            summary: trace.summary(format.as_str()),
            trace,
            format,
            bytes,
            annotation_files: Vec::new(),
            inferred,
            in_force: None,
        }
    }

    /// Every file this trace came from: the trace, then its annotation files.
    pub fn files(&self) -> Vec<(String, Arc<[u8]>)> {
        let mut v = vec![(self.name.clone(), self.bytes.clone())];
        v.extend(self.annotation_files.iter().cloned());
        v
    }

    /// Changes the trace with `f` (a copy when another holder shares it); the summary follows,
    /// the inferred roles go.
    fn change<T>(&mut self, f: impl FnOnce(&mut Trace) -> T) -> T {
        let out = f(Arc::make_mut(&mut self.trace));
        self.summary = self.trace.summary(self.format.as_str());
        self.inferred = None;
        self.in_force = None;
        out
    }
}

/// What [`Project::open`] did with a file.
#[derive(Debug, Clone, PartialEq)]
pub enum Added {
    /// Traces added, by index into [`Project::traces`]; `errors` for the bundle's traces, saved
    /// rules or annotation files that did not load (file name, message); a bundle's saved
    /// settings as saved (`Null` otherwise), for a host's own fields.
    Traces {
        added: Vec<usize>,
        errors: Vec<(String, String)>,
        settings: serde_json::Value,
    },
    /// Annotations merged into this trace.
    Annotations { trace: usize, records: usize },
}

/// The open traces, verdicts, labels, role overrides, failure rules, marks and settings.
/// Verdicts, labels, roles and marks are keyed by trace name, then by question (`query_id`) or
/// op name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Project {
    pub traces: Vec<Entry>,
    pub verdicts: BTreeMap<String, BTreeMap<String, Verdict>>,
    pub labels: BTreeMap<String, BTreeMap<String, Label>>,
    pub roles: BTreeMap<String, BTreeMap<String, OpRole>>,
    pub rules: Vec<FailRule>,
    pub marks: BTreeMap<String, Vec<Mark>>,
    /// The trace on screen (a host's choice, saved with the project; annotation files go to it
    /// first).
    pub current: Option<String>,
    /// How traces are read.
    pub options: LoadOptions,
}

impl Project {
    /// The index of the trace named `name`.
    ///
    /// # Errors
    /// [`SessionError::NoTrace`].
    pub fn find(&self, name: &str) -> Result<usize, SessionError> {
        self.traces
            .iter()
            .position(|e| e.name == name)
            .ok_or_else(|| SessionError::NoTrace(name.to_owned()))
    }

    /// Opens a file (decompressed first, and named without its `.gz` / `.zst`): a trace is
    /// added, a bundle's traces, annotation files and settings are added (its rules are added
    /// to the project's), an annotation file is merged into the open trace whose questions it
    /// names (the current one first). A trace of the same name replaces the old one.
    ///
    /// # Errors
    /// As [`open`]; [`SessionError::Unfitting`] for annotations no open trace fits; a
    /// [`SessionError::Format`] for annotations that name unknown ops or types.
    pub fn open(&mut self, name: &str, bytes: &[u8]) -> Result<Added, SessionError> {
        let (name, bytes) = readable(name, bytes, &self.options)?;
        match open(&name, &bytes, self.options)? {
            Opened::Trace(loaded) => {
                let trace = Arc::new(loaded.trace);
                let i = self.add(&name, trace, loaded.format, Arc::from(bytes), None)?;
                Ok(Added::Traces {
                    added: vec![i],
                    errors: Vec::new(),
                    settings: serde_json::Value::Null,
                })
            }
            Opened::Bundle {
                traces,
                annotations,
                settings,
                raw_settings,
            } => self.open_bundle(&name, traces, annotations, *settings, raw_settings),
            Opened::Annotations(records) => {
                let n = records.len();
                let i = self.merge_records(&name, Arc::from(bytes), records)?;
                Ok(Added::Annotations {
                    trace: i,
                    records: n,
                })
            }
        }
    }

    /// Adds a trace a host read itself ([`super::Opening`] reads in steps, with the roles
    /// inferred on the way) and finds its cases with the project's rules and marks; a trace of
    /// the same name is replaced (its verdicts go: they were of the old run). Returns its index.
    ///
    /// # Errors
    /// [`SessionError::Detect`] when the rules cannot be applied (bad annotations).
    pub fn add(
        &mut self,
        name: &str,
        trace: Arc<Trace>,
        format: Format,
        bytes: Arc<[u8]>,
        inferred: Option<Arc<Roles>>,
    ) -> Result<usize, SessionError> {
        let entry = Entry::new(name, trace, format, bytes, inferred);
        let i = if let Ok(i) = self.find(name) {
            self.traces[i] = entry;
            self.verdicts.remove(name);
            i
        } else {
            self.traces.push(entry);
            self.traces.len() - 1
        };
        let marked = self.marks.get(name).is_some_and(|m| !m.is_empty());
        if !self.rules.is_empty() || marked {
            self.redetect(i)?;
        }
        Ok(i)
    }

    /// Closes trace `i` with everything added to it (verdicts, labels, roles, marks).
    pub fn close(&mut self, i: usize) {
        if i >= self.traces.len() {
            return;
        }
        let name = self.traces.remove(i).name;
        self.verdicts.remove(&name);
        self.labels.remove(&name);
        self.roles.remove(&name);
        self.marks.remove(&name);
        if self.current.as_deref() == Some(name.as_str()) {
            self.current = None;
        }
    }

    /// Merges annotation `records` of file `name` into the open trace whose questions they
    /// name (the current one first), keeping the file; returns its index.
    fn merge_records(
        &mut self,
        name: &str,
        bytes: Arc<[u8]>,
        records: Vec<AnnotationRecord>,
    ) -> Result<usize, SessionError> {
        let current = self.current.as_deref().and_then(|c| self.find(c).ok());
        let i = annotation_target(
            self.traces.iter().map(|e| &*e.trace),
            current,
            name,
            &records,
        )?;
        let merged = sidecar::merged(&self.traces[i].trace, records).map_err(|error| {
            SessionError::Format {
                file: name.to_owned(),
                error,
            }
        })?;
        let e = &mut self.traces[i];
        e.change(|t| *t = merged);
        e.annotation_files.retain(|(n, _)| n != name);
        e.annotation_files.push((name.to_owned(), bytes));
        self.redetect(i)?;
        Ok(i)
    }

    fn open_bundle(
        &mut self,
        file: &str,
        traces: Vec<super::open::BundleTrace>,
        annotations: Vec<super::open::BundleAnnotations>,
        settings: Settings,
        raw_settings: serde_json::Value,
    ) -> Result<Added, SessionError> {
        let (rules, bad) = settings.usable_rules(file);
        let (mut added, mut errors) = (Vec::new(), Vec::new());
        errors.extend(bad.into_iter().map(|e| (file.to_owned(), e.to_string())));
        for r in rules {
            if !self.rules.contains(&r) {
                self.rules.push(r);
            }
        }
        self.roles.extend(settings.roles);
        self.marks.extend(settings.marks);
        if settings.current.is_some() {
            self.current = settings.current;
        }
        for t in traces {
            match t.loaded {
                Ok(l) => {
                    let trace = Arc::new(l.trace);
                    added.push(self.add(&t.name, trace, l.format, Arc::from(t.bytes), None)?);
                }
                Err(e) => errors.push((t.name, e.to_string())),
            }
        }
        self.verdicts.extend(settings.verdicts);
        self.labels.extend(settings.labels);
        for a in annotations {
            let merged = a.records.map_err(|error| SessionError::Format {
                file: a.name.clone(),
                error,
            });
            let bytes = Arc::from(a.bytes);
            if let Err(e) = merged.and_then(|r| self.merge_records(&a.name, bytes, r)) {
                errors.push((a.name, e.to_string()));
            }
        }
        Ok(Added::Traces {
            added,
            errors,
            settings: raw_settings,
        })
    }

    /// Finds trace `i`'s failure cases again with the project's rules and the trace's marks.
    fn redetect(&mut self, i: usize) -> Result<Detection, SessionError> {
        let e = &mut self.traces[i];
        let marks = self.marks.get(&e.name).map_or(&[][..], Vec::as_slice);
        let rules = &self.rules;
        e.change(|t| t.apply_rules(rules, marks))
            .map_err(|error| SessionError::Detect {
                trace: e.name.clone(),
                error,
            })
    }
}
