// Four hosts, one answer (issue #63): the CLI, the JavaScript module (Node), the Python package
// and the page give identical verdict rows (the session's `VerdictRow`, wall time aside) for the
// fixtures of every format and convention, and one lab file per library × tracer.
//   MEMTRACE_CLI=target/debug/memtrace MEMTRACE_NPM_PKG=target/npm/package \
//   MEMTRACE_PYTHON=~/.cache/memtrace/py-venv/bin/python node --test tests/e2e/four_hosts.test.js
const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { browserFor } = require('./browser');
const { byCli, byModule, byPython, byPage, root } = require('./hosts');

const FIXTURES = [
  'smartcomment/mem0_commented.json',
  'smartcomment/mem0_bare.json',
  'smartcomment/locomo/locomo_locomo-1.json',
  'smartcomment/locomo/locomo_locomo-2.json',
  'otel/openinference_traces.json',
  'otel/genai_memory_traces.json',
  'otel/genai_spans_traces.json',
  'otel/langfuse_traces.json',
  'otel/phoenix_spans.json',
  'otel/phoenix_spans_otlpv1.json',
  'otel/traceloop_traces.pb.zst',
  'otlp/mem0_openinference.jsonl',
  'otlp/mem0_genai_eval.jsonl',
  'otlp/mem0_llm_judge.jsonl',
  'otlp/mem0_unnamed_judge.jsonl',
  'langfuse/mem0_traces.json',
].map((f) => `tests/fixtures/${f}`);
const LAB = [
  'agno/openinference', 'graphiti/openinference', 'langmem/openinference', 'mem0ai/genai',
  'mem0ai/openinference', 'mem0ai/openllmetry', 'mem0v1/openinference',
].map((d) => `tests/data/lab/${d}/26.jsonl.gz`);
const FILES = [...FIXTURES, ...LAB].map((f) => path.join(root, f));

let python;
const held = browserFor(test, () => { python = byPython(FILES); });

for (const file of FILES) {
  test(`${path.relative(root, file)}: CLI rows = module rows = Python rows = page rows`, async () => {
    const cli = byCli(file);
    assert.ok(cli.length > 0, 'the CLI finds a failed case');
    assert.ok(cli.every((r) => !r.error), `the CLI attributes every case: ${JSON.stringify(cli)}`);
    assert.deepStrictEqual(byModule(file), cli, 'module = CLI');
    assert.deepStrictEqual(python[file], cli, 'Python = CLI');
    assert.deepStrictEqual(await byPage(held.browser, file, cli.length), cli, 'page = CLI');
  });
}
