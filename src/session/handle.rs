//! One loaded trace for a host that hands traces out as objects (the JavaScript module's
//! `Trace`, the Python package's `Trace`): read once through [`super::read_one`] (so a saved
//! bundle opens too), its failure cases found on first use, its roles and graph index built
//! once, and the verdict rows `attribute` gave kept for the exports.

use std::collections::BTreeMap;
use std::sync::{LazyLock, Mutex, OnceLock};

use super::attribute::{MethodOptions, Plan};
use super::info::{info, Info};
use super::open::{kind_of, FileKind};
use super::read::{read_one, Input, ReadOptions};
use super::row::VerdictRow;
use super::SessionError;
use crate::algo::GraphIndex;
use crate::attribution::results::{self, Labels, Verdicts};
use crate::attribution::{InfoFlow, RoleConfig, Roles};
use crate::format::{conventions, load_indexed, smartcomment, Conventions, Format, FormatError};
use crate::model::{FailRule, FailureCase, Mark, Trace};
use crate::report;
use crate::story::{story_in, Story};

type Found = Box<dyn FnOnce() -> Trace + Send>;

/// A loaded trace and what was asked of it so far.
pub struct Handle {
    /// How results name the trace (the file, or `FILE:NAME` for a bundle's).
    pub name: String,
    pub format: Format,
    /// In lenient mode, what was dropped while loading.
    pub problems: Vec<FormatError>,
    /// The role overrides in force.
    pub role_config: RoleConfig,
    /// How many traces the file held (a bundle's others are not read here).
    pub traces_in_file: usize,
    /// Saved rules of a bundle that did not parse (skipped).
    pub skipped: Vec<SessionError>,
    rules: Vec<FailRule>,
    marks: Vec<Mark>,
    trace: LazyLock<Trace, Found>,
    conventions: Option<Conventions>,
    roles: OnceLock<Roles>,
    graph: OnceLock<Option<GraphIndex>>,
    kept: Mutex<Verdicts>,
}

impl Handle {
    /// Reads `bytes` as [`read_one`] does. A plain trace without annotations is checked and
    /// indexed here and its failure cases are found on first use (most of a large trace's
    /// load); with `conventions`, what its instrumentation wrote is read too.
    ///
    /// # Errors
    /// As [`read_one`]: every error of the file is found here, none is left to a query.
    pub fn read(
        name: &str,
        bytes: &[u8],
        options: &ReadOptions,
        with_conventions: bool,
    ) -> Result<Self, SessionError> {
        let conventions = with_conventions.then(|| conventions(bytes, options.max_file_bytes()));
        let plain = options.annotations.is_none() && kind_of(bytes) == FileKind::Trace;
        let mut handle = if plain {
            Self::indexed(name, bytes, options)?
        } else {
            let (input, n, skipped) = read_one(name, bytes, options)?;
            Handle {
                traces_in_file: n,
                skipped,
                ..Self::of(input)
            }
        };
        handle.conventions = conventions.filter(|_| handle.format != Format::Smartcomment);
        Ok(handle)
    }

    /// A plain trace, its cases found on first use.
    fn indexed(name: &str, bytes: &[u8], options: &ReadOptions) -> Result<Self, SessionError> {
        let rules = options.rules()?;
        let role_config = options.role_config()?;
        let indexed =
            load_indexed(bytes, options.load_options()?).map_err(|error| SessionError::Format {
                file: name.to_owned(),
                error,
            })?;
        let (format, problems) = (indexed.format(), indexed.problems().to_vec());
        let given = rules.clone();
        Ok(Handle {
            name: name.to_owned(),
            format,
            problems,
            role_config,
            traces_in_file: 1,
            skipped: Vec::new(),
            rules,
            marks: Vec::new(),
            trace: LazyLock::new(Box::new(move || indexed.find_with(&given, &[]).trace)),
            conventions: None,
            roles: OnceLock::new(),
            graph: OnceLock::new(),
            kept: Mutex::default(),
        })
    }

    /// A trace a host loaded itself (in steps, `Trace.loadAsync`), its cases found again with
    /// the rules, role overrides and judge threshold of `options`.
    ///
    /// # Errors
    /// A rule or role override that does not parse; annotations that fit no question.
    pub fn loaded(
        name: &str,
        loaded: crate::format::Loaded,
        options: &ReadOptions,
    ) -> Result<Self, SessionError> {
        let role_config = options.role_config()?;
        let mut trace = loaded.trace;
        let rules = options.rules()?;
        super::find_cases(&mut trace, &rules, &[], options.judge_threshold).map_err(|error| {
            SessionError::Detect {
                trace: name.to_owned(),
                error,
            }
        })?;
        Ok(Self::of(Input {
            name: name.to_owned(),
            trace,
            format: loaded.format,
            problems: loaded.problems,
            rules,
            marks: Vec::new(),
            detection: None,
            roles: role_config,
            current: true,
        }))
    }

    /// A trace read already (its cases found).
    pub fn of(input: Input) -> Self {
        let Input {
            name,
            trace,
            format,
            problems,
            rules,
            marks,
            roles,
            ..
        } = input;
        Handle {
            name,
            format,
            problems,
            role_config: roles,
            traces_in_file: 1,
            skipped: Vec::new(),
            rules,
            marks,
            trace: LazyLock::new(Box::new(move || trace)),
            conventions: None,
            roles: OnceLock::new(),
            graph: OnceLock::new(),
            kept: Mutex::default(),
        }
    }

