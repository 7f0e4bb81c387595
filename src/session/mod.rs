//! The session layer: what every host (the page, the CLI, the JS module, the Python package)
//! does with a project, so that hosts hold no domain logic. Pure like the rest of the core.
//!
//! Public surface:
//! - [`open`]`(name, bytes, options) -> Opened` sorts a file into a trace, a bundle (traces,
//!   their annotation files and saved [`Settings`]) or annotations, decompressing it first;
//!   [`kind_of`] only sorts (compressed or not); [`readable`] only decompresses and names.
//! - [`Opening`]: the same in short steps (a trace parsed and its roles inferred a few
//!   milliseconds at a time), for a host that must stay responsive; its [`Ready`] file goes to
//!   [`Project::take`].
//! - [`Project`]: the open traces ([`Entry`]), [`Verdict`]s and [`Label`]s per trace and
//!   question, role overrides, failure rules, marks; [`View`] is one trace with all of them.
//!   Operations: [`Project::open`], [`Project::add`] (a trace a host read in steps),
//!   [`Project::close`], [`Project::set_role`], [`Project::set_rules`] / [`Project::use_rules`],
//!   [`Project::mark`] / [`Project::unmark`], [`Project::set_verdict`], [`Project::set_label`],
//!   [`Project::pending`], [`Project::tally`], [`Project::settings`] / [`Project::restore`],
//!   [`Project::roles_in_force`] and [`Project::first_verdict`] (the verdict a host shows
//!   first, stored like any other).
//! - [`find_cases`] (the user's rules, marks and judge threshold), [`pending`] (cases still to
//!   attribute, by method), [`annotation_target`] (the open trace an
//!   annotation file belongs to), [`opening_order`] (traces before their annotation files),
//!   [`arrange`] (files given together: OTLP logs joined to their traces, then in order): for
//!   a host that keeps its traces its own way.
//! - [`role_config`], [`infoflow_verdict`], [`reattribute`], [`role_rows`], [`op_role`]: role
//!   overrides (op name → role), each op name's role in force beside the inferred one,
//!   and the info-flow verdicts given again under them.
//! - [`Verdict`] (the core `Attribution` + [`VerdictCost`] + transcript + counterfactual
//!   outcome), [`cost_usd`]`(price, usage)`.
//! - [`verdicts_json`], [`verdicts_csv`], [`labels_json`]: a trace's verdicts as a MemTrace run
//!   file or CSV, its labels as annotation records; [`verdict_rows`] / [`verdict_rows_jsonl`]:
//!   its verdicts as the rows every host gives.
//! - [`tally()`]`(trace, verdicts, labels, source) -> Tally` for one trace's report.
//! - [`Setup::check`]: the optimize split (train / held-out overlap, missing conversations).
//! - [`retry_case`], [`with_retries`], [`with_retries_async`], [`CASE_ATTEMPTS`]: the one retry policy per case.
//! - [`MethodOptions::plan`]`(roles) -> Plan`: the one method-settings builder (a host's
//!   flags, keywords or options in, the method and its settings out); [`Plan::attribute`] one
//!   case with the retry policy, [`attribute_cases`] a [`Job`]'s cases, bounded and in order;
//!   [`NoLlm`] for a host run with no provider.
//! - [`ProviderOptions::config`]: the one provider configuration, with its defaults
//!   ([`DEFAULT_MODELS`], 60 s per attempt, 6 retries); the host brings the transport.
//! - [`VerdictRow`]: one verdict row for every host (`attribute --json`, the module's objects,
//!   Python's `to_dict()`); [`info()`]` -> Info`: one trace's counts and how failures were found.
//! - [`read`] / [`read_one`]`(name, bytes, ReadOptions)`: a file (a trace or a saved bundle)
//!   into [`Input`]s, annotations merged, cases found with the caller's and the saved rules,
//!   for a host that works on one file at a time; [`Handle`] is one such trace handed out as
//!   an object (the module's and the Python package's `Trace`): cases found on first use,
//!   roles once, verdict rows kept for its [`EXPORTS`].
//!
//! Every error is a [`SessionError`] (or [`SetupError`]): typed, with a sentence saying what to do.
//! [`ErrorReport`] is how the JS module and the Python package raise errors: kind, where, hint.

