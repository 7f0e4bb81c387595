//! The page state and its reducer. Pure: no browser calls, so it is tested natively.

use serde::{Deserialize, Serialize};

use memtrace::format::limits::MAX_FILE_BYTES;
use memtrace::format::{FormatError, FormatErrorKind, LoadOption, LoadOptions};
use memtrace::layout::NodeRef;
use memtrace::model::VarIx;
use memtrace::session::{self, Added, Project, Ready, SessionError, View};

mod action;
pub mod bundle;
pub mod fail_rules;
pub mod roles;

pub use action::Action;

use crate::runs::llm_run::ProviderSettings;
use crate::view::failures::{failure_rows, ListSettings};
pub use memtrace::session::{Label, Verdict, VerdictCost};

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

/// What survives a reload (with the traces themselves), and goes into an exported bundle: the
/// project's settings (roles, rules as typed, marks, verdicts, labels, the trace on screen) and
/// the page's own.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    #[serde(flatten)]
    pub project: session::Settings,
    pub list: ListSettings,
    pub case: Option<usize>,
    /// The LLM provider (no key).
    pub provider: ProviderSettings,
    /// The largest file the page reads, in bytes (`None`: [`MAX_FILE_BYTES`]).
    pub max_bytes: Option<u64>,
}

/// Everything the page shows.
#[derive(Debug, Clone, PartialEq, Default)]
#[allow(clippy::struct_excessive_bools)] // independent toggles: help, report, optimize, roles, whole trace
pub struct PageState {
    /// The open traces and what was added to them: the core's [`Project`].
    pub project: Project,
    /// Index into `project.traces` of the one on screen.
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
    /// Failure rules for every trace as typed, bad ones too (the project has those that parse:
    /// `crate::state::fail_rules`).
    pub rules: Vec<String>,
    /// The largest file the page reads, as the user set it (`None`: [`MAX_FILE_BYTES`]); the
    /// project's load options carry it.
    pub max_bytes: Option<u64>,
}

