//! What the page can be asked to do: every change of [`super::PageState`] goes through one
//! of these.

use std::sync::Arc;

use memtrace::attribution::{OpRole, Roles};
use memtrace::format::{FormatError, Loaded};
use memtrace::layout::NodeRef;
use memtrace::model::VarIx;
use memtrace::session::{Label, Verdict};

use super::{Progress, Settings};
use crate::failures::SortKey;
use crate::llm_run::ProviderSettings;

/// What can happen to the page.
#[derive(Debug, Clone)]
pub enum Action {
    /// A bundle or annotation file arrived (dropped, picked, restored, fetched), opened whole
    /// through `session::open`; a trace only when the benchmark asks for its one-go parse
    /// (`services::files::show` sends every other trace as [`Action::Parsed`]).
    Load {
        name: String,
        bytes: Arc<[u8]>,
    },
    /// A trace file parsed off the reducer, in steps (`services::files`), as `format::load`
    /// parses it, with its roles inferred (no overrides); then as [`Action::Load`]. Only for
    /// files `session::kind_of` takes for a trace (no bundle, no annotation file).
    Parsed {
        name: String,
        bytes: Arc<[u8]>,
        parsed: Box<Result<Loaded, FormatError>>,
        roles: Option<Arc<Roles>>,
    },
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
