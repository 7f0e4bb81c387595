//! The `Trace` handle: load once, ask many times. The failure cases and the indexes (graph,
//! search, flat log, roles) are built on first use and kept; verdicts from `attribute` /
//! `attributeWith` are kept for the exports.

use std::cell::{LazyCell, OnceCell, RefCell};
use std::rc::Rc;

use memtrace::algo::render::flat_log::FlatLog;
use memtrace::algo::start_points::start_point_query;
use memtrace::algo::{
    backward_slice, failure_slice, forward_impact, lifeline, start_points, GraphIndex,
    MessageIndex, NodeRef, RegexOptions, SearchIndex, Slice, StartPointOptions,
};
use memtrace::attribution::results::{self, Labels, Verdicts};
use memtrace::attribution::{InfoFlow, RoleConfig, Roles};
use memtrace::format::{smartcomment, Format, Indexed};
use memtrace::model::{FailRule, FailureCase};
use memtrace::report;
use wasm_bindgen::prelude::*;

use crate::error::{JsResult, MemtraceError};
use crate::types::{
    method, options, to_js, AttributeOptions, CaseOutcome, Lifeline, LoadOptions, LogRange,
    LogWindow, Node, NodeSet, SearchOptions, StartPoint, VersionEntry,
};

/// The trace of a handle: read and indexed by `Trace.load`, its failure cases found on the first
/// use (most queries need them; loading alone does not).
type Lazy = LazyCell<memtrace::Trace, Box<dyn FnOnce() -> memtrace::Trace>>;

/// What a handle holds; shared with the async methods' futures.
pub(crate) struct Inner {
    pub trace: Lazy,
    pub format: Format,
    pub problems: Vec<memtrace::FormatError>,
    pub name: String,
    pub role_config: RoleConfig,
    roles: OnceCell<Roles>,
    graph: OnceCell<GraphIndex>,
    search: OnceCell<SearchIndex>,
    log: OnceCell<FlatLog>,
    messages: OnceCell<MessageIndex>,
    /// Verdicts by case id, the latest per case.
    pub verdicts: RefCell<Verdicts>,
}

impl Inner {
    pub fn roles(&self) -> &Roles {
        self.roles
            .get_or_init(|| Roles::infer(&self.trace, &self.role_config))
    }

    fn graph(&self) -> Result<&GraphIndex, MemtraceError> {
        if let Some(g) = self.graph.get() {
            return Ok(g);
        }
        let g = GraphIndex::build(&self.trace)?;
        Ok(self.graph.get_or_init(|| g))
    }

    fn log(&self) -> Result<&FlatLog, MemtraceError> {
        if let Some(l) = self.log.get() {
            return Ok(l);
        }
        let l = FlatLog::build(&self.trace)?;
        Ok(self.log.get_or_init(|| l))
    }

    /// The case with this query id.
    pub fn case(&self, case_id: &str) -> Result<&FailureCase, MemtraceError> {
        self.trace
            .cases
            .iter()
            .find(|c| c.query_id == case_id)
            .ok_or_else(|| MemtraceError::not_found("failed case", case_id))
    }

    /// One case, or all of them.
    pub fn cases(&self, case_id: Option<&str>) -> Result<Vec<FailureCase>, MemtraceError> {
        match case_id {
            Some(id) => Ok(vec![self.case(id)?.clone()]),
            None => Ok(self.trace.cases.clone()),
        }
    }

    /// Keeps `outcomes` as the verdicts of their cases.
    pub fn keep(&self, outcomes: &[CaseOutcome]) {
        let mut v = self.verdicts.borrow_mut();
        for o in outcomes {
            let entry = match (&o.attribution, &o.error) {
                (Some(a), _) => Ok(a.clone()),
                (None, e) => Err(e.clone().unwrap_or_default()),
            };
            v.insert(o.case_id.clone(), entry);
        }
    }

    fn node_ref(&self, id: &str) -> Result<NodeRef, MemtraceError> {
        if let Some(v) = self.trace.var_by_id(id) {
            return Ok(NodeRef::Var(v));
        }
        self.trace
            .op_by_id(id)
            .map(NodeRef::Op)
            .ok_or_else(|| MemtraceError::not_found("node", id))
    }

