// Traces from real memory libraries (tests/data/lab/, issue #38) through the Node build of the
// JavaScript module: every trace of every library and tracer loads as the page and the CLI load
// it (gzip-compressed OTLP JSON Lines), every failure its ground truth injected is found with no
// rule, and info-flow gives each case a verdict.
//   MEMTRACE_NODE_PKG=target/npm/package node --test tests/node/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const pkg = resolve(root, process.env.MEMTRACE_NODE_PKG || 'target/pkg-node');
const lab = resolve(root, 'tests/data/lab');
assert.ok(existsSync(join(pkg, 'package.json')), `no Node build at ${pkg}: run wasm-pack build --target nodejs first`);
const { Trace } = createRequire(import.meta.url)(pkg);

/** Each `library/tracer` folder of the corpus with its traces. */
function corpus() {
  const dirs = [];
  // voices/ is the lab's voices corpus, with a test of its own (tests/lab_voices.rs).
  for (const lib of readdirSync(lab, { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== 'voices')) {
    for (const fmt of readdirSync(join(lab, lib.name), { withFileTypes: true }).filter((d) => d.isDirectory())) {
      const dir = join(lab, lib.name, fmt.name);
      const traces = readdirSync(dir).filter((f) => f.endsWith('.jsonl.gz')).sort();
      dirs.push({ group: `${lib.name}/${fmt.name}`, dir, traces });
    }
  }
  return dirs;
}

const groups = corpus();

test('the lab corpus is here: three libraries, mem0ai with three tracers', () => {
  const names = groups.map((g) => g.group).sort();
  for (const g of ['mem0ai/openinference', 'mem0ai/genai', 'mem0ai/openllmetry', 'langmem/openinference', 'graphiti/openinference']) {
    assert.ok(names.includes(g), `no ${g} in ${lab}: ${names.join(', ')}`);
  }
  for (const g of groups) assert.ok(g.traces.length > 0, `${g.group}: no traces`);
});

for (const { group, dir, traces } of groups) {
  test(`${group}: every trace loads, every injected failure is found, each gets a verdict`, () => {
    let injected = 0;
    for (const name of traces) {
      const sidecar = join(dir, name.replace(/\.jsonl\.gz$/, '.annotations.json'));
      const truth = JSON.parse(readFileSync(sidecar, 'utf8'));
      const records = Array.isArray(truth) ? truth : truth.annotations;
      const trace = Trace.load(readFileSync(join(dir, name)), { name });
      const found = new Set(trace.cases().map((c) => c.query_id));
      for (const r of records) {
        assert.ok(found.has(r.query_id), `${group}/${name}: the injected failure ${r.query_id} (${r.query}) is not found`);
      }
      injected += records.length;
      for (const o of trace.attribute()) {
        assert.ok(!o.error && o.op_id, `${group}/${name}: ${o.case_id}: ${o.error}`);
      }
      trace.free();
    }
    console.log(`node: ${group}: ${traces.length} traces, ${injected} injected failures found`);
    assert.ok(injected > 0, `${group}: no injected failure`);
  });
}
