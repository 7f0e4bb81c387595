//! The `Trace` handle: load once, ask many times. The failure cases and the indexes (graph,
//! search, flat log, roles) are built on first use and kept; verdicts from `attribute` /
//! `attributeWith` are kept for the exports.

use std::cell::OnceCell;
use std::rc::Rc;

use memtrace::algo::render::flat_log::FlatLog;
use memtrace::algo::start_points::start_point_query;
use memtrace::algo::{
    backward_slice, failure_slice, forward_impact, lifeline, start_points, GraphIndex,
    MessageIndex, NodeRef, RegexOptions, SearchIndex, Slice, StartPointOptions,
};
use memtrace::session::{Handle, ReadOptions};
use wasm_bindgen::prelude::*;

use crate::error::{JsResult, MemtraceError};
use crate::types::{
    options, to_js, AttributeOptions, Lifeline, LoadOptions, LogRange, LogWindow, Node, NodeSet,
    SearchOptions, StartPoint, VersionEntry,
};

/// What a handle holds (shared with the async methods' futures): the session's [`Handle`] (the
/// trace read, its cases found on the first use, roles, kept verdict rows, exports) and the
/// module's own query indexes, built on first use.
pub(crate) struct Inner {
    pub handle: Handle,
    search: OnceCell<SearchIndex>,
    log: OnceCell<FlatLog>,
    messages: OnceCell<MessageIndex>,
}

impl Inner {
    fn new(handle: Handle) -> Self {
        Inner {
            handle,
            search: OnceCell::new(),
            log: OnceCell::new(),
            messages: OnceCell::new(),
        }
    }

    fn graph(&self) -> Result<&GraphIndex, MemtraceError> {
        match self.handle.graph() {
            Some(g) => Ok(g),
            // Built again only to say why it cannot be.
            None => Err(GraphIndex::build(self.handle.trace()).err().map_or_else(
                || MemtraceError::argument("the trace has no graph"),
                Into::into,
            )),
        }
    }

    fn log(&self) -> Result<&FlatLog, MemtraceError> {
        if let Some(l) = self.log.get() {
            return Ok(l);
        }
        let l = FlatLog::build(self.handle.trace())?;
        Ok(self.log.get_or_init(|| l))
    }

    fn node_ref(&self, id: &str) -> Result<NodeRef, MemtraceError> {
        let t = self.handle.trace();
        if let Some(v) = t.var_by_id(id) {
            return Ok(NodeRef::Var(v));
        }
        t.op_by_id(id)
            .map(NodeRef::Op)
            .ok_or_else(|| MemtraceError::not_found("node", id))
    }

    fn ids(&self, s: &Slice) -> NodeSet {
        let t = self.handle.trace();
        NodeSet {
            variables: s
                .vars
                .iter()
                .map(|&v| t.var(v).full_node_id.clone())
                .collect(),
            operations: s.ops.iter().map(|&o| t.op(o).op_id.clone()).collect(),
        }
    }
}

/// A loaded trace. Free it with `free()` when done (or let `using` / the GC do it).
#[wasm_bindgen]
pub struct Trace {
    pub(crate) inner: Rc<Inner>,
}

/// The session's read options from the module's.
pub(crate) fn read_options(opts: &LoadOptions) -> Result<ReadOptions, MemtraceError> {
    if opts.max_bytes == Some(0) {
        return Err(MemtraceError::argument(
            "maxBytes must be at least 1 (bytes); leave it out for the default of 512 MiB",
        ));
    }
    Ok(ReadOptions {
        format: opts.format.clone(),
        lenient: opts.lenient,
        max_bytes: opts.max_bytes,
        judge_threshold: opts.judge_threshold,
        failed_if: opts.failed_if.clone(),
        roles: opts.roles.clone(),
        annotations: None,
    })
}

/// The name exports give a trace loaded with `opts`.
pub(crate) fn name(opts: &LoadOptions) -> String {
    opts.name.clone().unwrap_or_else(|| "trace.json".to_owned())
}