    /// The trace, its failure cases found.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The op roles, inferred once.
    pub fn roles(&self) -> &Roles {
        self.roles
            .get_or_init(|| Roles::infer(self.trace(), &self.role_config))
    }

    /// The graph index, built once (`None` for a trace it cannot index).
    pub fn graph(&self) -> Option<&GraphIndex> {
        self.graph
            .get_or_init(|| GraphIndex::build(self.trace()).ok())
            .as_ref()
    }

    /// The failed case with this query id.
    ///
    /// # Errors
    /// [`SessionError::NoCase`] when no failed case has it.
    pub fn case(&self, case_id: &str) -> Result<&FailureCase, SessionError> {
        self.trace()
            .cases
            .iter()
            .find(|c| c.query_id == case_id)
            .ok_or_else(|| SessionError::NoCase {
                trace: self.name.clone(),
                case_id: case_id.to_owned(),
            })
    }

    /// One failed case (by query id), or all of them.
    ///
    /// # Errors
    /// As [`Handle::case`].
    pub fn cases(&self, case_id: Option<&str>) -> Result<Vec<FailureCase>, SessionError> {
        match case_id {
            Some(id) => Ok(vec![self.case(id)?.clone()]),
            None => Ok(self.trace().cases.clone()),
        }
    }

    /// The method of `options` planned over this trace's role overrides.
    ///
    /// # Errors
    /// As [`MethodOptions::plan`].
    pub fn plan(&self, options: &MethodOptions) -> Result<Plan, SessionError> {
        options.plan(&self.role_config)
    }

    /// Info-flow's rows for `cases` (no LLM, at once; not kept: see [`Handle::keep`]).
    pub fn infoflow(&self, cases: &[FailureCase]) -> Vec<VerdictRow> {
        let (trace, roles) = (self.trace(), self.roles());
        cases
            .iter()
            .map(|c| {
                let r = InfoFlow::default().attribute_with(trace, roles, c);
                VerdictRow::new(trace, c, r.map_err(|e| e.to_string()), None)
            })
            .collect()
    }

    /// Keeps `rows` as the verdicts of their cases (the latest per case).
    pub fn keep(&self, rows: &[VerdictRow]) {
        if let Ok(mut kept) = self.kept.lock() {
            for r in rows {
                let v = r.result().cloned().map_err(str::to_owned);
                kept.insert(r.case_id().to_owned(), v);
            }
        }
    }

    /// The verdicts kept, by case id.
    pub fn kept(&self) -> BTreeMap<String, Result<crate::attribution::Attribution, String>> {
        self.kept.lock().map(|k| k.clone()).unwrap_or_default()
    }

    /// `memtrace info` of this trace.
    ///
    /// # Errors
    /// [`SessionError::Detect`] when the cases cannot be found (bad annotations).
    pub fn info(&self) -> Result<Info, SessionError> {
        let trace = self.trace();
        let detection =
            trace
                .detect(&self.rules, &self.marks)
                .map_err(|error| SessionError::Detect {
                    trace: self.name.clone(),
                    error,
                })?;
        let mut out = info(&self.name, trace, self.format, Some(&detection), None, 0)?;
        out.conventions.clone_from(&self.conventions);
        Ok(out)
    }

    /// A case's story (its decisive path), from info-flow's verdict.
    ///
    /// # Errors
    /// As [`Handle::case`].
    pub fn story(&self, case_id: &str) -> Result<Story, SessionError> {
        let case = self.case(case_id)?;
        let (trace, roles) = (self.trace(), self.roles());
        let verdict = InfoFlow::default().attribute_with(trace, roles, case).ok();
        Ok(story_in(trace, self.graph(), case, verdict.as_ref(), roles))
    }

    /// The trace or the kept verdicts as `kind`: `smartcomment` (the trace), `results` (a
    /// MemTrace run file), `csv`, `annotations` (MemTraceBench), `html` or `markdown` (the
    /// diagnostic report).
    ///
    /// # Errors
    /// [`SessionError::Argument`] for an unknown kind.
    pub fn export(&self, kind: &str) -> Result<String, SessionError> {
        let (trace, kept) = (self.trace(), self.kept());
        let pretty = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default();
        Ok(match kind {
            "smartcomment" => smartcomment::write(trace)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .map_err(|e| SessionError::Argument(e.to_string()))?,
            "results" => pretty(&results::results_json(
                &self.name,
                trace,
                &kept,
                &Labels::new(),
            )),
            "csv" => results::results_csv(trace, &kept, &Labels::new()),
            "annotations" => pretty(&results::annotations_json(
                trace,
                &results::verdict_labels(&kept),
            )),
            "html" => report::html::render(&self.report()),
            "markdown" => report::markdown::render(&self.report()),
            other => {
                return Err(SessionError::Argument(format!(
                    "unknown export {other:?}; available: {}",
                    EXPORTS.join(", ")
                )))
            }
        })
    }

    fn report(&self) -> report::Report {
        let attributions: Vec<_> = self.kept().into_values().filter_map(Result::ok).collect();
        report::build(
            &format!("memtrace report: {}", self.name),
            report::cases_from(&self.name, self.trace(), &attributions),
        )
    }
}

/// What [`Handle::export`] writes.
pub const EXPORTS: [&str; 6] = [
    "smartcomment",
    "results",
    "csv",
    "annotations",
    "html",
    "markdown",
];
