//! A typed project: the open traces and everything a person or a method added to them.

use std::collections::BTreeMap;

use super::cases::{annotation_target, pending};
use super::open::{open, parse_rules, Opened, Settings};
use super::tally::{tally, Source, Tally};
use super::verdict::{Label, Verdict};
use super::SessionError;
use crate::attribution::roles::OpRole;
use crate::format::{sidecar, Format, LoadOptions};
use crate::model::{AnnotationRecord, Detection, FailRule, Mark, Trace};

/// One open trace.
#[derive(Debug, Clone)]
pub struct Entry {
    pub name: String,
    pub trace: Trace,
    pub format: Format,
    /// The file's bytes (decompressed), kept for saving the project.
    pub bytes: Vec<u8>,
}

/// What [`Project::open`] did with a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    /// Traces added, by index into [`Project::traces`]; `errors` for the bundle's traces that did
    /// not load (file name, message).
    Traces {
        added: Vec<usize>,
        errors: Vec<(String, String)>,
    },
    /// Annotations merged into this trace.
    Annotations { trace: usize, records: usize },
}

/// The open traces, verdicts, labels, role overrides, failure rules, marks and settings.
/// Verdicts, labels, roles and marks are keyed by trace name, then by question (`query_id`) or
/// op id.
#[derive(Debug, Clone, Default)]
pub struct Project {
    pub traces: Vec<Entry>,
    pub verdicts: BTreeMap<String, BTreeMap<String, Verdict>>,
    pub labels: BTreeMap<String, BTreeMap<String, Label>>,
    pub roles: BTreeMap<String, BTreeMap<String, OpRole>>,
    pub rules: Vec<FailRule>,
    pub marks: BTreeMap<String, Vec<Mark>>,
    /// The trace on screen (a host's choice, saved with the project).
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

    /// Opens a file: a trace is added, a bundle's traces and settings are added (its rules are
    /// added to the project's), an annotation file is merged into the open trace whose questions
    /// it names (the current one first). A trace of the same name replaces the old one.
    ///
    /// # Errors
    /// As [`open`]; [`SessionError::Unfitting`] for annotations no open trace fits; a
    /// [`SessionError::Format`] for annotations that name unknown ops or types.
    pub fn open(&mut self, name: &str, bytes: &[u8]) -> Result<Added, SessionError> {
        match open(name, bytes, self.options)? {
            Opened::Trace(loaded) => {
                let i = self.add(name, loaded.trace, loaded.format, bytes.to_vec());
                self.detect_opened(i)?;
                Ok(Added::Traces {
                    added: vec![i],
                    errors: Vec::new(),
                })
            }
            Opened::Bundle {
                traces,
                annotations,
                settings,
                ..
            } => self.open_bundle(name, traces, annotations, settings),
            Opened::Annotations(records) => {
                let n = records.len();
                let i = self.merge_records(name, records)?;
                self.redetect(i)?;
                Ok(Added::Annotations {
                    trace: i,
                    records: n,
                })
            }
        }
    }

    /// Merges annotation `records` of file `name` into the open trace whose questions they
    /// name (the current one first); returns its index.
    fn merge_records(
        &mut self,
        name: &str,
        records: Vec<AnnotationRecord>,
    ) -> Result<usize, SessionError> {
        let current = self.current.as_deref().and_then(|c| self.find(c).ok());
        let i = annotation_target(
            self.traces.iter().map(|e| &e.trace),
            current,
            name,
            &records,
        )?;
        sidecar::merge(&mut self.traces[i].trace, records).map_err(|error| {
            SessionError::Format {
                file: name.to_owned(),
                error,
            }
        })?;
        Ok(i)
    }