    fn ids(&self, s: &Slice) -> NodeSet {
        NodeSet {
            variables: s
                .vars
                .iter()
                .map(|&v| self.trace.var(v).full_node_id.clone())
                .collect(),
            operations: s
                .ops
                .iter()
                .map(|&o| self.trace.op(o).op_id.clone())
                .collect(),
        }
    }

    fn op_ids(&self, ops: &[memtrace::model::OpIx]) -> Vec<String> {
        ops.iter()
            .map(|&o| self.trace.op(o).op_id.clone())
            .collect()
    }

    fn var_ids(&self, vars: &[memtrace::model::VarIx]) -> Vec<String> {
        vars.iter()
            .map(|&v| self.trace.var(v).full_node_id.clone())
            .collect()
    }
}

/// A loaded trace. Free it with `free()` when done (or let `using` / the GC do it).
#[wasm_bindgen]
pub struct Trace {
    pub(crate) inner: Rc<Inner>,
}

fn load_inner(bytes: &[u8], opts: LoadOptions) -> Result<Inner, MemtraceError> {
    let indexed = memtrace::format::load_indexed(bytes, core_options(&opts)?)?;
    finish(indexed, opts)
}

/// The core's load options from the module's.
pub(crate) fn core_options(opts: &LoadOptions) -> Result<memtrace::LoadOptions, MemtraceError> {
    let format = opts
        .format
        .as_deref()
        .map(Format::parse)
        .transpose()
        .map_err(MemtraceError::argument)?;
    let max_file_bytes = match opts.max_bytes {
        Some(0) => {
            return Err(MemtraceError::argument(
                "maxBytes must be at least 1 (bytes); leave it out for the default of 512 MiB",
            ))
        }
        Some(n) => n,
        None => memtrace::format::limits::MAX_FILE_BYTES,
    };
    Ok(memtrace::LoadOptions {
        format,
        lenient: opts.lenient,
        judge_threshold: opts.judge_threshold,
        limits: memtrace::format::Limits::with_max_file_bytes(max_file_bytes),
    })
}

/// A handle's contents from an indexed trace: role overrides read, the user's failure rules
/// parsed (and applied when the cases are first needed).
pub(crate) fn finish(indexed: Indexed, opts: LoadOptions) -> Result<Inner, MemtraceError> {
    let rules = rules(&opts)?;
    let (format, problems) = (indexed.format(), indexed.problems().to_vec());
    let trace: Lazy = LazyCell::new(Box::new(move || indexed.find_with(&rules, &[]).trace));
    inner(trace, format, problems, opts)
}

/// [`finish`] for a trace whose cases were found as it loaded (`Trace.loadAsync`): found again
/// only when the user gave rules.
#[cfg(target_arch = "wasm32")]
pub(crate) fn finish_loaded(
    loaded: memtrace::format::Loaded,
    opts: LoadOptions,
) -> Result<Inner, MemtraceError> {
    let rules = rules(&opts)?;
    let memtrace::format::Loaded {
        mut trace,
        format,
        problems,
    } = loaded;
    memtrace::session::find_cases(&mut trace, &rules, &[], None)?;
    let trace: Lazy = LazyCell::new(Box::new(move || trace));
    inner(trace, format, problems, opts)
}

fn rules(opts: &LoadOptions) -> Result<Vec<FailRule>, MemtraceError> {
    Ok(FailRule::parse_list(&opts.failed_if)?)
}

fn inner(
    trace: Lazy,
    format: Format,
    problems: Vec<memtrace::FormatError>,
    opts: LoadOptions,
) -> Result<Inner, MemtraceError> {
    let mut role_config = RoleConfig::default();
    for spec in &opts.roles {
        role_config
            .add_override(spec)
            .map_err(MemtraceError::argument)?;
    }
    Ok(Inner {
        name: opts.name.unwrap_or_else(|| "trace.json".to_owned()),
        trace,
        format,
        problems,
        role_config,
        roles: OnceCell::new(),
        graph: OnceCell::new(),
        search: OnceCell::new(),
        log: OnceCell::new(),
        messages: OnceCell::new(),
        verdicts: RefCell::default(),
    })
}

