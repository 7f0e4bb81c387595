// The JavaScript module reads OTLP protobuf bytes (plain, gzip, zstd) as it reads their JSON: the
// exports of real instrumentation packages (tests/fixtures/otel) load to the same summary, and the
// verdict names the span that wrote the wrong answer (read from the JSON by tests/e2e/otel.js).
//   MEMTRACE_NODE_PKG=target/npm/package node --test tests/node/otlp.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const pkg = resolve(root, process.env.MEMTRACE_NODE_PKG || 'target/pkg-node');
assert.ok(existsSync(join(pkg, 'package.json')), `no Node build at ${pkg}: run wasm-pack build --target nodejs first`);
const require = createRequire(import.meta.url);
const { Trace } = require(pkg);
const { OTEL, answeringOp } = require(join(root, 'tests/e2e/otel.js'));

/** Summary, the attributed op and error type of one file's bytes, as the module gives them. */
function read(name) {
  const bytes = new Uint8Array(readFileSync(join(OTEL, name)));
  const t = Trace.load(bytes, { name });
  const summary = t.summary();
  const verdicts = t.attribute().map((o) => [o.op_id, o.error_type]);
  t.free();
  return { summary, verdicts };
}

for (const which of ['openinference', 'genai_spans', 'traceloop', 'genai_memory', 'langfuse']) {
  test(`${which}: protobuf bytes (plain, gzip, zstd) load as the JSON does and blame the answering span`, () => {
    const json = read(`${which}_traces.json`);
    assert.equal(json.summary.failures, 1);
    assert.deepEqual(json.verdicts, [[answeringOp([`${which}_traces.json`]), 'ResponseError']]);
    for (const ext of ['pb', 'pb.gz', 'pb.zst']) {
      assert.deepEqual(read(`${which}_traces.${ext}`), json, `${which}_traces.${ext}`);
    }
  });
}