impl PageState {
    /// Applies one action, returning the next state.
    #[must_use]
    pub fn reduce(mut self, action: Action) -> Self {
        match action {
            Action::Opened(ready) => self.open(*ready),
            Action::ReadFailed { name, message } => {
                self.errors.push(FileError {
                    name,
                    message,
                    location: String::new(),
                });
            }
            Action::ClearErrors => self.errors.clear(),
            Action::Progress(p) => self.progress = p,
            Action::Select(i) if i < self.project.traces.len() => self.show(i),
            Action::Close(i) if i < self.project.traces.len() => {
                self.project.close(i);
                let left = self.project.traces.len();
                match self.current {
                    Some(c) if c > i => self.current = Some(c - 1),
                    Some(c) if c == i && left > 0 => self.show(c.min(left - 1)),
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
            Action::SetRole { op_name, role } => roles::set_role(&mut self, &op_name, role),
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
                if let Some(name) = self.current_name() {
                    match verdict {
                        Some(v) => drop(self.project.set_verdict(&name, &query_id, v)),
                        None => self.project.remove_verdict(&name, &query_id),
                    }
                }
            }
            Action::SetLabel { query_id, label } => {
                if let Some(name) = self.current_name() {
                    drop(self.project.set_label(&name, &query_id, label));
                }
            }
            Action::SetProvider(p) => self.provider = p,
            Action::SetMaxBytes(n) => self.set_max_bytes(n),
            Action::Highlight(ids) => self.highlight = ids,
            Action::SetRules(rules) => fail_rules::set_rules(&mut self, rules),
            Action::SetMark {
                query_id,
                gold,
                marked,
            } => fail_rules::set_mark(&mut self, query_id, gold, marked),
            Action::Restore(s) => self.restore(s, false),
        }
        self
    }

    /// Adds a file read to its end to the project ([`Project::take`]): a trace, a bundle's
    /// traces, annotation files and settings, or annotations merged into their trace; shows it.
    fn open(&mut self, ready: Ready) {
        let name = ready.name().to_owned();
        let added = {
            let _t = crate::timing::stage("add (detect with the rules, summary)");
            self.project.take(ready)
        };
        match added {
            Ok(Added::Traces {
                added,
                errors,
                settings,
            }) => {
                for (file, message) in errors {
                    self.failed(file, message);
                }
                if let Some(&i) = added.last() {
                    let _t = crate::timing::stage("select first failure");
                    self.show(i);
                }
                if !settings.is_null() {
                    // The page's own fields ride along in the saved settings.
                    match serde_json::from_value::<Settings>(settings) {
                        Ok(s) => self.restore(s, true),
                        Err(e) => self.failed(name, format!("settings: {e}")),
                    }
                }
            }
            Ok(Added::Annotations { trace, .. }) => self.show(trace),
            Err(SessionError::Format { error, .. }) => self.format_failed(name, &error),
            Err(e) => self.failed(name, e.unnamed()),
        }
    }

    /// Puts saved settings back: from storage (the project's are replaced), or `from_bundle`
    /// the project already opened (it added the bundle's own; the page's are restored here).
    fn restore(&mut self, s: Settings, from_bundle: bool) {
        self.list = s.list;
        self.provider = s.provider;
        self.set_max_bytes(s.max_bytes);
        let current = s.project.current.clone();
        if from_bundle {
            for r in &s.project.rules {
                if !self.rules.contains(r) {
                    self.rules.push(r.clone());
                }
            }
        } else {
            self.rules.clone_from(&s.project.rules);
            for e in self.project.restore(s.project) {
                // A bad rule is shown beside its text in the rules panel.
                if !matches!(e, SessionError::Rule { .. }) {
                    self.failed(String::new(), e.to_string());
                }
            }
        }
        if let Some(i) = current.and_then(|n| self.project.find(&n).ok()) {
            self.show(i);
        }
        if let Some(c) = s.case {
            self.select_case(c);
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

    /// Keeps the error of a trace that did not load, with where in the file.
    fn format_failed(&mut self, name: String, e: &FormatError) {
        self.errors.push(FileError {
            name,
            location: e.location(),
            message: error_text(e),
        });
    }

    /// Sets the largest file (`None`, or 0: the default): what the next files are read with.
    fn set_max_bytes(&mut self, n: Option<u64>) {
        self.max_bytes = n.filter(|&n| n > 0 && n != MAX_FILE_BYTES);
        self.project.options.limits = load_options(self.max_bytes).limits;
    }

    /// The largest file the page reads, in bytes.
    pub fn max_file_bytes(&self) -> u64 {
        self.max_bytes.unwrap_or(MAX_FILE_BYTES)
    }

    /// How the page reads files: the project's load options (the largest file set).
    pub fn load_options(&self) -> LoadOptions {
        self.project.options
    }

    /// Puts trace `i` on screen with its first listed failure selected.
    fn show(&mut self, i: usize) {
        self.current = Some(i);
        self.project.current = self.project.traces.get(i).map(|e| e.name.clone());
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
            // The verdict the story shows is the project's: info-flow's, stored when the case
            // has none yet.
            if let Some(t) = self.current {
                let _t = crate::timing::stage("first verdict");
                self.project.first_verdict(t, i);
            }
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

    /// The trace on screen, with what was added to it.
    pub fn current_trace(&self) -> Option<View<'_>> {
        self.project.get(self.current?)
    }

    fn current_name(&self) -> Option<String> {
        self.current_trace().map(|t| t.name.clone())
    }

    /// What to persist.
    pub fn settings(&self) -> Settings {
        let mut project = self.project.settings();
        project.rules.clone_from(&self.rules);
        Settings {
            project,
            list: self.list.clone(),
            case: self.selection.case,
            provider: self.provider.clone(),
            max_bytes: self.max_bytes,
        }
    }
}

/// How the page reads files with the largest file `max_bytes` (`None`: [`MAX_FILE_BYTES`]).
pub fn load_options(max_bytes: Option<u64>) -> LoadOptions {
    LoadOptions::with_max_file_bytes(max_bytes.filter(|&n| n > 0).unwrap_or(MAX_FILE_BYTES))
}

/// The largest file typed in the settings, in whole MiB: `None` (the default) when empty, and
/// `now_bytes` kept when it is not a whole number of at least 1.
pub fn typed_max_bytes(text: &str, now_bytes: u64) -> Option<u64> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let mib = text.parse::<u64>().ok().filter(|&m| m >= 1);
    Some(mib.map_or(now_bytes, |m| m.saturating_mul(1024 * 1024)))
}

/// A file's error as the page shows it: the core's sentence, and for a file over the largest
/// file where to raise it (the settings in the `?` panel).
pub fn error_text(e: &FormatError) -> String {
    if e.kind() != FormatErrorKind::TooLarge {
        return e.to_string();
    }
    let hint = e.hint(|option| match option {
        LoadOption::Lenient | LoadOption::Format => String::new(),
        LoadOption::MaxBytes(n) => format!(
            "“Largest file” in the settings (press ?) at {} MiB or more",
            n.div_ceil(1024 * 1024)
        ),
    });
    let mut chars = hint.chars();
    let first = chars.next().map(|c| c.to_uppercase().to_string());
    format!("{e} {}{}.", first.unwrap_or_default(), chars.as_str())
}

#[cfg(test)]
mod tests;
