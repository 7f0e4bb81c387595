//! The page state and its reducer. Pure: no browser calls, so it is tested natively.

use std::rc::Rc;

use memtrace::format::{load, LoadOptions};
use memtrace::{Summary, Trace};

/// A trace the page has loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedTrace {
    pub name: String,
    pub summary: Summary,
    pub trace: Rc<Trace>,
}

/// A file the page could not read: which, what is wrong, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    pub name: String,
    pub message: String,
    pub location: String,
}

/// Everything the page shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PageState {
    pub traces: Vec<LoadedTrace>,
    /// Index into `traces` of the one on screen.
    pub current: Option<usize>,
    /// Errors of the last drop, one per bad file; good files of the same drop still load.
    pub errors: Vec<FileError>,
}

/// What can happen to the page.
#[derive(Debug, Clone)]
pub enum Action {
    /// A file's bytes arrived (dropped, picked, or the demo).
    Load {
        name: String,
        bytes: Rc<[u8]>,
    },
    /// A file could not even be read by the browser.
    ReadFailed {
        name: String,
        message: String,
    },
    /// A new drop starts: forget the previous drop's errors.
    ClearErrors,
    Select(usize),
}

impl PageState {
    /// Applies one action, returning the next state.
    #[must_use]
    pub fn reduce(mut self, action: Action) -> Self {
        match action {
            Action::Load { name, bytes } => match load(&bytes, LoadOptions::default()) {
                Ok(loaded) => {
                    let summary = loaded.trace.summary(loaded.format.as_str());
                    self.traces.push(LoadedTrace {
                        name,
                        summary,
                        trace: Rc::new(loaded.trace),
                    });
                    self.current = Some(self.traces.len() - 1);
                }
                Err(e) => self.errors.push(FileError {
                    name,
                    location: e.location(),
                    message: e.to_string(),
                }),
            },
            Action::ReadFailed { name, message } => {
                self.errors.push(FileError {
                    name,
                    message,
                    location: String::new(),
                });
            }
            Action::ClearErrors => self.errors.clear(),
            Action::Select(i) if i < self.traces.len() => self.current = Some(i),
            Action::Select(_) => {}
        }
        self
    }

    /// The trace on screen.
    pub fn current_trace(&self) -> Option<&LoadedTrace> {
        self.current.and_then(|i| self.traces.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_loads_and_becomes_current() {
        let s = PageState::default().reduce(Action::Load {
            name: "demo".into(),
            bytes: crate::DEMO_TRACE.into(),
        });
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        let t = s.current_trace().expect("current");
        assert!(t.summary.operations > 0);
        assert!(t.summary.failures > 0);
    }

    #[test]
    fn bad_file_keeps_loaded_traces() {
        let s = PageState::default()
            .reduce(Action::Load {
                name: "demo".into(),
                bytes: crate::DEMO_TRACE.into(),
            })
            .reduce(Action::Load {
                name: "bad.json".into(),
                bytes: b"{\"graph_id\":\"x\",\"data\":{".as_slice().into(),
            });
        assert_eq!(s.traces.len(), 1);
        assert_eq!(s.errors.len(), 1);
        assert_eq!(s.errors[0].name, "bad.json");
        assert!(
            s.errors[0].location.starts_with("line 1"),
            "{:?}",
            s.errors[0]
        );
    }
}
