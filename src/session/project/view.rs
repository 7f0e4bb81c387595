//! One open trace with everything added to it, borrowed from a [`Project`].

use std::collections::BTreeMap;
use std::ops::Deref;

use super::super::verdict::{Label, Verdict};
use super::{Entry, Project};
use crate::attribution::roles::OpRole;
use crate::model::Mark;

/// Trace `i` of a project (its [`Entry`], by `Deref`) with its verdicts, labels, role
/// overrides and marks (empty when it has none).
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    pub entry: &'a Entry,
    pub verdicts: &'a BTreeMap<String, Verdict>,
    pub labels: &'a BTreeMap<String, Label>,
    pub roles: &'a BTreeMap<String, OpRole>,
    pub marks: &'a [Mark],
}

impl Deref for View<'_> {
    type Target = Entry;
    fn deref(&self) -> &Entry {
        self.entry
    }
}

static NO_VERDICTS: BTreeMap<String, Verdict> = BTreeMap::new();
static NO_LABELS: BTreeMap<String, Label> = BTreeMap::new();
static NO_ROLES: BTreeMap<String, OpRole> = BTreeMap::new();

impl Project {
    /// Trace `i` with what was added to it.
    ///
    /// # Panics
    /// When `i` is not the index of an open trace (use [`Project::get`] otherwise).
    pub fn view(&self, i: usize) -> View<'_> {
        let entry = &self.traces[i];
        let name = &entry.name;
        View {
            entry,
            verdicts: self.verdicts.get(name).unwrap_or(&NO_VERDICTS),
            labels: self.labels.get(name).unwrap_or(&NO_LABELS),
            roles: self.roles.get(name).unwrap_or(&NO_ROLES),
            marks: self.marks.get(name).map_or(&[], Vec::as_slice),
        }
    }

    /// Trace `i` with what was added to it, if there is one.
    pub fn get(&self, i: usize) -> Option<View<'_>> {
        (i < self.traces.len()).then(|| self.view(i))
    }
}
