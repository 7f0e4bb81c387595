//! `memtrace._native`: the core for Python (PyO3, abi3). The package `memtrace` (python/) wraps
//! it in typed functions and dataclasses; this module returns JSON text, the core's serde shapes,
//! so the Python results have the fields of `memtrace … --json`. Long work (load, attribute,
//! story, decisive set, reports) runs with the GIL released.

// PyO3's macros expand to unsafe FFI glue; this crate writes none itself.
#![allow(unsafe_code)]

mod attribute;
mod error;

use std::sync::Mutex;

use memtrace::session::{Handle, ReadOptions};
use memtrace_memsys::replay::decisive_set;
use memtrace_memsys::simulated::SimulatedLlm;
use pyo3::prelude::*;

use crate::error::Error;

/// A loaded trace: the session's [`Handle`] (cases found on first use, roles inferred once,
/// the verdicts of `attribute` kept for the exports).
#[pyclass(frozen, module = "memtrace._native")]
pub struct NativeTrace {
    handle: Handle,
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
        return Err(Error::too_large(size, limit_bytes).into());
    }
    Ok(())
}

/// `load(data, *, annotations, name, format, lenient, judge_threshold, failed_if, roles,
/// max_bytes)`: read as `memtrace info` and `memtrace attribute` read (through the session, so
/// a project bundle the page saved opens too: its current trace, with its saved settings).
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
    let options = ReadOptions {
        format,
        lenient,
        max_bytes: Some(max_file_bytes(max_bytes)?),
        judge_threshold,
        failed_if,
        roles,
        annotations: annotations.map(|a| ("annotations".to_owned(), a.to_vec())),
    };
    let handle = py
        .allow_threads(|| Handle::read(&name, data, &options, true))
        .map_err(Error::session)?;
    Ok(NativeTrace { handle })
}

fn json<T: serde::Serialize>(v: &T) -> PyResult<String> {
    Ok(serde_json::to_string(v).map_err(Error::from)?)
}

#[pymethods]
impl NativeTrace {
    /// `memtrace info --json` for this trace: counts, questions, how failures were found.
    fn info(&self, py: Python<'_>) -> PyResult<String> {
        json(
            &py.allow_threads(|| self.handle.info())
                .map_err(Error::session)?,
        )
    }

    /// In lenient mode, what was dropped while loading (JSON list).
    fn problems(&self) -> PyResult<String> {
        json(&self.handle.problems)
    }

    /// The failed cases (JSON list), in file order.
    fn cases(&self, py: Python<'_>) -> PyResult<String> {
        json(&py.allow_threads(|| &self.handle.trace().cases))
    }

    /// Each op name's role (JSON list), as `memtrace roles --json`.
    fn roles(&self, py: Python<'_>) -> PyResult<String> {
        let h = &self.handle;
        json(&py.allow_threads(|| h.roles().by_name(h.trace())))
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
        let runner = attribute::Runner::new(&options, &self.handle)?;
        let failed_callback = Mutex::new(None);
        let rows = py.allow_threads(|| {
            runner.run(&self.handle, case.as_deref(), |done, total| {
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
        let rows = rows.map_err(Error::session)?;
        self.handle.keep(&rows);
        Ok(rows
            .iter()
            .map(memtrace::session::VerdictRow::to_json)
            .collect())
    }

    /// `memtrace story --json` for one case: its decisive path, from the info-flow verdict.
    fn story(&self, py: Python<'_>, case: &str) -> PyResult<String> {
        json(
            &py.allow_threads(|| self.handle.story(case))
                .map_err(Error::session)?,
        )
    }

    /// The minimal set of ops whose repair rescues the answer (`attribute --decisive-set`):
    /// ddmin over counterfactual replays with the simulated provider, at most `budget` replays.
    #[pyo3(signature = (case, budget=64))]
    fn decisive_set(&self, py: Python<'_>, case: &str, budget: usize) -> PyResult<String> {
        let h = &self.handle;
        let c = h.case(case).map_err(Error::session)?;
        let set = py.allow_threads(|| {
            futures_executor::block_on(decisive_set(&SimulatedLlm, h.trace(), h.roles(), c, budget))
        });
        let set = set.map_err(|e| {
            Error::new(
                "attribution",
                format!("the replay of {case} failed: {e}"),
                "decisive sets replay the reference memory system's pipeline; other traces may not replay",
            )
        })?;
        json(&set)
    }

    /// The trace or the kept verdicts as `kind`: `smartcomment`, `results` (a MemTrace run
    /// file), `csv`, `annotations` (MemTraceBench), `html` or `markdown` (the report).
    fn export(&self, py: Python<'_>, kind: &str) -> PyResult<String> {
        Ok(py
            .allow_threads(|| self.handle.export(kind))
            .map_err(Error::session)?)
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
