// The Node build against the local scripted LLM server: attributeWith with an LLM method over
// Node's fetch, and a run cancelled through an AbortSignal.
//   python3 tests/llm_server/server.py --port 8765 &
//   MEMTRACE_TEST_LLM_URL=http://127.0.0.1:8765 MEMTRACE_NODE_PKG=target/pkg-node node --test tests/node/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const pkg = resolve(root, process.env.MEMTRACE_NODE_PKG || 'target/pkg-node');
const { Trace } = createRequire(import.meta.url)(pkg);
const BASE = process.env.MEMTRACE_TEST_LLM_URL || 'http://127.0.0.1:8765';
const RUN = `${Date.now()}-${process.pid}`;
const demo = () => Trace.load(readFileSync(join(root, 'www/demo.json')), { name: 'demo.json' });
const provider = (base, model) => ({ kind: 'openai', baseUrl: `${base}/v1`, model, apiKey: 'sk-node-test', timeoutMs: 20000 });

test('attributeWith runs graphtrace on every case over fetch', async () => {
  const health = await fetch(`${BASE}/_health`).catch(() => null);
  assert.ok(health?.ok, `the scripted LLM server answers at ${BASE} (python3 tests/llm_server/server.py)`);
  const trace = demo();
  const n = trace.cases().length;
  const progress = [];
  const out = await trace.attributeWith(undefined, {
    method: 'graphtrace', provider: provider(BASE, `auto@node-${RUN}`), concurrency: 2,
    onProgress: (p) => progress.push(p),
  });
  assert.equal(out.length, n);
  for (const o of out) {
    assert.equal(o.method, 'graphtrace', JSON.stringify(o));
    assert.match(o.op_id, /^op-/);
  }
  assert.equal(progress.length, n);
  assert.deepEqual([progress.at(-1).done, progress.at(-1).total], [n, n]);
  const log = await (await fetch(`${BASE}/_log`)).json();
  const mine = log.filter((e) => e.body?.model === `auto@node-${RUN}`);
  assert.ok(mine.length >= n, `${mine.length} requests for ${n} cases`);
  assert.ok(mine.every((e) => e.headers.authorization === 'Bearer sk-node-test'));
  console.log(`node: graphtrace over fetch, ${n} cases, ${mine.length} requests`);
});

test('an AbortSignal cancels a run', async () => {
  const trace = demo();
  const controller = new AbortController();
  const run = trace.attributeWith(undefined, {
    method: 'obstrace', provider: provider(`${BASE}/_fault/slow`, `auto@node-cancel-${RUN}`), signal: controller.signal,
  });
  await new Promise((r) => setTimeout(r, 300));
  const t0 = Date.now();
  controller.abort();
  await assert.rejects(run, (e) => e.name === 'MemtraceError' && e.kind === 'cancelled');
  assert.ok(Date.now() - t0 < 2000, `cancelled in ${Date.now() - t0} ms`);
});
