//! "Find all causes" (issue #17): the decisive-set search of one failure — the core's
//! [`memtrace_memsys::replay::decisive_set`], the same call as `memtrace attribute
//! --decisive-set` — as the page keeps and shows it. Pure: the component (`components/causes.rs`)
//! runs the search and dispatches [`CausesAction`]s here.

use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::{Arc, Weak};

use memtrace::Trace;
use memtrace_memsys::replay::{DecisiveSet, SetOutcome};

/// Replays one search may spend (the CLI's default `--budget`).
pub const BUDGET: usize = 64;

/// Where one search is.
#[derive(Debug, Clone, PartialEq)]
pub enum Search {
    /// Running: model calls (simulated provider) made so far.
    Running {
        calls: u32,
    },
    Done(Rc<DecisiveSet>),
    /// Cancelled, or the replay failed: why.
    Stopped(String),
}

/// One search with the trace it ran on (a file loaded again under the same name is another
/// trace: its old searches are not shown).
#[derive(Debug, Clone)]
struct Entry {
    trace: Weak<Trace>,
    search: Search,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        Weak::ptr_eq(&self.trace, &o.trace) && self.search == o.search
    }
}

/// Every search of the session, by (trace name, query id): a result stays when another
/// failure is selected and comes back with it. Not persisted.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Causes {
    searches: BTreeMap<(String, String), Entry>,
}

/// What can happen to a search.
#[derive(Debug, Clone)]
pub enum CausesAction {
    Start {
        name: String,
        trace: Arc<Trace>,
        query_id: String,
    },
    Progress {
        name: String,
        query_id: String,
        calls: u32,
    },
    /// The search ended: its set, or why it stopped.
    Finish {
        name: String,
        query_id: String,
        result: Result<DecisiveSet, String>,
    },
}

impl Causes {
    #[must_use]
    pub fn reduce(mut self, action: CausesAction) -> Self {
        match action {
            CausesAction::Start {
                name,
                trace,
                query_id,
            } => {
                let e = Entry {
                    trace: Arc::downgrade(&trace),
                    search: Search::Running { calls: 0 },
                };
                self.searches.insert((name, query_id), e);
            }
            CausesAction::Progress {
                name,
                query_id,
                calls,
            } => {
                if let Some(e) = self.searches.get_mut(&(name, query_id)) {
                    if let Search::Running { calls: c } = &mut e.search {
                        *c = calls;
                    }
                }
            }
            CausesAction::Finish {
                name,
                query_id,
                result,
            } => {
                if let Some(e) = self.searches.get_mut(&(name, query_id)) {
                    if matches!(e.search, Search::Running { .. }) {
                        e.search = match result {
                            Ok(set) => Search::Done(Rc::new(set)),
                            Err(why) => Search::Stopped(why),
                        };
                    }
                }
            }
        }
        self
    }

    /// The search of `query_id` in the trace `name`, if it ran on `trace`.
    pub fn get(&self, name: &str, trace: &Arc<Trace>, query_id: &str) -> Option<&Search> {
        self.searches
            .get(&(name.to_owned(), query_id.to_owned()))
            .filter(|e| std::ptr::eq(e.trace.as_ptr(), Arc::as_ptr(trace)))
            .map(|e| &e.search)
    }
}

impl Search {
    /// The ops of the set found (or the rescuing set at the budget), in the core's order:
    /// cause 1, cause 2, ….
    pub fn causes(&self) -> &[String] {
        match self {
            Search::Done(s) => &s.ops,
            _ => &[],
        }
    }
}

/// The outcome in words: `found`, `stopped at the budget`, `no set`, `not replayable`.
pub fn outcome_label(o: SetOutcome) -> &'static str {
    match o {
        SetOutcome::Found => "found",
        SetOutcome::Budget => "stopped at the budget",
        SetOutcome::NotRescued => "no set",
        SetOutcome::NotReplayable => "not replayable",
    }
}

/// One colour per cause (cycled past six): apart from the verdict's red and the path's orange.
const CAUSE_COLORS: [&str; 6] = [
    "#6741d9", "#0b7285", "#237032", "#c2255c", "#1864ab", "#862e9c",
];

/// The colour of cause `n` (1-based), the same in the list, the story and the graph.
pub fn cause_color(n: usize) -> &'static str {
    CAUSE_COLORS[n.saturating_sub(1) % CAUSE_COLORS.len()]
}

/// How a replay names an op: `cause N` for an op of the set, else the op's short name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpTag {
    pub op_id: String,
    /// 1-based place in the set, for ops of the set.
    pub cause: Option<usize>,
    pub label: String,
}

/// One replay as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayRow {
    /// 1-based, in the order run.
    pub n: usize,
    pub repaired: Vec<OpTag>,
    pub rescued: bool,
    pub answer: Option<String>,
}

/// The tag of `op_id` in a set of `causes`.
pub fn tag(trace: &Trace, causes: &[String], op_id: &str) -> OpTag {
    let cause = causes.iter().position(|c| c == op_id).map(|i| i + 1);
    let label = cause.map_or_else(|| short_name(trace, op_id), |n| format!("cause {n}"));
    OpTag {
        op_id: op_id.to_owned(),
        cause,
        label,
    }
}

/// The replays of `set`, each with its repaired ops tagged.
pub fn replay_rows(trace: &Trace, set: &DecisiveSet) -> Vec<ReplayRow> {
    set.replays
        .iter()
        .enumerate()
        .map(|(i, r)| ReplayRow {
            n: i + 1,
            repaired: r.repaired.iter().map(|o| tag(trace, &set.ops, o)).collect(),
            rescued: r.rescued,
            answer: r.answer.clone(),
        })
        .collect()
}

/// An op's name without its class or module (`memory_system.add` → `add`), or its id when the
/// trace has no such op.
pub fn short_name(trace: &Trace, op_id: &str) -> String {
    trace.op_by_id(op_id).map_or_else(
        || op_id.to_owned(),
        |o| {
            let name = &trace.op(o).op_name;
            name.rsplit('.').next().unwrap_or(name).to_owned()
        },
    )
}

#[cfg(test)]
mod tests;