mod attribute;
mod cases;
mod export;
mod handle;
mod info;
mod open;
mod opening;
mod project;
mod provider;
mod read;
mod report;
mod retry;
mod roles;
mod row;
mod setup;
mod tally;
mod verdict;

#[cfg(test)]
mod tests;

pub use attribute::{attribute_cases, Job, MethodOptions, NoLlm, Plan};
pub use cases::{
    annotation_target, arrange, find_cases, opening_order, pending, questions, Question,
};
pub use export::{labels_json, verdict_rows, verdict_rows_jsonl, verdicts_csv, verdicts_json};
pub use handle::{Handle, EXPORTS};
pub use info::{info, Info, LookedFor};
pub use open::{
    kind_of, open, parse_rules, readable, BundleAnnotations, BundleTrace, FileKind, Opened,
    Settings,
};
pub use opening::{Opening, ReadTrace, Ready};
pub use project::{Added, Entry, Project, View};
pub use provider::{api_name, ProviderOptions, DEFAULT_MODELS};
pub use read::{read, read_one, Input, ReadOptions};
pub use report::{ErrorReport, Spelling};
pub use retry::{retry_case, with_retries, with_retries_async, CASE_ATTEMPTS};
pub use roles::{
    infoflow_verdict, op_role, reattribute, role_config, role_rows, set_override, RoleRow, INFOFLOW,
};
pub use row::{RowVerdict, VerdictRow};
pub use setup::{Setup, SetupError};
pub use tally::{tally, Bar, Source, Tally};
pub use verdict::{cost_usd, Label, Verdict, VerdictCost};

use crate::format::FormatError;
use crate::model::{GraphError, RuleError};

/// Why a session operation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SessionError {
    /// A file that does not read.
    #[error("{file}: {error}")]
    Format { file: String, error: FormatError },
    /// A project bundle that does not read.
    #[error("{file}: not a readable memtrace bundle: {error}")]
    Bundle { file: String, error: FormatError },
    /// A failure rule that does not parse (`file` is empty for a typed rule).
    #[error("{}rules[{index}]: {error}", if file.is_empty() { String::new() } else { format!("{file}: settings.") })]
    Rule {
        file: String,
        index: usize,
        error: RuleError,
    },
    #[error("no open trace is named {0:?}")]
    NoTrace(String),
    #[error("{trace}: no op is named {op_name:?}")]
    NoOp { trace: String, op_name: String },
    #[error("{trace}: {query_id:?} is not a question of this trace")]
    NoQuestion { trace: String, query_id: String },
    #[error("no failed case {case_id:?} in {trace}; a case's id is its query_id, and the trace's cases list them")]
    NoCase { trace: String, case_id: String },
    #[error("{trace}: finding the failure cases: {error}")]
    Detect { trace: String, error: GraphError },
    #[error("{file}: these annotations name questions (e.g. {first:?}) that no open trace has; open the trace they were exported from with them")]
    Unfitting { file: String, first: String },
    /// An option a host's caller gave that does not read (a method, a role override, a
    /// provider kind); the sentence says what is accepted.
    #[error("{0}")]
    Argument(String),
    /// An LLM method asked for with no provider given.
    #[error("{0} needs an LLM")]
    NeedsLlm(String),
    /// Provider settings that cannot be used (a base URL, a model).
    #[error("provider settings: {0}")]
    Provider(String),
}

impl SessionError {
    /// The file or trace the error is about (empty when none).
    pub fn file(&self) -> &str {
        match self {
            Self::Format { file, .. }
            | Self::Bundle { file, .. }
            | Self::Rule { file, .. }
            | Self::Unfitting { file, .. } => file,
            Self::NoOp { trace, .. }
            | Self::NoQuestion { trace, .. }
            | Self::NoCase { trace, .. }
            | Self::Detect { trace, .. } => trace,
            Self::NoTrace(name) => name,
            Self::Argument(_) | Self::NeedsLlm(_) | Self::Provider(_) => "",
        }
    }

    /// The sentence without the file or trace name it starts with, for a host that shows the
    /// name beside it (the page's list of file errors).
    pub fn unnamed(&self) -> String {
        let text = self.to_string();
        if self.file().is_empty() || matches!(self, Self::NoTrace(_)) {
            return text;
        }
        text.strip_prefix(self.file())
            .and_then(|t| t.strip_prefix(": "))
            .map_or_else(|| text.clone(), str::to_owned)
    }
}
