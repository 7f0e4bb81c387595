// The Node build of the JavaScript module (wasm-pack build --target nodejs): load a smartcomment
// fixture, attribute it with info-flow, check the verdicts against its annotations, and check
// the package's public types have no `any`.
//   MEMTRACE_NODE_PKG=target/npm/package node --test tests/node/   (scripts/npm-pack --dev target/npm; or a
//   plain wasm-pack --target nodejs build)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const pkg = resolve(root, process.env.MEMTRACE_NODE_PKG || 'target/pkg-node');
const fixtures = resolve(root, 'tests/fixtures/smartcomment/locomo');
assert.ok(existsSync(join(pkg, 'package.json')), `no Node build at ${pkg}: run wasm-pack build --target nodejs first`);
const { Trace, version } = createRequire(import.meta.url)(pkg);

test('a LoCoMo smartcomment fixture attributes to its annotations', () => {
  let annotated = 0;
  let agree = 0;
  for (const name of ['locomo_locomo-1.json', 'locomo_locomo-2.json']) {
    const trace = Trace.load(readFileSync(join(fixtures, name)), { name });
    const cases = trace.cases();
    assert.equal(trace.summary().failures, cases.length);
    const outcomes = trace.attribute();
    assert.equal(outcomes.length, cases.length);
    for (const [i, o] of outcomes.entries()) {
      const ann = cases[i].annotation;
      assert.equal(o.case_id, cases[i].query_id);
      if (!ann) continue;
      annotated += 1;
      if (o.op_id === ann.op_id && o.error_type === ann.error_type) agree += 1;
    }
    const run = JSON.parse(trace.resultsJson());
    assert.deepEqual(run.sampled_graph_paths, [name]);
    trace.free();
  }
  console.log(`node: info-flow agrees with ${agree}/${annotated} annotations (op and type)`);
  assert.ok(annotated >= 9);
  assert.equal(agree, annotated);
  assert.match(version(), /^\d+\.\d+\.\d+/);
});

test('errors are MemtraceError objects with kind, place and hint', () => {
  const e = (() => { try { Trace.load(new TextEncoder().encode('{"data": {"nodes": [')); } catch (x) { return x; } })();
  assert.ok(e instanceof Error);
  assert.equal(e.name, 'MemtraceError');
  assert.equal(e.kind, 'json');
  assert.equal(e.line, 1);
  assert.ok(e.column > 0 && e.hint.length > 0);
});

test('loadAsync gives the trace load gives, slice by slice, and stops on abort', async () => {
  const bytes = readFileSync(join(fixtures, 'locomo_locomo-1.json'));
  const whole = Trace.load(bytes);
  const seen = [];
  // A slice of 0.01 ms: a step or so each, so the load takes many slices.
  const sliced = await Trace.loadAsync(bytes, { sliceMs: 0.01, onProgress: (p) => seen.push(p) });
  assert.deepEqual(sliced.summary(), whole.summary());
  assert.deepEqual(sliced.cases(), whole.cases());
  assert.deepEqual(sliced.attribute(), whole.attribute());
  assert.ok(seen.length >= 3, `${seen.length} progress reports`);
  const fractions = seen.map((p) => p.fraction);
  assert.deepEqual(fractions, [...fractions].sort((a, b) => a - b), 'progress only grows');
  assert.ok(fractions.every((f) => f >= 0 && f <= 1));
  assert.ok(seen.some((p) => p.stage === 'parse'), JSON.stringify(seen.map((p) => p.stage)));
  whole.free();
  sliced.free();

  const controller = new AbortController();
  const pending = Trace.loadAsync(bytes, { sliceMs: 0.01, signal: controller.signal, onProgress: () => controller.abort() });
  await assert.rejects(pending, (e) => e.name === 'MemtraceError' && e.kind === 'cancelled');
  await assert.rejects(Trace.loadAsync(new TextEncoder().encode('{"data": {"nodes": [')),
    (e) => e.name === 'MemtraceError' && e.kind === 'json' && e.line === 1);
  await assert.rejects(async () => Trace.loadAsync(bytes, { lenent: true }),
    (e) => e.name === 'MemtraceError' && e.kind === 'argument' && /lenent/.test(e.message));
});

test('the package is npm-ready and its types have no any', () => {
  const meta = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
  for (const k of ['name', 'version', 'license', 'files', 'types']) assert.ok(meta[k], `package.json has ${k}`);
  assert.ok(existsSync(join(pkg, 'README.md')), 'README.md is packed');
  // The Node declarations (the one package's `exports` map names them; a plain Node build's `types`).
  const dts = readFileSync(join(pkg, meta.exports?.['.']?.node?.require?.types ?? meta.types), 'utf8');
  assert.match(dts, /class Trace/);
  for (const m of ['summary', 'cases', 'roles', 'node', 'versions', 'slice', 'impact', 'search', 'startPoints',
    'renderFlatLog', 'attribute', 'attributeWith', 'counterfactual', 'toSmartcomment', 'resultsJson', 'csv',
    'annotations', 'reportHtml', 'reportMarkdown', 'free', 'loadAsync']) {
    assert.match(dts, new RegExp(`\\b${m}\\(`), `${m} is declared`);
  }
  const anys = dts.split('\n').filter((l) => /\bany\b/.test(l) && !/^\s*(\*|\/\/)/.test(l));
  assert.deepEqual(anys, [], 'no `any` in the public declarations');
});

test('a project bundle the page saved opens: the trace it had on screen, rows as the CLI prints', () => {
  const content = (name) => readFileSync(join(fixtures, name), 'utf8');
  const bundle = {
    memtrace_bundle: 1,
    traces: [{ name: 'a.json', content: content('locomo_locomo-1.json') },
      { name: 'b.json', content: content('locomo_locomo-2.json') }],
    settings: { current: 'b.json' },
  };
  const trace = Trace.load(Buffer.from(JSON.stringify(bundle)), { name: 'project.memtrace.json' });
  const alone = Trace.load(readFileSync(join(fixtures, 'locomo_locomo-2.json')));
  const rows = trace.attribute();
  assert.ok(rows.length > 0 && rows.every((r) => !r.error && r.question.id === r.case_id));
  assert.deepEqual(rows, alone.attribute(), 'the bundle\'s trace gives the rows of the file itself');
  assert.match(trace.resultsJson(), /project\.memtrace\.json:b\.json/);
  trace.free();
  alone.free();
});