    fn open_bundle(
        &mut self,
        file: &str,
        traces: Vec<super::open::BundleTrace>,
        annotations: Vec<super::open::BundleAnnotations>,
        settings: Settings,
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
                Ok(l) => added.push(self.add(&t.name, l.trace, l.format, t.bytes)),
                Err(e) => errors.push((t.name, e.to_string())),
            }
        }
        for a in annotations {
            let merged = a.records.map_err(|error| SessionError::Format {
                file: a.name.clone(),
                error,
            });
            if let Err(e) = merged.and_then(|r| self.merge_records(&a.name, r)) {
                errors.push((a.name, e.to_string()));
            }
        }
        for &i in &added {
            self.detect_opened(i)?;
        }
        Ok(Added::Traces { added, errors })
    }

    fn add(&mut self, name: &str, trace: Trace, format: Format, bytes: Vec<u8>) -> usize {
        let entry = Entry {
            name: name.to_owned(),
            trace,
            format,
            bytes,
        };
        if let Ok(i) = self.find(name) {
            self.traces[i] = entry;
            self.verdicts.remove(name);
            return i;
        }
        self.traces.push(entry);
        self.traces.len() - 1
    }

    /// Finds trace `i`'s failure cases again with the project's rules and the trace's marks.
    fn redetect(&mut self, i: usize) -> Result<Detection, SessionError> {
        let e = &mut self.traces[i];
        let marks = self.marks.get(&e.name).map_or(&[][..], Vec::as_slice);
        e.trace
            .apply_rules(&self.rules, marks)
            .map_err(|error| SessionError::Detect {
                trace: e.name.clone(),
                error,
            })
    }

    /// As [`Project::redetect`] for a trace just opened: without rules or marks, the cases
    /// loading found stand.
    fn detect_opened(&mut self, i: usize) -> Result<(), SessionError> {
        let marked = self
            .marks
            .get(&self.traces[i].name)
            .is_some_and(|m| !m.is_empty());
        if !self.rules.is_empty() || marked {
            self.redetect(i)?;
        }
        Ok(())
    }

    /// Overrides (or, with `None`, clears the override of) the role of every op named
    /// `op_name` in `trace`, then gives the trace's info-flow verdicts again under the roles
    /// now in force ([`super::reattribute`]); returns why each one that could not be given
    /// again was removed.
    ///
    /// # Errors
    /// [`SessionError::NoTrace`], [`SessionError::NoOp`] when no op has that name.
    pub fn set_role(
        &mut self,
        trace: &str,
        op_name: &str,
        role: Option<OpRole>,
    ) -> Result<Vec<String>, SessionError> {
        let i = self.find(trace)?;
        let t = &self.traces[i].trace;
        if !t.ops.iter().any(|o| o.op_name == op_name) {
            return Err(SessionError::NoOp {
                trace: trace.to_owned(),
                op_name: op_name.to_owned(),
            });
        }
        let roles = self.roles.entry(trace.to_owned()).or_default();
        if !super::set_override(roles, op_name, role) {
            return Ok(Vec::new());
        }
        let verdicts = self.verdicts.entry(trace.to_owned()).or_default();
        Ok(super::reattribute(t, roles, verdicts))
    }

    /// Replaces the failure rules by `rules` (as typed) and finds every trace's cases again. A
    /// bad rule changes nothing.
    ///
    /// # Errors
    /// [`SessionError::Rule`] for the first rule that does not parse; [`SessionError::Detect`].
    pub fn set_rules(&mut self, rules: &[String]) -> Result<(), SessionError> {
        self.rules = parse_rules(rules, "")?;
        for i in 0..self.traces.len() {
            self.redetect(i)?;
        }
        Ok(())
    }

    /// Marks a question of `trace` failed (with the gold answer when known) and finds the
    /// trace's cases again.
    ///
    /// # Errors
    /// [`SessionError::NoTrace`]; [`SessionError::NoQuestion`] when `mark.query_id` is not a
    /// question of the trace.
    pub fn mark(&mut self, trace: &str, mark: Mark) -> Result<(), SessionError> {
        let i = self.find(trace)?;
        let t = &self.traces[i].trace;
        let is_question = t
            .var_by_id(&mark.query_id)
            .is_some_and(|v| t.questions().contains(&v));
        if !is_question {
            return Err(SessionError::NoQuestion {
                trace: trace.to_owned(),
                query_id: mark.query_id,
            });
        }
        let marks = self.marks.entry(trace.to_owned()).or_default();
        marks.retain(|m| m.query_id != mark.query_id);
        marks.push(mark);
        self.redetect(i)?;
        Ok(())
    }

    /// Records `verdict` for question `query_id` of `trace`.
    ///
    /// # Errors
    /// [`SessionError::NoTrace`].
    pub fn set_verdict(
        &mut self,
        trace: &str,
        query_id: &str,
        verdict: Verdict,
    ) -> Result<(), SessionError> {
        self.find(trace)?;
        self.verdicts
            .entry(trace.to_owned())
            .or_default()
            .insert(query_id.to_owned(), verdict);
        Ok(())
    }

    /// The failure cases of `trace` (indices into its `cases`) that have no verdict yet (of
    /// `method`, when given): [`pending`].
    ///
    /// # Errors
    /// [`SessionError::NoTrace`].
    pub fn pending(&self, trace: &str, method: Option<&str>) -> Result<Vec<usize>, SessionError> {
        let t = &self.traces[self.find(trace)?].trace;
        let none = BTreeMap::new();
        Ok(pending(
            t,
            self.verdicts.get(trace).unwrap_or(&none),
            method,
        ))
    }

    /// The report's counts for `trace`.
    ///
    /// # Errors
    /// [`SessionError::NoTrace`].
    pub fn tally(&self, trace: &str, source: Source) -> Result<Tally, SessionError> {
        let t = &self.traces[self.find(trace)?].trace;
        let (no_verdicts, no_labels) = (BTreeMap::new(), BTreeMap::new());
        Ok(tally(
            t,
            self.verdicts.get(trace).unwrap_or(&no_verdicts),
            self.labels.get(trace).unwrap_or(&no_labels),
            source,
        ))
    }

    /// The analysis settings to save with the project.
    pub fn settings(&self) -> Settings {
        Settings {
            current: self.current.clone(),
            roles: self.roles.clone(),
            rules: self.rules.iter().map(ToString::to_string).collect(),
            marks: self.marks.clone(),
        }
    }
}
