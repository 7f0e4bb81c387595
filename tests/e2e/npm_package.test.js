// The npm package in a browser: `npm pack` of the assembled package (scripts/npm-pack), the tarball
// installed into a scratch project, and a plain `<script type="module">` page that imports
// "memtrace-wasm" through an import map (no bundler), `await init()` (fetches the wasm), loads a LoCoMo
// fixture (plain and gzip-compressed) and attributes it — the same verdicts the Node build gives.
//   MEMTRACE_NPM_PKG=target/npm/package node --test tests/e2e/npm_package.test.js
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { launch, screenshot, FIXTURES } = require('./browser');

const root = path.resolve(__dirname, '../..');
const pkgDir = path.resolve(root, process.env.MEMTRACE_NPM_PKG || 'target/npm/package');
const FIXTURE = 'locomo_locomo-2.json';

const PAGE = `<!doctype html><meta charset="utf-8"><title>memtrace-wasm from npm</title><link rel="icon" href="data:,">
<script type="importmap">{"imports": {"memtrace-wasm": "/node_modules/memtrace-wasm/web/memtrace_wasm.js"}}</script>
<pre id="out">loading…</pre>
<script type="module">
import init, { Trace } from "memtrace-wasm";
const out = document.getElementById("out");
try {
  await init();
  const run = async (file) => {
    const bytes = new Uint8Array(await (await fetch(file)).arrayBuffer());
    const t = Trace.load(bytes, { name: "locomo-2" });
    const r = { failures: t.summary().failures,
      verdicts: t.attribute().map((o) => [o.case_id, o.error_type ?? null, o.op_id ?? null]) };
    t.free();
    return r;
  };
  const plain = await run("/${FIXTURE}"), gz = await run("/${FIXTURE}.gz");
  out.textContent = JSON.stringify({ plain, gzSame: JSON.stringify(plain) === JSON.stringify(gz) });
} catch (e) { out.textContent = "error: " + (e.message || e); }
</script>`;

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };

let browser;
let server;
let base;
let scratch;
test.before(async () => {
  assert.ok(fs.existsSync(path.join(pkgDir, 'package.json')),
    `no assembled npm package at ${pkgDir}: run scripts/npm-pack --dev target/npm first`);
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'memtrace-npm-browser-'));
  const [info] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: pkgDir, encoding: 'utf8' }));
  const project = path.join(scratch, 'project');
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'scratch', private: true }));
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', path.join(scratch, info.filename)],
    { cwd: project, stdio: 'inherit' });
  const bytes = fs.readFileSync(path.join(FIXTURES, FIXTURE));
  fs.writeFileSync(path.join(project, 'index.html'), PAGE);
  fs.writeFileSync(path.join(project, FIXTURE), bytes);
  fs.writeFileSync(path.join(project, `${FIXTURE}.gz`), require('node:zlib').gzipSync(bytes));
  server = http.createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname).replace(/^\/+/, '') || 'index.html';
    const file = path.resolve(project, rel);
    if (!file.startsWith(project) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] || 'application/octet-stream' }).end(fs.readFileSync(file));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}/`;
  browser = await launch();
});
test.after(async () => {
  await browser?.close();
  server?.close();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

test('a <script type=module> page imports the installed package, loads a trace (and its .gz) and attributes it', async () => {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  await page.goto(base);
  await page.waitForFunction(() => document.getElementById('out').textContent !== 'loading…', null, { timeout: 60000 });
  const text = await page.textContent('#out');
  assert.ok(!text.startsWith('error'), text);
  const got = JSON.parse(text);
  assert.ok(got.plain.failures > 0);
  assert.strictEqual(got.plain.verdicts.length, got.plain.failures);
  assert.ok(got.plain.verdicts.every(([, type, op]) => type && op), text);
  assert.ok(got.gzSame, 'the .gz trace gives the same verdicts');
  // The same verdicts as the package's Node build.
  const { Trace } = require(path.join(pkgDir, 'node/memtrace_wasm.js'));
  const t = Trace.load(fs.readFileSync(path.join(FIXTURES, FIXTURE)), { name: 'locomo-2' });
  const node = t.attribute().map((o) => [o.case_id, o.error_type ?? null, o.op_id ?? null]);
  t.free();
  assert.deepStrictEqual(got.plain.verdicts, node);
  await screenshot(page, 'npm-package-browser');
  assert.deepStrictEqual(problems, []);
});