/// Runs info-flow over `cases`.
pub(crate) fn infoflow(inner: &Inner, cases: &[FailureCase]) -> Vec<CaseOutcome> {
    let roles = inner.roles();
    cases
        .iter()
        .map(|c| {
            let r = InfoFlow::default().attribute_with(&inner.trace, roles, c);
            CaseOutcome {
                case_id: c.query_id.clone(),
                error: r.as_ref().err().map(ToString::to_string),
                attribution: r.ok(),
            }
        })
        .collect()
}

// Every method throws a `MemtraceError` (see `error.rs`) on failure; each says when.
#[allow(clippy::missing_errors_doc)]
#[wasm_bindgen]
impl Trace {
    /// Reads a trace (smartcomment / MemTraceBench JSON, OTLP JSON or JSON Lines, Langfuse),
    /// the format detected from the content unless `options.format` names it. It is read,
    /// checked and indexed here; its failed questions are found on the first query.
    ///
    /// # Errors
    /// Throws a `MemtraceError` (`kind`, `path` or `line`/`column`, `hint`): every error of the
    /// file is found here, none is left to a query.
    #[wasm_bindgen(
        unchecked_return_type = "Trace",
        js_name = load
    )]
    pub fn load(
        bytes: &[u8],
        #[wasm_bindgen(unchecked_param_type = "LoadOptions | undefined")] options_: JsValue,
    ) -> JsResult<Trace> {
        let opts: LoadOptions = options(options_, "Trace.load options")?;
        Ok(Trace {
            inner: Rc::new(load_inner(bytes, opts)?),
        })
    }

    /// Counts: sessions, operations, variables, edges, failures, annotations per type.
    #[wasm_bindgen(unchecked_return_type = "Summary")]
    pub fn summary(&self) -> JsResult<JsValue> {
        to_js(&self.inner.trace.summary(self.inner.format.as_str()))
    }

    /// In lenient mode, what was dropped while loading (empty otherwise).
    #[wasm_bindgen(unchecked_return_type = "FormatError[]")]
    pub fn problems(&self) -> JsResult<JsValue> {
        to_js(&self.inner.problems)
    }

    /// The failed questions, in file order.
    #[wasm_bindgen(unchecked_return_type = "FailureCase[]")]
    pub fn cases(&self) -> JsResult<JsValue> {
        to_js(&self.inner.trace.cases)
    }

    /// Each op name's pipeline role, how many ops have it and why.
    #[wasm_bindgen(unchecked_return_type = "NameRole[]")]
    pub fn roles(&self) -> JsResult<JsValue> {
        to_js(&self.inner.roles().by_name(&self.inner.trace))
    }

    /// A variable version (`full_node_id`) or an operation (`op_id`) with its neighbours.
    ///
    /// # Errors
    /// `not_found` for an id the trace lacks.
    #[wasm_bindgen(unchecked_return_type = "Node")]
    pub fn node(&self, id: &str) -> JsResult<JsValue> {
        let i = &self.inner;
        let t = &i.trace;
        let node = match i.node_ref(id)? {
            NodeRef::Var(v) => Node {
                kind: "variable",
                id: id.to_owned(),
                record: serde_json::to_value(t.var(v)).unwrap_or_default(),
                inputs: i.op_ids(t.flow.producers.get(v.get()).map_or(&[], Vec::as_slice)),
                outputs: i.op_ids(t.flow.consumers.get(v.get()).map_or(&[], Vec::as_slice)),
            },
            NodeRef::Op(o) => Node {
                kind: "operation",
                id: id.to_owned(),
                record: serde_json::to_value(t.op(o)).unwrap_or_default(),
                inputs: i.var_ids(t.flow.op_inputs.get(o.get()).map_or(&[], Vec::as_slice)),
                outputs: i.var_ids(t.flow.op_outputs.get(o.get()).map_or(&[], Vec::as_slice)),
            },
        };
        to_js(&node)
    }

    /// The versions of one variable identity (`full_name`, e.g. one memory unit).
    ///
    /// # Errors
    /// `not_found` for an identity the trace lacks.
    #[wasm_bindgen(unchecked_return_type = "Lifeline")]
    pub fn versions(&self, identity: &str) -> JsResult<JsValue> {
        let i = &self.inner;
        let l = lifeline(&i.trace, identity)
            .map_err(|_| MemtraceError::not_found("variable identity (full_name)", identity))?;
        to_js(&Lifeline {
            identity: l.identity.clone(),
            versions: l
                .versions
                .iter()
                .map(|v| VersionEntry {
                    id: i.trace.var(v.var).full_node_id.clone(),
                    version: v.version,
                    kind: v.kind,
                    created_at: v.created_at.clone(),
                    made_by: i.op_ids(&v.made_by),
                    read_by: i.op_ids(&v.read_by),
                })
                .collect(),
            ended_by: l.ended_by.map(|o| i.trace.op(o).op_id.clone()),
        })
    }

    /// The backward slice of a failed case (its answer and everything it depends on), or of
    /// any node.
    ///
    /// # Errors
    /// `not_found` for an unknown id.
    #[wasm_bindgen(unchecked_return_type = "NodeSet")]
    pub fn slice(&self, id: &str) -> JsResult<JsValue> {
        let i = &self.inner;
        let g = i.graph()?;
        let s = match i.trace.cases.iter().find(|c| c.query_id == id) {
            Some(case) => failure_slice(&i.trace, g, case).map_err(MemtraceError::from)?,
            None => backward_slice(g, &[i.node_ref(id)?]),
        };
        to_js(&i.ids(&s))
    }

    /// Everything a node could have influenced (itself included).
    ///
    /// # Errors
    /// `not_found` for an unknown id.
    #[wasm_bindgen(unchecked_return_type = "NodeSet")]
    pub fn impact(&self, id: &str) -> JsResult<JsValue> {
        let i = &self.inner;
        let s = forward_impact(i.graph()?, &[i.node_ref(id)?]);
        to_js(&i.ids(&s))
    }

    /// Variables whose values match `query`: BM25 ranked, or regex matches in file order.
    ///
    /// # Errors
    /// `regex` for a bad pattern; `argument` for bad options.
    #[wasm_bindgen(unchecked_return_type = "Hit[]")]
    pub fn search(
        &self,
        query: &str,
        #[wasm_bindgen(unchecked_param_type = "SearchOptions | undefined")] options_: JsValue,
    ) -> JsResult<JsValue> {
        let o: SearchOptions = options(options_, "search options")?;
        let index = self
            .inner
            .search
            .get_or_init(|| SearchIndex::build(&self.inner.trace));
        let k = o.k.unwrap_or(20);
        let hits = if o.regex {
            let opts = RegexOptions {
                case_insensitive: o.ignore_case,
                literal: false,
                max_hits: k,
                context_chars: 60,
            };
            index.regex(query, &opts).map_err(MemtraceError::from)?
        } else {
            index.bm25(query, k)
        };
        to_js(&hits)
    }

    /// The `k` messages most likely to hold a case's evidence, best first (BM25 and character
    /// n-grams over its question and gold answers, fused).
    ///
    /// # Errors
    /// `not_found` for an unknown case.
    #[wasm_bindgen(js_name = startPoints, unchecked_return_type = "StartPoint[]")]
    pub fn start_points(&self, case_id: &str, k: usize) -> JsResult<JsValue> {
        let i = &self.inner;
        let case = i.case(case_id)?;
        let opts = StartPointOptions {
            limit: k,
            ..StartPointOptions::default()
        };
        let index = i
            .messages
            .get_or_init(|| MessageIndex::build(&i.trace, &StartPointOptions::default()));
        let ranked = start_points(index, &start_point_query(case), &opts, &[]);
        let out: Vec<StartPoint> = ranked
            .into_iter()
            .map(|(v, score)| StartPoint {
                id: i.trace.var(v).full_node_id.clone(),
                score,
            })
            .collect();
        to_js(&out)
    }

    /// A window of the flat log (every op as a text block, in time order), as the obstrace
    /// agent reads it.
    ///
    /// # Errors
    /// `argument` for a bad range.
    #[wasm_bindgen(js_name = renderFlatLog, unchecked_return_type = "LogWindow")]
    pub fn render_flat_log(
        &self,
        #[wasm_bindgen(unchecked_param_type = "LogRange | undefined")] range: JsValue,
    ) -> JsResult<JsValue> {
        let r: LogRange = options(range, "renderFlatLog range")?;
        let log = self.inner.log()?;
        to_js(&LogWindow {
            text: log
                .window(r.start, r.max_chars.unwrap_or(20_000))
                .to_owned(),
            start: r.start,
            total_chars: log.char_len(),
        })
    }

    /// Attributes one failed case, or all, with info-flow (no LLM, synchronous). The verdicts
    /// are kept for the exports.
    ///
    /// # Errors
    /// `not_found` for an unknown case; `argument` for a method other than `infoflow` (the LLM
    /// methods run through `attributeWith`).
    #[wasm_bindgen(unchecked_return_type = "CaseOutcome[]")]
    #[allow(clippy::needless_pass_by_value)] // wasm-bindgen passes strings in owned
    pub fn attribute(
        &self,
        case_id: Option<String>,
        #[wasm_bindgen(unchecked_param_type = "AttributeOptions | undefined")] options_: JsValue,
    ) -> JsResult<JsValue> {
        let o: AttributeOptions = options(options_, "attribute options")?;
        let method = method(o.method.as_deref())?;
        if method.uses_llm() {
            return Err(MemtraceError::argument(format!(
                "{method} calls an LLM; use attributeWith(caseId, {{method: \"{method}\", provider}})"
            ))
            .into());
        }
        let cases = self.inner.cases(case_id.as_deref())?;
        let out = infoflow(&self.inner, &cases);
        self.inner.keep(&out);
        to_js(&out)
    }

    /// The trace as smartcomment JSON (MemTraceBench annotations included): byte for byte the
    /// file for a smartcomment input, a conversion for OTLP and Langfuse.
    #[wasm_bindgen(js_name = toSmartcomment)]
    pub fn to_smartcomment(&self) -> JsResult<Vec<u8>> {
        smartcomment::write(&self.inner.trace).map_err(|e| {
            MemtraceError::new("argument", e.to_string(), "report this as a bug").into()
        })
    }

    /// The kept verdicts as a MemTrace run file (JSON text), scored against the file's
    /// annotations.
    #[wasm_bindgen(js_name = resultsJson)]
    pub fn results_json(&self) -> String {
        let i = &self.inner;
        let v = results::results_json(&i.name, &i.trace, &i.verdicts.borrow(), &Labels::new());
        serde_json::to_string_pretty(&v).unwrap_or_default()
    }

    /// The kept verdicts as CSV, one row per case, next to the file's annotations.
    pub fn csv(&self) -> String {
        let i = &self.inner;
        results::results_csv(&i.trace, &i.verdicts.borrow(), &Labels::new())
    }

    /// The kept verdicts as MemTraceBench annotations (JSON text; loads back as annotations).
    pub fn annotations(&self) -> String {
        let i = &self.inner;
        let labels = results::verdict_labels(&i.verdicts.borrow());
        serde_json::to_string_pretty(&results::annotations_json(&i.trace, &labels))
            .unwrap_or_default()
    }

    /// The diagnostic report of the kept verdicts, a self-contained HTML page.
    #[wasm_bindgen(js_name = reportHtml)]
    pub fn report_html(&self) -> String {
        report::html::render(&self.report())
    }

    /// The diagnostic report of the kept verdicts, as Markdown.
    #[wasm_bindgen(js_name = reportMarkdown)]
    pub fn report_markdown(&self) -> String {
        report::markdown::render(&self.report())
    }
}

impl Trace {
    fn report(&self) -> report::Report {
        let i = &self.inner;
        let attributions: Vec<_> = i
            .verdicts
            .borrow()
            .values()
            .filter_map(|v| v.as_ref().ok().cloned())
            .collect();
        report::build(
            &format!("memtrace report: {}", i.name),
            report::cases_from(&i.name, &i.trace, &attributions),
        )
    }

    /// Kept verdicts, for the tests and the async methods.
    pub fn verdicts(&self) -> Verdicts {
        self.inner.verdicts.borrow().clone()
    }
}