impl Trace {
    pub(crate) fn of(handle: Handle) -> Self {
        Trace {
            inner: Rc::new(Inner::new(handle)),
        }
    }
}

// Every method throws a `MemtraceError` (see `error.rs`) on failure; each says when.
#[allow(clippy::missing_errors_doc)]
#[wasm_bindgen]
impl Trace {
    /// Reads a trace (smartcomment / MemTraceBench JSON, OTLP JSON or JSON Lines, Langfuse),
    /// the format detected from the content unless `options.format` names it, or the trace on
    /// screen of a project bundle the page saved (with its saved roles, rules and marks). It is
    /// read, checked and indexed here; its failed questions are found on the first query.
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
        let handle = Handle::read(&name(&opts), bytes, &read_options(&opts)?, false)
            .map_err(MemtraceError::from)?;
        Ok(Trace::of(handle))
    }

    /// Counts: sessions, operations, variables, edges, failures, annotations per type.
    #[wasm_bindgen(unchecked_return_type = "Summary")]
    pub fn summary(&self) -> JsResult<JsValue> {
        let h = &self.inner.handle;
        to_js(&h.trace().summary(h.format.as_str()))
    }

    /// In lenient mode, what was dropped while loading (empty otherwise).
    #[wasm_bindgen(unchecked_return_type = "FormatError[]")]
    pub fn problems(&self) -> JsResult<JsValue> {
        to_js(&self.inner.handle.problems)
    }

    /// The failed questions, in file order.
    #[wasm_bindgen(unchecked_return_type = "FailureCase[]")]
    pub fn cases(&self) -> JsResult<JsValue> {
        to_js(&self.inner.handle.trace().cases)
    }

    /// Each op name's pipeline role, how many ops have it and why.
    #[wasm_bindgen(unchecked_return_type = "NameRole[]")]
    pub fn roles(&self) -> JsResult<JsValue> {
        let h = &self.inner.handle;
        to_js(&h.roles().by_name(h.trace()))
    }

    /// A variable version (`full_node_id`) or an operation (`op_id`) with its neighbours.
    ///
    /// # Errors
    /// `not_found` for an id the trace lacks.
    #[wasm_bindgen(unchecked_return_type = "Node")]
    pub fn node(&self, id: &str) -> JsResult<JsValue> {
        let i = &self.inner;
        let t = i.handle.trace();
        let ops = |ix: Option<&Vec<_>>| -> Vec<String> {
            ix.map_or(&[][..], Vec::as_slice)
                .iter()
                .map(|&o| t.op(o).op_id.clone())
                .collect()
        };
        let vars = |ix: Option<&Vec<_>>| -> Vec<String> {
            ix.map_or(&[][..], Vec::as_slice)
                .iter()
                .map(|&v| t.var(v).full_node_id.clone())
                .collect()
        };
        let node = match i.node_ref(id)? {
            NodeRef::Var(v) => Node {
                kind: "variable",
                id: id.to_owned(),
                record: serde_json::to_value(t.var(v)).unwrap_or_default(),
                inputs: ops(t.flow.producers.get(v.get())),
                outputs: ops(t.flow.consumers.get(v.get())),
            },
            NodeRef::Op(o) => Node {
                kind: "operation",
                id: id.to_owned(),
                record: serde_json::to_value(t.op(o)).unwrap_or_default(),
                inputs: vars(t.flow.op_inputs.get(o.get())),
                outputs: vars(t.flow.op_outputs.get(o.get())),
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
        let t = self.inner.handle.trace();
        let ops = |ix: &[_]| -> Vec<String> { ix.iter().map(|&o| t.op(o).op_id.clone()).collect() };
        let l = lifeline(t, identity)
            .map_err(|_| MemtraceError::not_found("variable identity (full_name)", identity))?;
        to_js(&Lifeline {
            identity: l.identity.clone(),
            versions: l
                .versions
                .iter()
                .map(|v| VersionEntry {
                    id: t.var(v.var).full_node_id.clone(),
                    version: v.version,
                    kind: v.kind,
                    created_at: v.created_at.clone(),
                    made_by: ops(&v.made_by),
                    read_by: ops(&v.read_by),
                })
                .collect(),
            ended_by: l.ended_by.map(|o| t.op(o).op_id.clone()),
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
        let t = i.handle.trace();
        let s = match t.cases.iter().find(|c| c.query_id == id) {
            Some(case) => failure_slice(t, g, case).map_err(MemtraceError::from)?,
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
            .get_or_init(|| SearchIndex::build(self.inner.handle.trace()));
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
        let t = i.handle.trace();
        let case = i.handle.case(case_id).map_err(MemtraceError::from)?;
        let opts = StartPointOptions {
            limit: k,
            ..StartPointOptions::default()
        };
        let index = i
            .messages
            .get_or_init(|| MessageIndex::build(t, &StartPointOptions::default()));
        let ranked = start_points(index, &start_point_query(case), &opts, &[]);
        let out: Vec<StartPoint> = ranked
            .into_iter()
            .map(|(v, score)| StartPoint {
                id: t.var(v).full_node_id.clone(),
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

    /// Attributes one failed case, or all, with info-flow (no LLM, synchronous): one verdict
    /// row per case, as `memtrace attribute --json` prints it. The verdicts are kept for the
    /// exports.
    ///
    /// # Errors
    /// `not_found` for an unknown case; `argument` for a method other than `infoflow` (the LLM
    /// methods run through `attributeWith`).
    #[wasm_bindgen(unchecked_return_type = "VerdictRow[]")]
    #[allow(clippy::needless_pass_by_value)] // wasm-bindgen passes strings in owned
    pub fn attribute(
        &self,
        case_id: Option<String>,
        #[wasm_bindgen(unchecked_param_type = "AttributeOptions | undefined")] options_: JsValue,
    ) -> JsResult<JsValue> {
        let o: AttributeOptions = options(options_, "attribute options")?;
        let h = &self.inner.handle;
        let plan = h.plan(&o.method_options()).map_err(MemtraceError::from)?;
        if plan.uses_llm() {
            let method = plan.name();
            return Err(MemtraceError::argument(format!(
                "{method} calls an LLM; use attributeWith(caseId, {{method: \"{method}\", provider}})"
            ))
            .into());
        }
        let cases = h.cases(case_id.as_deref()).map_err(MemtraceError::from)?;
        let rows = h.infoflow(&cases);
        h.keep(&rows);
        to_js(&rows)
    }

    /// The trace as smartcomment JSON (MemTraceBench annotations included): byte for byte the
    /// file for a smartcomment input, a conversion for OTLP and Langfuse.
    #[wasm_bindgen(js_name = toSmartcomment)]
    pub fn to_smartcomment(&self) -> JsResult<Vec<u8>> {
        Ok(self.export("smartcomment")?.into_bytes())
    }

    /// The kept verdicts as a MemTrace run file (JSON text), scored against the file's
    /// annotations.
    #[wasm_bindgen(js_name = resultsJson)]
    pub fn results_json(&self) -> String {
        self.export("results").unwrap_or_default()
    }

    /// The kept verdicts as CSV, one row per case, next to the file's annotations.
    pub fn csv(&self) -> String {
        self.export("csv").unwrap_or_default()
    }

    /// The kept verdicts as MemTraceBench annotations (JSON text; loads back as annotations).
    pub fn annotations(&self) -> String {
        self.export("annotations").unwrap_or_default()
    }

    /// The diagnostic report of the kept verdicts, a self-contained HTML page.
    #[wasm_bindgen(js_name = reportHtml)]
    pub fn report_html(&self) -> String {
        self.export("html").unwrap_or_default()
    }

    /// The diagnostic report of the kept verdicts, as Markdown.
    #[wasm_bindgen(js_name = reportMarkdown)]
    pub fn report_markdown(&self) -> String {
        self.export("markdown").unwrap_or_default()
    }
}

impl Trace {
    fn export(&self, kind: &str) -> Result<String, MemtraceError> {
        Ok(self.inner.handle.export(kind)?)
    }
}
