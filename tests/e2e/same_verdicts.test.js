// Three hosts, one application layer (issue #42): the same file attributed with info-flow by
// the CLI (`memtrace attribute --json`), by the JavaScript module (`Trace.attribute`, its Node
// build) and by the page (dropped, "attribute all", verdicts exported as JSON) gives the same
// verdict — op and error type — for every case, on a smartcomment, an OpenInference, a Langfuse
// SDK and a real-library (mem0ai) trace.
//   MEMTRACE_CLI=target/debug/memtrace MEMTRACE_NPM_PKG=target/npm/package node --test tests/e2e/same_verdicts.test.js
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { launch, openPage, dropFiles, waitField } = require('./browser');

const root = path.resolve(__dirname, '../..');
const cli = path.resolve(root, process.env.MEMTRACE_CLI || 'target/debug/memtrace');
const pkg = path.resolve(root, process.env.MEMTRACE_NPM_PKG || 'target/npm/package');
const FILES = [
  'tests/fixtures/smartcomment/locomo/locomo_locomo-1.json',
  'tests/fixtures/otel/openinference_traces.json',
  'tests/fixtures/otel/langfuse_traces.json',
  'tests/data/lab/mem0ai/openinference/26.jsonl.gz',
];

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { if (browser) await browser.close(); });

const key = (op, type) => `${op} ${type}`;

function byCli(file) {
  assert.ok(fs.existsSync(cli), `no memtrace binary at ${cli}: cargo build -p memtrace-cli, or set MEMTRACE_CLI`);
  const out = execFileSync(cli, ['attribute', file, '--json', '-q'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const verdicts = {};
  for (const line of out.split('\n').filter((l) => l.trim())) {
    const v = JSON.parse(line);
    assert.ok(!v.error, `CLI: ${v.case_id}: ${v.error}`);
    verdicts[v.case_id] = key(v.op_id, v.error_type);
  }
  return verdicts;
}

function byModule(file) {
  assert.ok(fs.existsSync(path.join(pkg, 'package.json')), `no npm package at ${pkg}: scripts/npm-pack --dev target/npm`);
  const { Trace } = require(pkg);
  const trace = Trace.load(fs.readFileSync(file), { name: path.basename(file) });
  const verdicts = {};
  for (const o of trace.attribute()) {
    assert.ok(!o.error, `module: ${o.case_id}: ${o.error}`);
    verdicts[o.case_id] = key(o.op_id, o.error_type);
  }
  trace.free();
  return verdicts;
}

async function byPage(file, cases) {
  const { page, context, problems } = await openPage(browser);
  await page.waitForSelector('#summary', { timeout: 20000 });
  await dropFiles(page, [{ name: path.basename(file), bytes: fs.readFileSync(file) }]);
  const tab = path.basename(file).replace(/\.(gz|zst)$/, '');
  await page.waitForFunction((n) => document.querySelector('.tab.active .tab-name')?.textContent.trim() === n,
    tab, { timeout: 30000 });
  await waitField(page, 'failures', cases);
  await page.selectOption('#attr-method', 'infoflow');
  await page.click('#attribute-all');
  await page.waitForFunction((n) => document.querySelectorAll('#failures .badge.verdict').length === n, cases,
    { timeout: 30000 });
  const [d] = await Promise.all([page.waitForEvent('download'), page.click('#export-verdicts-json')]);
  const run = JSON.parse(fs.readFileSync(await d.path(), 'utf8'));
  assert.deepStrictEqual(problems, [], 'no console errors');
  await context.close();
  const verdicts = {};
  for (const r of run.results) {
    const a = r.error_attribution_result;
    assert.ok(a, `page: ${r.query_id} not attributed`);
    verdicts[r.query_id] = key(a.op_id, a.error_type);
  }
  return verdicts;
}

for (const rel of FILES) {
  test(`${path.basename(rel)}: CLI JSON = module JSON = page export`, async () => {
    const file = path.join(root, rel);
    const cli = byCli(file);
    const cases = Object.keys(cli).length;
    assert.ok(cases > 0, `${rel}: the CLI finds no failed case`);
    assert.deepStrictEqual(byModule(file), cli, 'module = CLI');
    assert.deepStrictEqual(await byPage(file, cases), cli, 'page = CLI');
  });
}
