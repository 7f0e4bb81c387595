//! The page state and its reducer. Pure: no browser calls, so it is tested natively.

use std::collections::BTreeMap;
use std::rc::{Rc, Weak};

use serde::{Deserialize, Serialize};

use memtrace::algo::GraphIndex;
use memtrace::attribution::{OpRole, Roles};
use memtrace::format::{sidecar, FormatError, LoadOptions, Loaded};
use memtrace::layout::NodeRef;
use memtrace::model::{AnnotationRecord, Mark, VarIx};
use memtrace::session::{self, FileKind, Opened, SessionError};
use memtrace::{Summary, Trace};

mod action;
pub mod fail_rules;
pub mod roles;

pub use action::Action;

use crate::failures::{failure_rows, ListSettings};
use crate::llm_run::ProviderSettings;
pub use memtrace::session::{Label, Verdict, VerdictCost};

/// A trace the page has loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedTrace {
    pub name: String,
    pub summary: Summary,
    pub trace: Rc<Trace>,
    /// The file as read, for storage and export.
    pub bytes: Rc<[u8]>,
    /// Verdicts by `query_id`.
    pub verdicts: BTreeMap<String, Verdict>,
    /// Labels by `query_id`.
    pub labels: BTreeMap<String, Label>,
    /// Separate annotation files merged into this trace (name, bytes), kept for storage/export.
    pub annotation_files: Vec<(String, Rc<[u8]>)>,
    /// The user's op roles: op name → role, over what inference says (`crate::state::roles`).
    pub role_overrides: BTreeMap<String, OpRole>,
    /// Questions the user marked as failed (`crate::state::fail_rules`).
    pub marks: Vec<Mark>,
    /// The roles inferred (no overrides) and the graph index, built while the file loaded in
    /// steps.
    pub inferred: Option<InferredRoles>,
}

/// Roles inferred with no overrides for one trace, and its graph index (`Weak`: not kept alive
/// by this).
#[derive(Debug, Clone)]
pub struct InferredRoles {
    pub of: Weak<Trace>,
    pub roles: Rc<Roles>,
    pub graph: Option<Rc<GraphIndex>>,
}

impl PartialEq for InferredRoles {
    fn eq(&self, other: &Self) -> bool {
        Weak::ptr_eq(&self.of, &other.of) && Rc::ptr_eq(&self.roles, &other.roles)
    }
}

impl LoadedTrace {
    /// The roles inferred while loading, if they are of the trace as it is now.
    pub fn inferred_roles(&self) -> Option<Rc<Roles>> {
        self.current_inferred().map(|i| i.roles.clone())
    }

    /// The graph index built while loading, if it is of the trace as it is now.
    pub fn graph_index(&self) -> Option<Rc<GraphIndex>> {
        self.current_inferred().and_then(|i| i.graph.clone())
    }

    fn current_inferred(&self) -> Option<&InferredRoles> {
        self.inferred
            .as_ref()
            .filter(|i| Weak::ptr_eq(&i.of, &Rc::downgrade(&self.trace)))
    }

    /// Every file this trace came from: the trace, then its annotation files.
    pub fn files(&self) -> Vec<(String, Rc<[u8]>)> {
        let mut v = vec![(self.name.clone(), self.bytes.clone())];
        v.extend(self.annotation_files.iter().cloned());
        v
    }
}

/// A file the page could not read: which, what is wrong, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    pub name: String,
    pub message: String,
    pub location: String,
}

/// Loading progress of the current drop.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Progress {
    pub files_done: usize,
    pub files_total: usize,
    pub bytes_done: u64,
    pub bytes_total: u64,
    /// The file being read or parsed.
    pub file: String,
    /// How much of it is parsed, in percent, while it is parsed in steps.
    pub parsed: Option<u8>,
}

