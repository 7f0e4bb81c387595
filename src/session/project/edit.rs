//! What a person or a method adds to a project's open traces: roles, rules, marks, verdicts,
//! labels; and the settings saved with it.

use std::collections::BTreeMap;

use super::super::cases::pending;
use super::super::open::{parse_rules, Settings};
use super::super::tally::{tally, Source, Tally};
use super::super::verdict::{Label, Verdict};
use super::super::{reattribute, set_override, SessionError};
use super::Project;
use crate::attribution::roles::OpRole;
use crate::model::{FailRule, Mark};

impl Project {
    /// Overrides (or, with `None`, clears the override of) the role of every op named
    /// `op_name` in `trace`, then gives the trace's info-flow verdicts again under the roles
    /// now in force ([`reattribute`]); returns why each one that could not be given again was
    /// removed.
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
        if !set_override(roles, op_name, role) {
            return Ok(Vec::new());
        }
        let verdicts = self.verdicts.entry(trace.to_owned()).or_default();
        Ok(reattribute(t, roles, verdicts))
    }

    /// Replaces the failure rules by `rules` (as typed) and finds every trace's cases again. A
    /// bad rule changes nothing.
    ///
    /// # Errors
    /// [`SessionError::Rule`] for the first rule that does not parse; [`SessionError::Detect`].
    pub fn set_rules(&mut self, rules: &[String]) -> Result<(), SessionError> {
        self.use_rules(parse_rules(rules, "")?)
    }

    /// Replaces the failure rules by rules already parsed (a host that shows each bad rule
    /// beside its text uses the good ones) and finds every trace's cases again.
    ///
    /// # Errors
    /// [`SessionError::Detect`] for the first trace whose cases cannot be found (its
    /// annotations are bad); the others are still found.
    pub fn use_rules(&mut self, rules: Vec<FailRule>) -> Result<(), SessionError> {
        self.rules = rules;
        let mut first = Ok(());
        for i in 0..self.traces.len() {
            if let Err(e) = self.redetect(i) {
                first = first.and(Err(e));
            }
        }
        first
    }

    /// Marks a question of `trace` failed (with the gold answer when known; a blank one is
    /// none) and finds the trace's cases again.
    ///
    /// # Errors
    /// [`SessionError::NoTrace`]; [`SessionError::NoQuestion`] when `mark.query_id` is not a
    /// question of the trace.
    pub fn mark(&mut self, trace: &str, mut mark: Mark) -> Result<(), SessionError> {
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
        mark.gold = mark.gold.filter(|g| !g.trim().is_empty());
        let marks = self.marks.entry(trace.to_owned()).or_default();
        marks.retain(|m| m.query_id != mark.query_id);
        marks.push(mark);
        self.redetect(i)?;
        Ok(())
    }

    /// Takes back the mark on question `query_id` of `trace` and finds its cases again.
    ///
    /// # Errors
    /// [`SessionError::NoTrace`]; [`SessionError::Detect`].
    pub fn unmark(&mut self, trace: &str, query_id: &str) -> Result<(), SessionError> {
        let i = self.find(trace)?;
        if let Some(m) = self.marks.get_mut(trace) {
            m.retain(|m| m.query_id != query_id);
            if m.is_empty() {
                self.marks.remove(trace);
            }
        }
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

    /// Forgets the verdict on question `query_id` of `trace` (a method gives it again).
    pub fn remove_verdict(&mut self, trace: &str, query_id: &str) {
        if let Some(v) = self.verdicts.get_mut(trace) {
            v.remove(query_id);
        }
    }

    /// Records (`Some`) or takes back (`None`) the person's label on question `query_id`.
    ///
    /// # Errors
    /// [`SessionError::NoTrace`].
    pub fn set_label(
        &mut self,
        trace: &str,
        query_id: &str,
        label: Option<Label>,
    ) -> Result<(), SessionError> {
        self.find(trace)?;
        let labels = self.labels.entry(trace.to_owned()).or_default();
        match label {
            Some(l) => labels.insert(query_id.to_owned(), l),
            None => labels.remove(query_id),
        };
        Ok(())
    }

    /// The failure cases of `trace` (indices into its `cases`) that have no verdict yet (of
    /// `method`, when given): [`pending`].
    ///
    /// # Errors
    /// [`SessionError::NoTrace`].
    pub fn pending(&self, trace: &str, method: Option<&str>) -> Result<Vec<usize>, SessionError> {
        let v = self.view(self.find(trace)?);
        Ok(pending(&v.trace, v.verdicts, method))
    }

    /// The report's counts for `trace`.
    ///
    /// # Errors
    /// [`SessionError::NoTrace`].
    pub fn tally(&self, trace: &str, source: Source) -> Result<Tally, SessionError> {
        let v = self.view(self.find(trace)?);
        Ok(tally(&v.trace, v.verdicts, v.labels, source))
    }

    /// The settings to save with the project: the rules as they read, and each open trace's
    /// roles, marks, verdicts and labels.
    pub fn settings(&self) -> Settings {
        Settings {
            current: self.current.clone(),
            roles: self.of_open(&self.roles),
            rules: self.rules.iter().map(ToString::to_string).collect(),
            marks: self.of_open(&self.marks),
            verdicts: self.of_open(&self.verdicts),
            labels: self.of_open(&self.labels),
        }
    }

    /// Puts saved settings back on the open traces (a reload): their roles, marks, verdicts
    /// and labels, and the rules that parse, in place of the project's; then finds the cases
    /// again of every trace when the rules changed, else of those given marks. Returns why each
    /// saved rule that does not parse was left out.
    pub fn restore(&mut self, settings: Settings) -> Vec<SessionError> {
        let (good_rules, mut errors) = settings.usable_rules("");
        let is_open = |name: &String| self.find(name).is_ok();
        let roles = keep(settings.roles, is_open);
        let marks = keep(settings.marks, is_open);
        let verdicts = keep(settings.verdicts, is_open);
        let labels = keep(settings.labels, is_open);
        let marked: Vec<String> = marks.keys().cloned().collect();
        self.roles.extend(roles);
        self.marks.extend(marks);
        self.verdicts.extend(verdicts);
        self.labels.extend(labels);
        if let Some(c) = settings.current.filter(|c| self.find(c).is_ok()) {
            self.current = Some(c);
        }
        if good_rules != self.rules {
            errors.extend(self.use_rules(good_rules).err());
            return errors;
        }
        // The same rules: only the traces given marks are found again (a reload of a large
        // trace keeps its cases and the roles inferred while it loaded).
        for name in marked {
            let detected = self.find(&name).and_then(|i| self.redetect(i));
            errors.extend(detected.err());
        }
        errors
    }

    /// The entries of `map` for open traces that have any.
    fn of_open<V: Clone + IsEmpty>(&self, map: &BTreeMap<String, V>) -> BTreeMap<String, V> {
        map.iter()
            .filter(|(n, v)| !v.is_empty() && self.find(n).is_ok())
            .map(|(n, v)| (n.clone(), v.clone()))
            .collect()
    }
}

/// The entries of `map` whose name `is_open` keeps.
fn keep<V>(map: BTreeMap<String, V>, is_open: impl Fn(&String) -> bool) -> BTreeMap<String, V> {
    map.into_iter().filter(|(n, _)| is_open(n)).collect()
}

/// A collection that can be empty (what [`Project::settings`] leaves out).
trait IsEmpty {
    fn is_empty(&self) -> bool;
}

impl<K, V> IsEmpty for BTreeMap<K, V> {
    fn is_empty(&self) -> bool {
        BTreeMap::is_empty(self)
    }
}

impl<T> IsEmpty for Vec<T> {
    fn is_empty(&self) -> bool {
        Vec::is_empty(self)
    }
}
