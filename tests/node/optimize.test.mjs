// The Node build's prompt optimization against the local scripted LLM server: optimizeStep over
// the demo's info-flow verdicts (the optimizer played by tests/llm_server/scripts/optimize_step.json),
// then exportPrompts in each format; a step cancelled through an AbortSignal.
//   python3 tests/llm_server/server.py --port 8765 &
//   MEMTRACE_TEST_LLM_URL=http://127.0.0.1:8765 MEMTRACE_NODE_PKG=target/pkg-node node --test tests/node/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const pkg = resolve(root, process.env.MEMTRACE_NODE_PKG || 'target/pkg-node');
const { Trace, optimizeStep, exportPrompts } = createRequire(import.meta.url)(pkg);
const BASE = process.env.MEMTRACE_TEST_LLM_URL || 'http://127.0.0.1:8765';
const RUN = `${Date.now()}-${process.pid}`;
const IMPROVED = 'Keep every date: resolve relative dates.';
const demo = () => Trace.load(readFileSync(join(root, 'www/demo.json')), { name: 'demo.json' });
const provider = (base, model) => ({ kind: 'openai', baseUrl: `${base}/v1`, model, apiKey: 'sk-node-test', timeoutMs: 20000 });

test('optimizeStep rewrites the prompts the verdicts blame, exportPrompts writes them', async () => {
  const health = await fetch(`${BASE}/_health`).catch(() => null);
  assert.ok(health?.ok, `the scripted LLM server answers at ${BASE} (python3 tests/llm_server/server.py)`);
  const trace = demo();
  const verdicts = trace.attribute().filter((o) => !o.error);
  assert.ok(verdicts.length > 0, 'info-flow gives the demo verdicts');
  const model = `script:optimize_step@node-${RUN}`;
  const progress = [];
  const r = await optimizeStep([trace], verdicts, { provider: provider(BASE, model), onProgress: (p) => progress.push(p) });

  assert.ok(r.failures > 0, `verdicts map onto prompts: ${JSON.stringify(r.not_optimizable)}`);
  assert.equal(r.step.feedbacks.length, r.failures, 'one feedback per (target, failure)');
  assert.ok(r.step.feedbacks.every((f) => f.feedback === 'Keep every date.'));
  const targets = Object.keys(r.step.summaries);
  assert.deepEqual(r.step.edits.map((e) => e.target), targets, 'one edit per target with feedback');
  for (const e of r.step.edits) {
    // An update that drops a placeholder of the old prompt is refused (retried, then kept as it was).
    if (e.accepted) assert.equal(e.new_value, IMPROVED, JSON.stringify(e));
    else assert.ok(e.rejected.length > 0 && e.rejected[0].dropped.length > 0 && e.new_value === e.old_value, JSON.stringify(e));
    assert.ok(e.cases.length > 0 && e.cases.every((c) => verdicts.some((v) => v.case_id === c)));
  }
  const accepted = r.step.edits.filter((e) => e.accepted && e.new_value !== e.old_value);
  assert.ok(accepted.length > 0, `some prompt without placeholders was rewritten: ${JSON.stringify(r.step.edits.map((e) => [e.target, e.accepted]))}`);
  assert.equal(r.versions.filter((v) => v.version === 2).length, accepted.length);
  assert.ok(progress.length > 0 && progress.at(-1).stage === 'update', JSON.stringify(progress.at(-1)));
  const log = await (await fetch(`${BASE}/_log`)).json();
  assert.equal(log.filter((e) => e.body?.model === model).length, r.step.meter.calls, 'the meter counts every request');
  // The handle is lent, not taken: it still answers.
  assert.equal(trace.summary().failures, trace.cases().length);

  const [results] = exportPrompts('update_results');
  assert.equal(results.path, 'update_results.json');
  const keyed = JSON.parse(results.text);
  for (const e of accepted) {
    assert.equal(keyed[`${e.target}@2`].value, IMPROVED);
    assert.equal(keyed[`${e.target}@2`].parent, `${e.target}@1`);
  }
  const text = exportPrompts('text', r.versions);
  assert.ok(text.every((f) => f.path.startsWith('prompts/')));
  assert.ok(text.some((f) => f.path === `prompts/${accepted[0].target}@2.txt` && f.text === IMPROVED));
  assert.equal(exportPrompts('mem0')[0].path, 'mem0_config.json');
  assert.throws(() => exportPrompts('yaml'), (e) => e.name === 'MemtraceError' && e.kind === 'argument');
  await assert.rejects(async () => optimizeStep([trace, {}], verdicts, { provider: provider(BASE, model) }),
    (e) => e.kind === 'argument' && /traces\[1\]/.test(e.message));
  console.log(`node: optimizeStep, ${r.failures} failures on ${targets.length} targets, ${accepted.length} rewritten, ${r.step.meter.calls} calls`);
});

test('an AbortSignal cancels a step', async () => {
  const trace = demo();
  const controller = new AbortController();
  const run = optimizeStep([trace], undefined, {
    provider: provider(`${BASE}/_fault/slow`, `script:optimize_step@node-cancel-${RUN}`), signal: controller.signal,
  });
  await new Promise((r) => setTimeout(r, 300));
  const t0 = Date.now();
  controller.abort();
  await assert.rejects(run, (e) => e.name === 'MemtraceError' && e.kind === 'cancelled');
  assert.ok(Date.now() - t0 < 2000, `cancelled in ${Date.now() - t0} ms`);
});
