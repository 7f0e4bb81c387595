// The OTLP fixtures written by real instrumentation packages (tests/fixtures/otel/README.md) and,
// read from their JSON, the span that answered the judged question: the innermost span whose
// output attributes (or whose log record's) hold the answer. The e2e and Node tests check that
// memtrace's verdict names that span, found here without memtrace.
const fs = require('node:fs');
const path = require('node:path');

const OTEL = path.resolve(__dirname, '../fixtures/otel');
const ANSWER = 'Your cat is named Mochi.';

/** { name, bytes } of one fixture file. */
const file = (name) => ({ name, bytes: fs.readFileSync(path.join(OTEL, name)) });

/** The collector's file exporter writing traces and logs to one file: one JSON per line. */
function jsonLines(names) {
  const text = names.map((n) => JSON.stringify(JSON.parse(fs.readFileSync(path.join(OTEL, n), 'utf8')))).join('\n');
  return Buffer.from(`${text}\n`);
}

const hex = (b64) => Buffer.from(b64, 'base64').toString('hex');
const outputHolds = (attrs) => (attrs || []).some((a) => /output/.test(a.key) && JSON.stringify(a.value).includes(ANSWER));

/** `op-<span id>` of the span that wrote the answer, from the JSON exports `names`. */
function answeringOp(names) {
  const parent = new Map();
  const holders = new Set();
  for (const n of names) {
    const doc = JSON.parse(fs.readFileSync(path.join(OTEL, n), 'utf8'));
    for (const rs of doc.resourceSpans || []) {
      for (const ss of rs.scopeSpans || []) {
        for (const s of ss.spans || []) {
          parent.set(hex(s.spanId), s.parentSpanId ? hex(s.parentSpanId) : null);
          if (outputHolds(s.attributes)) holders.add(hex(s.spanId));
        }
      }
    }
    // Phoenix's exports, `{"data": [spans]}` with hex ids: its `Span` objects (ids in `context`,
    // attributes as one object) or bare OTLP spans (`/spans/otlpv1`).
    for (const s of doc.data || []) {
      const id = s.context ? s.context.span_id : s.span_id;
      parent.set(id, (s.context ? s.parent_id : s.parent_span_id) || null);
      const attrs = Array.isArray(s.attributes) ? s.attributes
        : Object.entries(s.attributes || {}).map(([key, value]) => ({ key, value }));
      if (outputHolds(attrs)) holders.add(id);
    }
    for (const rl of doc.resourceLogs || []) {
      for (const sl of rl.scopeLogs || []) {
        for (const r of sl.logRecords || []) if (r.spanId && outputHolds(r.attributes)) holders.add(hex(r.spanId));
      }
    }
  }
  const ancestors = (id) => {
    const out = new Set();
    for (let p = parent.get(id); p; p = parent.get(p)) out.add(p);
    return out;
  };
  const inner = [...holders].filter((h) => ![...holders].some((o) => o !== h && ancestors(o).has(h)));
  if (inner.length !== 1) throw new Error(`${names}: want one innermost span writing the answer, got ${inner}`);
  return `op-${inner[0]}`;
}

/** Each fixture as the page gets it: the files dropped, the JSON its answering span is read from. */
const FIXTURES = [
  ['openinference', [file('openinference_traces.json')], ['openinference_traces.json']],
  ['openinference protobuf', [file('openinference_traces.pb')], ['openinference_traces.json']],
  ['genai traces+logs (JSON Lines)', [{ name: 'genai.jsonl', bytes: jsonLines(['genai_traces.json', 'genai_logs.json']) }],
    ['genai_traces.json', 'genai_logs.json']],
  // The SDK's span and log exporters' two files, dropped together (logs first): one trace.
  ['genai traces + logs files', [file('genai_logs.json'), file('genai_traces.json')], ['genai_traces.json', 'genai_logs.json']],
  ['genai traces + logs protobuf files', [file('genai_logs.pb'), file('genai_traces.pb')], ['genai_traces.json', 'genai_logs.json']],
  ['genai_spans', [file('genai_spans_traces.json')], ['genai_spans_traces.json']],
  ['genai_spans protobuf', [file('genai_spans_traces.pb')], ['genai_spans_traces.json']],
  ['traceloop', [file('traceloop_traces.json')], ['traceloop_traces.json']],
  ['traceloop protobuf', [file('traceloop_traces.pb')], ['traceloop_traces.json']],
  ['traceloop protobuf gzip', [file('traceloop_traces.pb.gz')], ['traceloop_traces.json']],
  ['genai_memory', [file('genai_memory_traces.json')], ['genai_memory_traces.json']],
  ['genai_memory protobuf', [file('genai_memory_traces.pb')], ['genai_memory_traces.json']],
  ['genai_memory protobuf zstd', [file('genai_memory_traces.pb.zst')], ['genai_memory_traces.json']],
  ['langfuse SDK', [file('langfuse_traces.json')], ['langfuse_traces.json']],
  ['langfuse SDK protobuf gzip', [file('langfuse_traces.pb.gz')], ['langfuse_traces.json']],
  ['phoenix REST export', [file('phoenix_spans.json')], ['phoenix_spans.json']],
  ['phoenix OTLP span list', [file('phoenix_spans_otlpv1.json')], ['phoenix_spans_otlpv1.json']],
];

module.exports = { OTEL, ANSWER, FIXTURES, file, jsonLines, answeringOp };
