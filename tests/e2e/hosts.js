// The verdict rows of one file from each host: the CLI (`memtrace attribute FILE --json`), the
// JavaScript module in Node (`Trace.attribute()`), the Python package (`Verdict.to_dict()` of
// `memtrace.load(FILE).attribute()`) and the page (dropped, "Attribute all" with info-flow, the
// rows exported). Every host gives the session's `VerdictRow`; only the wall time differs between
// runs, so it is zeroed.
//   MEMTRACE_CLI (default target/debug/memtrace), MEMTRACE_NPM_PKG (target/npm/package),
//   MEMTRACE_PYTHON (a Python with the memtrace wheel installed; scripts/test's venv)
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.resolve(__dirname, '../..');
const cli = path.resolve(root, process.env.MEMTRACE_CLI || 'target/debug/memtrace');
const pkg = path.resolve(root, process.env.MEMTRACE_NPM_PKG || 'target/npm/package');
const python = process.env.MEMTRACE_PYTHON || 'python3';

/** Rows with `cost.wall_ms` zeroed: the one field two runs of the same file differ in. */
function comparable(rows) {
  return rows.map((r) => (r.cost ? { ...r, cost: { ...r.cost, wall_ms: 0 } } : r));
}

function parseLines(text) {
  return text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
}

function byCli(file) {
  assert.ok(fs.existsSync(cli), `no memtrace binary at ${cli}: cargo build -p memtrace-cli, or set MEMTRACE_CLI`);
  return comparable(parseLines(execFileSync(cli, ['attribute', file, '--json', '-q'],
    { encoding: 'utf8', maxBuffer: 1 << 28 })));
}

function byModule(file) {
  assert.ok(fs.existsSync(path.join(pkg, 'package.json')), `no npm package at ${pkg}: scripts/npm-pack --dev target/npm`);
  const { Trace } = require(pkg);
  const trace = Trace.load(fs.readFileSync(file), { name: path.basename(file) });
  try {
    return comparable(trace.attribute());
  } finally {
    trace.free();
  }
}

const PYTHON_ROWS = `
import json, sys
import memtrace
for path in sys.argv[1:]:
    print(json.dumps({"file": path, "rows": [v.to_dict() for v in memtrace.load(path).attribute()]}))
`;

/** The Python package's rows of every file, by file, from one process. */
function byPython(files) {
  const out = execFileSync(python, ['-c', PYTHON_ROWS, ...files], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const rows = {};
  for (const { file, rows: r } of parseLines(out)) rows[file] = comparable(r);
  assert.deepStrictEqual(Object.keys(rows).sort(), [...files].sort(), `${python} attributed every file`);
  return rows;
}

/** The page's rows: the file dropped, every case attributed with info-flow, the rows exported. */
async function byPage(browser, file, cases) {
  const { openPage, dropFiles, waitField } = require('./browser');
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
  const [d] = await Promise.all([page.waitForEvent('download'), page.click('#export-verdict-rows')]);
  const rows = parseLines(fs.readFileSync(await d.path(), 'utf8'));
  assert.deepStrictEqual(problems, [], 'no console errors');
  await context.close();
  return comparable(rows);
}

module.exports = { byCli, byModule, byPython, byPage, root };
