//! `memtrace._native`: the core for Python (PyO3, abi3). The package `memtrace` (python/) wraps
//! it in typed functions and dataclasses; this module returns JSON text, the core's serde shapes,
//! so the Python results have the fields of `memtrace … --json`. Long work (load, attribute,
//! story, decisive set, reports) runs with the GIL released.

// PyO3's macros expand to unsafe FFI glue; this crate writes none itself.
#![allow(unsafe_code)]

mod attribute;
mod error;

use std::sync::{Mutex, OnceLock};

use memtrace::algo::GraphIndex;
use memtrace::attribution::results::{self, Labels, Verdicts};
use memtrace::attribution::{InfoFlow, RoleConfig, Roles};
use memtrace::format::{sidecar, smartcomment, Conventions, Format};
use memtrace::model::{Detection, FailRule, FailureCase};
use memtrace::report;
use memtrace::session;
use memtrace_memsys::replay::decisive_set;
use memtrace_memsys::simulated::SimulatedLlm;
use pyo3::prelude::*;
use serde_json::Value;

use crate::error::Error;

/// A loaded trace: the core's `Trace`, its roles (inferred on first use) and the verdicts of
/// `attribute` kept for the exports.
#[pyclass(frozen, module = "memtrace._native")]
pub struct NativeTrace {
    trace: memtrace::Trace,
    format: Format,
    name: String,
    role_config: RoleConfig,
    roles: OnceLock<Roles>,
    /// How the failure cases were found, when rules or a judge threshold were given.
    detection: Option<Detection>,
    /// What the instrumentation wrote (not for smartcomment).
    conventions: Option<Conventions>,
    problems: Vec<memtrace::FormatError>,
    verdicts: Mutex<Verdicts>,
}

/// The keywords of `load`, as the CLI's flags of the same names.
struct LoadArgs<'a> {
    annotations: Option<&'a [u8]>,
    format: Option<&'a str>,
    lenient: bool,
    judge_threshold: Option<f64>,
    failed_if: &'a [String],
    roles: &'a [String],
    /// The largest file, in bytes (`None`: the machine's default).
    max_bytes: Option<u64>,
}

/// Reads a trace from bytes (what `memtrace info` and `memtrace attribute` read).
fn load_native(data: &[u8], name: String, a: &LoadArgs<'_>) -> Result<NativeTrace, Error> {
    let LoadArgs {
        annotations,
        format,
        lenient,
        judge_threshold,
        failed_if,
        roles,
        max_bytes,
    } = *a;
    let format = format
        .map(Format::parse)
        .transpose()
        .map_err(Error::argument)?;
    let opts = memtrace::LoadOptions {
        format,
        lenient,
        ..memtrace::LoadOptions::with_max_file_bytes(max_file_bytes(max_bytes)?)
    };
    let loaded = memtrace::load(data, opts)?;
    let mut trace = loaded.trace;
    // As the CLI's `--annotations FILE`: ground truth merged into the trace whose questions it names.
    if let Some(bytes) = annotations {
        let records = sidecar::parse(bytes)?;
        session::annotation_target([&trace], Some(0), "annotations", &records)
            .map_err(|e| Error::argument(e.to_string()))?;
        sidecar::merge(&mut trace, records)?;
    }
    // As the CLI's `--failed-if` and `--judge-threshold`: cases found again only when given.
    let parsed = FailRule::parse_list(failed_if)?;
    let detection = session::find_cases(&mut trace, &parsed, &[], judge_threshold)?;
    let mut role_config = RoleConfig::default();
    for spec in roles {
        role_config.add_override(spec).map_err(Error::argument)?;
    }
    let conventions = (loaded.format != Format::Smartcomment)
        .then(|| memtrace::format::conventions(data, opts.limits.max_file_bytes));
    Ok(NativeTrace {
        trace,
        format: loaded.format,
        name,
        role_config,
        roles: OnceLock::new(),
        detection,
        conventions,
        problems: loaded.problems,
        verdicts: Mutex::default(),
    })
}

/// The largest file: `max_bytes` as given (at least 1), else the machine's default.
fn max_file_bytes(max_bytes: Option<u64>) -> Result<u64, Error> {
    match max_bytes {
        Some(0) => Err(Error::argument(
            "max_bytes must be at least 1 (bytes); leave it out for the default, a quarter of \
             this machine's memory",
        )),
        Some(n) => Ok(n),
        None => Ok(memtrace_native::memory::default_max_bytes()),
    }
}