/// What is selected in the trace on screen.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Selection {
    /// Index into the trace's `cases`.
    pub case: Option<usize>,
    pub node: Option<NodeRef>,
    /// Nodes grown one hop by hand, on top of the case's default view.
    pub expanded: Vec<NodeRef>,
    /// Two versions of one variable to diff (left, right).
    pub compare: Option<(VarIx, VarIx)>,
}

/// What survives a reload (with the traces themselves), and goes into an exported bundle.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    pub list: ListSettings,
    /// Name of the trace on screen.
    pub current: Option<String>,
    pub case: Option<usize>,
    /// Verdicts per trace name, then per `query_id`.
    pub verdicts: BTreeMap<String, BTreeMap<String, Verdict>>,
    /// Labels per trace name, then per `query_id`.
    pub labels: BTreeMap<String, BTreeMap<String, Label>>,
    /// The LLM provider (no key).
    pub provider: ProviderSettings,
    /// The user's op roles per trace name: op name → role.
    pub roles: BTreeMap<String, BTreeMap<String, OpRole>>,
    /// Failure rules (`span=NAME output~REGEX`), one per entry.
    pub rules: Vec<String>,
    /// Questions marked as failed, per trace name.
    pub marks: BTreeMap<String, Vec<Mark>>,
}

/// Everything the page shows.
#[derive(Debug, Clone, PartialEq, Default)]
#[allow(clippy::struct_excessive_bools)] // independent toggles: help, report, optimize, roles, whole trace
pub struct PageState {
    pub traces: Vec<LoadedTrace>,
    /// Index into `traces` of the one on screen.
    pub current: Option<usize>,
    /// Errors of the last drop, one per bad file; good files of the same drop still load.
    pub errors: Vec<FileError>,
    pub progress: Option<Progress>,
    pub selection: Selection,
    pub list: ListSettings,
    pub help_open: bool,
    /// The report view (counts per error type and op) is shown.
    pub report_open: bool,
    /// The Optimize view (the prompt optimizer's closed loop) replaces the trace panels.
    pub optimize_open: bool,
    /// The roles panel (each op name's role, with overrides) is shown.
    pub roles_open: bool,
    /// Show the whole trace instead of the selected failure's slice.
    pub whole_trace: bool,
    /// Show the selected failure as a graph instead of its story (`g`).
    pub graph_view: bool,
    /// Bumped to ask the graph to fit its content.
    pub fit_requests: u32,
    /// The LLM provider (no key).
    pub provider: ProviderSettings,
    /// Node and op ids to highlight in the graph (a transcript step's).
    pub highlight: Vec<String>,
    /// Failure rules for every trace (`crate::state::fail_rules`).
    pub rules: Vec<String>,
}

