//! The page's failure rules (`span=NAME output~REGEX`, as `--failed-if`) and "mark as failed":
//! the reducer's work for them (the questions list is `session::questions`). Pure, tested natively.

use memtrace::model::{FailRule, Mark, RuleError};

use super::PageState;

/// The rules that parse, and the errors of those that do not (blank lines are skipped):
/// [`FailRule::parse_all`] without the indexes.
pub fn parse_rules(texts: &[String]) -> (Vec<FailRule>, Vec<RuleError>) {
    let (ok, bad) = FailRule::parse_all(texts);
    (ok, bad.into_iter().map(|(_, e)| e).collect())
}

/// `Action::SetRules`: new rules (as typed) for every open trace; those that parse are the
/// project's.
pub fn set_rules(s: &mut PageState, rules: Vec<String>) {
    s.rules = rules;
    let keep = selected_query(s);
    if let Err(e) = s.project.use_rules(parse_rules(&s.rules).0) {
        s.failed(String::new(), e.to_string());
    }
    reselect(s, keep.as_deref());
}

/// `Action::SetMark`: marks (or unmarks) a question of the trace on screen as failed.
pub fn set_mark(s: &mut PageState, query_id: String, gold: Option<String>, marked: bool) {
    let keep = selected_query(s).or_else(|| marked.then(|| query_id.clone()));
    let Some(name) = s.current_trace().map(|t| t.name.clone()) else {
        return;
    };
    let done = if marked {
        s.project.mark(&name, Mark { query_id, gold })
    } else {
        s.project.unmark(&name, &query_id)
    };
    if let Err(e) = done {
        s.failed(name, e.unnamed());
    }
    reselect(s, keep.as_deref());
}

fn selected_query(s: &PageState) -> Option<String> {
    let t = s.current_trace()?;
    t.trace
        .cases
        .get(s.selection.case?)
        .map(|c| c.query_id.clone())
}

/// Selects the case of this question again (its index may have moved), else none.
fn reselect(s: &mut PageState, query_id: Option<&str>) {
    let case = s.current_trace().and_then(|t| {
        let q = query_id?;
        t.trace.cases.iter().position(|c| c.query_id == q)
    });
    if s.selection.case != case {
        s.selection.case = case;
        s.selection.node = None;
        s.selection.expanded.clear();
        s.fit_requests = s.fit_requests.wrapping_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{Action, Settings};

    /// A judge memtrace sees by neither name nor shape (the answer cut from its prompt).
    const UNNAMED: &[u8] =
        include_bytes!("../../../../../tests/fixtures/otlp/mem0_blind_judge.jsonl");

    fn loaded() -> PageState {
        PageState::default().reduce(Action::whole("run.jsonl", UNNAMED))
    }

    #[test]
    fn a_rule_in_the_settings_finds_the_failure_and_survives_a_reload() {
        let s = loaded();
        assert_eq!(s.current_trace().unwrap().trace.cases.len(), 0);
        let s = s.reduce(Action::SetRules(vec![
            "span=check_answer output~WRONG".into(),
            "span=x outptu~y".into(),
        ]));
        let t = s.current_trace().unwrap();
        assert_eq!(t.trace.cases.len(), 1, "the bad rule is skipped");
        assert_eq!(t.summary.failures, 1);
        assert_eq!(t.trace.cases[0].query, "Where does Alice live now?");
        let (_, errors) = parse_rules(&s.rules);
        assert_eq!(errors.len(), 1);
        let saved: Settings =
            serde_json::from_str(&serde_json::to_string(&s.settings()).unwrap()).unwrap();
        let again = loaded().reduce(Action::Restore(saved));
        assert_eq!(again.current_trace().unwrap().trace.cases.len(), 1);
    }

    #[test]
    fn marking_a_question_makes_it_a_case_saved_with_the_project() {
        let s = loaded();
        let t = s.current_trace().unwrap();
        let rows = memtrace::session::questions(&t.trace, t.marks);
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|r| r.case.is_none() && !r.marked));
        let job = rows
            .iter()
            .find(|r| r.text == "What is Alice's job?")
            .unwrap();
        let s = s.reduce(Action::SetMark {
            query_id: job.query_id.clone(),
            gold: Some("nurse at a children's hospital".into()),
            marked: true,
        });
        let t = s.current_trace().unwrap();
        assert_eq!(t.trace.cases.len(), 1);
        assert_eq!(t.trace.cases[0].prediction, "Alice is a nurse.");
        assert_eq!(s.selection.case, Some(0), "the marked question is selected");
        let rows = memtrace::session::questions(&t.trace, t.marks);
        assert!(rows.iter().any(|r| r.marked && r.case == Some(0)));
        let saved = s.settings();
        assert_eq!(saved.project.marks["run.jsonl"].len(), 1);
        let again = loaded().reduce(Action::Restore(saved));
        assert_eq!(again.current_trace().unwrap().trace.cases.len(), 1);
        let s = s.reduce(Action::SetMark {
            query_id: job.query_id.clone(),
            gold: None,
            marked: false,
        });
        assert!(s.current_trace().unwrap().trace.cases.is_empty());
        assert_eq!(s.selection.case, None);
    }
}