/// `check_size(size, max_bytes=None)`: raises `MemtraceError` (kind `too_large`) when a file of
/// `size` bytes is over the largest file, before it is read.
#[pyfunction]
#[pyo3(signature = (size, max_bytes=None))]
fn check_size(size: u64, max_bytes: Option<u64>) -> PyResult<()> {
    let limit_bytes = max_file_bytes(max_bytes)?;
    if size > limit_bytes {
        let e = memtrace::FormatError::TooLarge {
            size_bytes: size,
            limit_bytes,
        };
        return Err(Error::from(e).into());
    }
    Ok(())
}

/// `load(data, *, annotations, name, format, lenient, judge_threshold, failed_if, roles,
/// max_bytes)`.
#[pyfunction]
#[pyo3(signature = (data, *, annotations=None, name=None, format=None, lenient=false, judge_threshold=None, failed_if=Vec::new(), roles=Vec::new(), max_bytes=None))]
// PyO3 passes arguments owned; each keyword of `memtrace.load` is one argument.
#[allow(clippy::needless_pass_by_value, clippy::too_many_arguments)]
fn load(
    py: Python<'_>,
    data: &[u8],
    annotations: Option<&[u8]>,
    name: Option<String>,
    format: Option<String>,
    lenient: bool,
    judge_threshold: Option<f64>,
    failed_if: Vec<String>,
    roles: Vec<String>,
    max_bytes: Option<u64>,
) -> PyResult<NativeTrace> {
    let name = name.unwrap_or_else(|| "trace.json".to_owned());
    Ok(py.allow_threads(|| {
        let args = LoadArgs {
            annotations,
            format: format.as_deref(),
            lenient,
            judge_threshold,
            failed_if: &failed_if,
            roles: &roles,
            max_bytes,
        };
        load_native(data, name, &args)
    })?)
}

impl NativeTrace {
    fn roles_inferred(&self) -> &Roles {
        self.roles
            .get_or_init(|| Roles::infer(&self.trace, &self.role_config))
    }

    fn case(&self, case_id: &str) -> Result<&FailureCase, Error> {
        self.trace
            .cases
            .iter()
            .find(|c| c.query_id == case_id)
            .ok_or_else(|| Error::not_found("failed case", case_id))
    }

    fn kept(&self) -> Verdicts {
        self.verdicts.lock().map(|v| v.clone()).unwrap_or_default()
    }

    fn report(&self) -> report::Report {
        let attributions: Vec<_> = self.kept().into_values().filter_map(Result::ok).collect();
        report::build(
            &format!("memtrace report: {}", self.name),
            report::cases_from(&self.name, &self.trace, &attributions),
        )
    }
}

#[pymethods]
impl NativeTrace {
    /// `memtrace info --json` for this trace: counts, questions, how failures were found.
    fn info(&self) -> PyResult<String> {
        let detection = match &self.detection {
            Some(d) => d.clone(),
            None => self.trace.detect(&[], &[]).map_err(Error::from)?,
        };
        let s = self.trace.summary(self.format.as_str());
        let mut v = serde_json::to_value(&s).map_err(Error::from)?;
        v["file"] = self.name.clone().into();
        v["questions"] = detection.questions.into();
        v["found_by"] = serde_json::to_value(&detection.found_by).map_err(Error::from)?;
        if let Some(c) = &self.conventions {
            v["conventions"] = serde_json::to_value(c).map_err(Error::from)?;
        }
        if detection.cases.is_empty() {
            v["looked_for"] = serde_json::json!({
                "rules": detection.rules,
                "unused_judges": detection.unused_judges,
                "suggestion": detection.suggestion,
            });
        }
        Ok(v.to_string())
    }

    /// In lenient mode, what was dropped while loading (JSON list).
    fn problems(&self) -> PyResult<String> {
        Ok(serde_json::to_string(&self.problems).map_err(Error::from)?)
    }

    /// The failed cases (JSON list), in file order.
    fn cases(&self) -> PyResult<String> {
        Ok(serde_json::to_string(&self.trace.cases).map_err(Error::from)?)
    }

    /// Each op name's role (JSON list), as `memtrace roles --json`.
    fn roles(&self, py: Python<'_>) -> PyResult<String> {
        let names = py.allow_threads(|| self.roles_inferred().by_name(&self.trace));
        Ok(serde_json::to_string(&names).map_err(Error::from)?)
    }