impl PageState {
    /// Applies one action, returning the next state.
    #[must_use]
    pub fn reduce(mut self, action: Action) -> Self {
        match action {
            Action::Load { name, bytes } => self.load(name, bytes),
            Action::Parsed {
                name,
                bytes,
                parsed,
                roles,
                graph,
            } => self.add(name, bytes, *parsed, roles, graph),
            Action::ReadFailed { name, message } => {
                self.errors.push(FileError {
                    name,
                    message,
                    location: String::new(),
                });
            }
            Action::ClearErrors => self.errors.clear(),
            Action::Progress(p) => self.progress = p,
            Action::Select(i) if i < self.traces.len() => self.show(i),
            Action::Close(i) if i < self.traces.len() => {
                self.traces.remove(i);
                match self.current {
                    Some(c) if c > i => self.current = Some(c - 1),
                    Some(c) if c == i && !self.traces.is_empty() => {
                        self.show(c.min(self.traces.len() - 1));
                    }
                    Some(c) if c == i => {
                        self.current = None;
                        self.selection = Selection::default();
                    }
                    _ => {}
                }
            }
            Action::Select(_) | Action::Close(_) => {}
            Action::SelectCase(i) => self.select_case(i),
            Action::MoveCase(delta) => self.move_case(delta),
            Action::SelectNode(n) => {
                self.selection.node = n;
                self.selection.compare = None;
            }
            Action::Expand(n) => {
                if !self.selection.expanded.contains(&n) {
                    self.selection.expanded.push(n);
                }
            }
            Action::ExpandSelected => {
                if let Some(n) = self.selection.node {
                    return self.reduce(Action::Expand(n));
                }
            }
            Action::ResetView => self.selection.expanded.clear(),
            Action::Compare(pair) => self.selection.compare = pair,
            Action::FilterText(t) => self.list.text = t,
            Action::FilterType(t) => self.list.error_type = t,
            Action::Sort(k) => {
                self.list.descending = self.list.sort == k && !self.list.descending;
                self.list.sort = k;
            }
            Action::ToggleHelp => self.help_open = !self.help_open,
            Action::ToggleReport => self.report_open = !self.report_open,
            Action::ToggleOptimize => self.optimize_open = !self.optimize_open,
            Action::ToggleRoles => self.roles_open = !self.roles_open,
            Action::SetRole { op_name, role } => {
                if let Some(t) = self.current.and_then(|i| self.traces.get_mut(i)) {
                    let name = t.name.clone();
                    for message in roles::set_role(t, &op_name, role) {
                        self.errors.push(FileError {
                            name: name.clone(),
                            message,
                            location: String::new(),
                        });
                    }
                }
            }
            Action::ToggleWhole => {
                self.whole_trace = !self.whole_trace;
                self.fit_requests = self.fit_requests.wrapping_add(1);
            }
            Action::ToggleGraph => {
                // From any graph (the slice or the whole trace) back to the story.
                let to_story = self.graph_view || self.whole_trace;
                self.graph_view = !to_story;
                self.whole_trace &= !to_story;
                self.fit_requests = self.fit_requests.wrapping_add(1);
            }
            Action::Escape => {
                if self.help_open {
                    self.help_open = false;
                } else if self.selection.compare.is_some() {
                    self.selection.compare = None;
                } else {
                    self.selection.node = None;
                }
            }
            Action::Fit => self.fit_requests = self.fit_requests.wrapping_add(1),
            Action::SetVerdict { query_id, verdict } => {
                if let Some(t) = self.current.and_then(|i| self.traces.get_mut(i)) {
                    match verdict {
                        Some(v) => t.verdicts.insert(query_id, v),
                        None => t.verdicts.remove(&query_id),
                    };
                }
            }
            Action::SetLabel { query_id, label } => {
                if let Some(t) = self.current.and_then(|i| self.traces.get_mut(i)) {
                    match label {
                        Some(l) => t.labels.insert(query_id, l),
                        None => t.labels.remove(&query_id),
                    };
                }
            }
            Action::SetProvider(p) => self.provider = p,
            Action::Highlight(ids) => self.highlight = ids,
            Action::SetRules(rules) => fail_rules::set_rules(&mut self, rules),
            Action::SetMark {
                query_id,
                gold,
                marked,
            } => fail_rules::set_mark(&mut self, query_id, gold, marked),
            Action::Restore(s) => {
                self.list = s.list;
                self.provider = s.provider;
                for t in &mut self.traces {
                    if let Some(m) = s.marks.get(&t.name) {
                        t.marks.clone_from(m);
                    }
                }
                fail_rules::set_rules(&mut self, s.rules);
                for t in &mut self.traces {
                    if let Some(v) = s.verdicts.get(&t.name) {
                        t.verdicts.clone_from(v);
                    }
                    if let Some(l) = s.labels.get(&t.name) {
                        t.labels.clone_from(l);
                    }
                    if let Some(r) = s.roles.get(&t.name) {
                        t.role_overrides.clone_from(r);
                    }
                }
                if let Some(i) = s
                    .current
                    .and_then(|n| self.traces.iter().position(|t| t.name == n))
                {
                    self.show(i);
                }
                if let Some(c) = s.case {
                    self.select_case(c);
                }
            }
        }
        self
    }

