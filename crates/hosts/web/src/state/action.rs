//! What the page can be asked to do: every change of [`super::PageState`] goes through one
//! of these.

use std::sync::Arc;

use memtrace::attribution::OpRole;
use memtrace::layout::NodeRef;
use memtrace::model::VarIx;
use memtrace::session::{Label, Ready, Verdict};

use super::{Progress, Settings};
use crate::runs::llm_run::ProviderSettings;
use crate::view::failures::SortKey;

/// What can happen to the page.
#[derive(Debug, Clone)]
pub enum Action {
    /// A file read to its end (dropped, picked, restored, fetched): a trace parsed in steps
    /// with its roles inferred, or a bundle or annotation file to open whole
    /// (`session::Opening`, driven by `services::files`); it goes to `Project::take`.
    Opened(Box<Ready>),
    /// A file could not even be read by the browser.
    ReadFailed {
        name: String,
        message: String,
    },
    /// A new drop starts: forget the previous drop's errors.
    ClearErrors,
    Progress(Option<Progress>),
    Select(usize),
    /// Closes the trace at this index.
    Close(usize),
    SelectCase(usize),
    /// Moves the case selection by this many rows of the (filtered, sorted) list: j/k.
    MoveCase(i32),
    SelectNode(Option<NodeRef>),
    Expand(NodeRef),
    /// `x`: expands the selected node, if any.
    ExpandSelected,
    /// Back to the case's default view.
    ResetView,
    Compare(Option<(VarIx, VarIx)>),
    FilterText(String),
    FilterType(Option<String>),
    /// Sorts by this key; the same key again flips the direction.
    Sort(SortKey),
    ToggleHelp,
    /// `R`: shows or hides the report view.
    ToggleReport,
    /// `O`: shows or hides the Optimize view.
    ToggleOptimize,
    /// `L`: shows or hides the roles panel.
    ToggleRoles,
    /// Sets (`Some`) or resets (`None`) the role of the ops named `op_name` in the trace on
    /// screen; its info-flow verdicts are recomputed at once.
    SetRole {
        op_name: String,
        role: Option<OpRole>,
    },
    /// `w`: whole trace ↔ the selected failure's slice.
    ToggleWhole,
    /// `g`: the selected failure's story ↔ its graph.
    ToggleGraph,
    /// Escape: closes the help, then the diff, then the node selection.
    Escape,
    Fit,
    /// Settings restored from storage (applied to the traces loaded so far).
    Restore(Settings),
    /// An attributor's verdict on a case of the trace on screen (`None` clears it).
    SetVerdict {
        query_id: String,
        verdict: Option<Verdict>,
    },
    /// A label on a case of the trace on screen (`None` clears it).
    SetLabel {
        query_id: String,
        label: Option<Label>,
    },
    SetProvider(ProviderSettings),
    /// The largest file the page reads, in bytes (`None`: the default, 512 MiB).
    SetMaxBytes(Option<u64>),
    /// Highlights these node and op ids in the graph (empty: none).
    Highlight(Vec<String>),
    /// New failure rules (`span=NAME output~REGEX`); lines that do not parse are skipped.
    SetRules(Vec<String>),
    /// Marks (or unmarks) a question of the trace on screen as failed.
    SetMark {
        query_id: String,
        gold: Option<String>,
        marked: bool,
    },
}

impl Action {
    /// File `name` opened in one go (`Project::open`), whatever it holds.
    pub fn whole(name: &str, bytes: &[u8]) -> Self {
        Action::Opened(Box::new(Ready::Whole {
            name: name.to_owned(),
            bytes: Arc::from(bytes),
        }))
    }
}