    /// `memtrace attribute --json` lines for one case or all (see `attribute.rs`).
    #[pyo3(signature = (case, options, progress=None))]
    #[allow(clippy::needless_pass_by_value)]
    fn attribute(
        &self,
        py: Python<'_>,
        case: Option<String>,
        options: attribute::Options,
        progress: Option<PyObject>,
    ) -> PyResult<Vec<String>> {
        let cases = match &case {
            Some(id) => vec![self.case(id)?.clone()],
            None => self.trace.cases.clone(),
        };
        let runner = attribute::Runner::new(&options, &self.role_config)?;
        let failed_callback = Mutex::new(None);
        let outcomes = py.allow_threads(|| {
            runner.run(&self.trace, &cases, |done, total| {
                let Some(cb) = &progress else { return };
                Python::with_gil(|py| {
                    if let Err(e) = cb.call1(py, (done, total)) {
                        if let Ok(mut slot) = failed_callback.lock() {
                            slot.get_or_insert(e);
                        }
                    }
                });
            })
        });
        if let Some(e) = failed_callback.into_inner().ok().flatten() {
            return Err(e);
        }
        let mut lines = Vec::with_capacity(outcomes.len());
        let mut kept = self.verdicts.lock().map_err(|_| {
            Error::new(
                "attribution",
                "a previous attribution panicked",
                "load the trace again",
            )
        })?;
        for (case, result, checked) in outcomes {
            let mut v: Value = match &result {
                Ok(a) => serde_json::to_value(a).map_err(Error::from)?,
                Err(e) => serde_json::json!({"case_id": case.query_id, "error": e}),
            };
            v["question"] = serde_json::to_value(memtrace::model::question_ref(&self.trace, &case))
                .map_err(Error::from)?;
            if let Some(c) = checked {
                v["counterfactual"] = serde_json::to_value(c).map_err(Error::from)?;
            }
            lines.push(v.to_string());
            kept.insert(case.query_id.clone(), result);
        }
        Ok(lines)
    }

    /// `memtrace story --json` for one case: its decisive path, from the info-flow verdict.
    fn story(&self, py: Python<'_>, case: &str) -> PyResult<String> {
        let c = self.case(case)?;
        let s = py.allow_threads(|| {
            let roles = self.roles_inferred();
            let g = GraphIndex::build(&self.trace).ok();
            let verdict = InfoFlow::default()
                .attribute_with(&self.trace, roles, c)
                .ok();
            memtrace::story::story_in(&self.trace, g.as_ref(), c, verdict.as_ref(), roles)
        });
        Ok(serde_json::to_string(&s).map_err(Error::from)?)
    }

    /// The minimal set of ops whose repair rescues the answer (`attribute --decisive-set`):
    /// ddmin over counterfactual replays with the simulated provider, at most `budget` replays.
    #[pyo3(signature = (case, budget=64))]
    fn decisive_set(&self, py: Python<'_>, case: &str, budget: usize) -> PyResult<String> {
        let c = self.case(case)?;
        let set = py.allow_threads(|| {
            let roles = self.roles_inferred();
            futures_executor::block_on(decisive_set(&SimulatedLlm, &self.trace, roles, c, budget))
        });
        let set = set.map_err(|e| {
            Error::new(
                "attribution",
                format!("the replay of {case} failed: {e}"),
                "decisive sets replay the reference memory system's pipeline; other traces may not replay",
            )
        })?;
        Ok(serde_json::to_string(&set).map_err(Error::from)?)
    }

    /// The trace or the kept verdicts as `kind`: `smartcomment`, `results` (a MemTrace run
    /// file), `csv`, `annotations` (MemTraceBench), `html` or `markdown` (the report).
    fn export(&self, py: Python<'_>, kind: &str) -> PyResult<String> {
        let out = py.allow_threads(|| -> Result<String, Error> {
            Ok(match kind {
                "smartcomment" => smartcomment::write(&self.trace)
                    .map_err(|e| Error::new("argument", e.to_string(), "report this as a bug"))
                    .map(|b| String::from_utf8_lossy(&b).into_owned())?,
                "results" => serde_json::to_string_pretty(&results::results_json(
                    &self.name,
                    &self.trace,
                    &self.kept(),
                    &Labels::new(),
                ))?,
                "csv" => results::results_csv(&self.trace, &self.kept(), &Labels::new()),
                "annotations" => {
                    let labels = results::verdict_labels(&self.kept());
                    serde_json::to_string_pretty(&results::annotations_json(&self.trace, &labels))?
                }
                "html" => report::html::render(&self.report()),
                "markdown" => report::markdown::render(&self.report()),
                other => {
                    return Err(Error::argument(format!(
                        "unknown export {other:?}; available: smartcomment, results, csv, \
                         annotations, html, markdown"
                    )))
                }
            })
        })?;
        Ok(out)
    }
}

/// The memtrace version this module was built from.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeTrace>()?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(check_size, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