    /// Opens a dropped file through [`session::open`]: a trace is added, a bundle's traces,
    /// annotation files and settings are restored, an annotation file is merged.
    fn load(&mut self, name: String, bytes: Rc<[u8]>) {
        let opened = {
            let _t = crate::timing::stage("parse, validate, index, detect");
            session::open(&name, &bytes, LoadOptions::default())
        };
        match opened {
            Ok(Opened::Trace(loaded)) => self.add(name, bytes, Ok(*loaded), None, None),
            Ok(Opened::Bundle {
                traces,
                annotations,
                mut raw_settings,
                ..
            }) => {
                if raw_settings.is_null() {
                    raw_settings = serde_json::Value::Object(serde_json::Map::new());
                }
                // The page's own fields ride along in the saved settings.
                let settings = match serde_json::from_value::<Settings>(raw_settings) {
                    Ok(s) => s,
                    Err(e) => {
                        return self.failed(
                            name,
                            format!("not a readable memtrace bundle: settings: {e}"),
                        )
                    }
                };
                for t in traces {
                    self.add(t.name, Rc::from(t.bytes), t.loaded, None, None);
                }
                for a in annotations {
                    let bytes = Rc::from(a.bytes);
                    match a.records {
                        Ok(records) => self.load_annotations(a.name, bytes, records),
                        Err(e) => self.failed(a.name, e.to_string()),
                    }
                }
                *self = std::mem::take(self).reduce(Action::Restore(settings));
            }
            Ok(Opened::Annotations(records)) => self.load_annotations(name, bytes, records),
            Err(SessionError::Format { error, .. }) => {
                if session::kind_of(&bytes) == FileKind::Bundle {
                    self.failed(name, format!("not a readable memtrace bundle: {error}"));
                } else if session::kind_of(&bytes) == FileKind::Annotations {
                    self.failed(name, error.to_string());
                } else {
                    self.add(name, bytes, Err(error), None, None);
                }
            }
            Err(e) => {
                let message = e.unnamed();
                self.failed(name, message);
            }
        }
    }

    /// Keeps the error of a file that did not open.
    fn failed(&mut self, name: String, message: String) {
        self.errors.push(FileError {
            name,
            message,
            location: String::new(),
        });
    }

    /// Adds a parsed trace file (or its error) and shows it.
    fn add(
        &mut self,
        name: String,
        bytes: Rc<[u8]>,
        parsed: Result<Loaded, FormatError>,
        roles: Option<Rc<Roles>>,
        graph: Option<Rc<GraphIndex>>,
    ) {
        match parsed {
            Ok(loaded) => {
                let summary = {
                    let _t = crate::timing::stage("summary");
                    loaded.trace.summary(loaded.format.as_str())
                };
                let trace = Rc::new(loaded.trace);
                let inferred = roles.map(|roles| InferredRoles {
                    of: Rc::downgrade(&trace),
                    roles,
                    graph,
                });
                let t = LoadedTrace {
                    name: name.clone(),
                    summary,
                    trace,
                    inferred,
                    bytes,
                    verdicts: BTreeMap::new(),
                    labels: BTreeMap::new(),
                    annotation_files: Vec::new(),
                    role_overrides: BTreeMap::new(),
                    marks: Vec::new(),
                };
                let mut t = t;
                if !self.rules.is_empty() {
                    fail_rules::recompute(&mut t, &fail_rules::parse_rules(&self.rules).0);
                }
                // The same name again replaces the earlier one (a re-export of the same run).
                let i = if let Some(i) = self.traces.iter().position(|t| t.name == name) {
                    // The same system: the user's roles still hold.
                    t.role_overrides = std::mem::take(&mut self.traces[i].role_overrides);
                    self.traces[i] = t;
                    i
                } else {
                    self.traces.push(t);
                    self.traces.len() - 1
                };
                let _t = crate::timing::stage("select first failure");
                self.show(i);
            }
            Err(e) => self.errors.push(FileError {
                name,
                location: e.location(),
                message: e.to_string(),
            }),
        }
    }

