// Shared helpers for the e2e suite: launch Debian's Chromium, open the page, drop files, save screenshots.
const { chromium } = require('playwright-core');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const BASE_URL = process.env.MEMTRACE_E2E_URL || 'http://127.0.0.1:8080/';
const ARTIFACTS = path.join(__dirname, 'artifacts');
const FIXTURES = path.resolve(__dirname, '../fixtures/smartcomment/locomo');

async function launch(extra = []) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', ...extra],
  });
}

/** Opens the page and collects page errors and console errors, which tests assert are empty.
 *  `init`: a function run in the page before its own scripts (the benchmark's probes);
 *  `deviceScaleFactor`: device pixels per CSS pixel. */
async function openPage(browser, { init, deviceScaleFactor = 1 } = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, deviceScaleFactor, acceptDownloads: true });
  const page = await context.newPage();
  if (init) await page.addInitScript(init);
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  await page.goto(BASE_URL);
  return { page, context, problems };
}

/** Drops files on the page as a user would: a real DataTransfer through dragover + drop events. */
async function dropFiles(page, files, selector = '#drop-zone') {
  const payload = files.map((f) => ({ name: f.name, b64: Buffer.from(f.bytes).toString('base64') }));
  const dt = await page.evaluateHandle((items) => {
    const dt = new DataTransfer();
    for (const { name, b64 } of items) {
      const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      dt.items.add(new File([bin], name, { type: 'application/json' }));
    }
    return dt;
  }, payload);
  await page.dispatchEvent(selector, 'dragover', { dataTransfer: dt });
  await page.dispatchEvent(selector, 'drop', { dataTransfer: dt });
}

async function screenshot(page, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Text of the summary field `key` once it equals `want` (or the test times out). */
async function waitField(page, key, want) {
  await page.waitForFunction(([k, w]) => {
    const el = document.querySelector(`#summary [data-field="${k}"]`);
    return el && el.textContent.trim() === w;
  }, [key, String(want)], { timeout: 15000 });
}

/** The folder of traces generated for the suite: MEMTRACE_E2E_TRACES (scripts/test sets it), else
 *  a fresh one written now by tests/e2e/gen-traces. */
function generatedTraces() {
  let dir = process.env.MEMTRACE_E2E_TRACES;
  if (!dir) {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memtrace-e2e-traces-'));
    execFileSync('bash', [path.join(__dirname, 'gen-traces'), dir], { stdio: 'inherit' });
  }
  return dir;
}

/** Drops one trace file ({ name, bytes }) and waits until its tab is the active one. */
async function dropTrace(page, file) {
  await page.waitForSelector('#summary', { timeout: 20000 });
  await dropFiles(page, [file]);
  await page.waitForFunction((n) => document.querySelector('.tab.active .tab-name')?.textContent.trim() === n,
    file.name, { timeout: 20000 });
}

/** One browser for the tests of a file: launched before them (after `prepare`, when given) and
 *  closed after them; the tests read it from the returned object's `browser`. */
function browserFor(test, prepare) {
  const held = {};
  test.before(async () => {
    if (prepare) await prepare();
    held.browser = await launch();
  });
  test.after(async () => { if (held.browser) await held.browser.close(); });
  return held;
}

/** Drops the LoCoMo fixture `locomo_locomo-1.json` and waits for its 6 failures in the list. */
async function dropLocomo1(page) {
  await page.waitForSelector('#summary', { timeout: 20000 });
  await dropFiles(page, [{ name: 'locomo_locomo-1.json', bytes: fs.readFileSync(path.join(FIXTURES, 'locomo_locomo-1.json')) }]);
  await waitField(page, 'failures', 6);
  await page.waitForFunction(() => document.querySelectorAll('#failures .failure').length === 6, null, { timeout: 15000 });
}

module.exports = {
  launch, openPage, dropFiles, dropTrace, dropLocomo1, browserFor, generatedTraces, screenshot, waitField,
  FIXTURES, BASE_URL,
};