    /// Merges a separate annotation file into the loaded trace whose questions it names (the
    /// one on screen first: [`session::annotation_target`]).
    fn load_annotations(&mut self, name: String, bytes: Rc<[u8]>, anns: Vec<AnnotationRecord>) {
        let traces = self.traces.iter().map(|t| &*t.trace);
        let merged = session::annotation_target(traces, self.current, &name, &anns)
            .map_err(|e| e.unnamed())
            .and_then(|i| {
                let t = sidecar::merged(&self.traces[i].trace, anns).map_err(|e| e.to_string())?;
                Ok((i, t))
            });
        match merged {
            Ok((i, t)) => {
                let lt = &mut self.traces[i];
                lt.summary = t.summary(&lt.summary.format);
                lt.trace = Rc::new(t);
                lt.annotation_files.retain(|(n, _)| *n != name);
                lt.annotation_files.push((name, bytes));
                self.show(i);
            }
            Err(message) => self.failed(name, message),
        }
    }

    /// Puts trace `i` on screen with its first listed failure selected.
    fn show(&mut self, i: usize) {
        self.current = Some(i);
        self.selection = Selection::default();
        let first = self
            .current_trace()
            .and_then(|t| failure_rows(&t.trace, &self.list).first().copied());
        if let Some(c) = first {
            self.select_case(c);
        }
    }

    fn select_case(&mut self, i: usize) {
        let ok = self
            .current_trace()
            .is_some_and(|t| i < t.trace.cases.len());
        if ok {
            self.whole_trace = false;
            self.highlight.clear();
            self.selection = Selection {
                case: Some(i),
                ..Selection::default()
            };
            self.fit_requests = self.fit_requests.wrapping_add(1);
        }
    }

    fn move_case(&mut self, delta: i32) {
        let Some(t) = self.current_trace() else {
            return;
        };
        let rows = failure_rows(&t.trace, &self.list);
        if rows.is_empty() {
            return;
        }
        let at = self
            .selection
            .case
            .and_then(|c| rows.iter().position(|&r| r == c));
        let next = match at {
            None => 0,
            Some(p) => {
                let step = delta.unsigned_abs() as usize;
                if delta < 0 {
                    p.saturating_sub(step)
                } else {
                    p.saturating_add(step).min(rows.len() - 1)
                }
            }
        };
        if let Some(&c) = rows.get(next) {
            if self.selection.case != Some(c) {
                self.select_case(c);
            }
        }
    }

    /// The trace on screen.
    pub fn current_trace(&self) -> Option<&LoadedTrace> {
        self.current.and_then(|i| self.traces.get(i))
    }

    /// What to persist.
    pub fn settings(&self) -> Settings {
        Settings {
            list: self.list.clone(),
            current: self.current_trace().map(|t| t.name.clone()),
            case: self.selection.case,
            verdicts: self
                .traces
                .iter()
                .filter(|t| !t.verdicts.is_empty())
                .map(|t| (t.name.clone(), t.verdicts.clone()))
                .collect(),
            labels: self
                .traces
                .iter()
                .filter(|t| !t.labels.is_empty())
                .map(|t| (t.name.clone(), t.labels.clone()))
                .collect(),
            provider: self.provider.clone(),
            roles: self
                .traces
                .iter()
                .filter(|t| !t.role_overrides.is_empty())
                .map(|t| (t.name.clone(), t.role_overrides.clone()))
                .collect(),
            rules: self.rules.clone(),
            marks: self
                .traces
                .iter()
                .filter(|t| !t.marks.is_empty())
                .map(|t| (t.name.clone(), t.marks.clone()))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests;
