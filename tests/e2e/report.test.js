// The diagnostic report and the optimization page open in Chromium as plain files (self-contained:
// no script, no external resource). They are written by the Rust tests `tests/report.rs` and
// `tests/optimize_loop.rs` into tests/e2e/artifacts/; run those first.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { launch, screenshot } = require('./browser');

const ARTIFACTS = path.join(__dirname, 'artifacts');
let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { await browser.close(); });

async function open(file) {
  const full = path.join(ARTIFACTS, file);
  assert.ok(fs.existsSync(full), `${full} is missing: run cargo test -p memtrace --test report --test optimize_loop first`);
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const problems = [];
  const requests = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()); });
  await page.goto(pathToFileURL(full).href);
  return { page, problems, requests };
}

test('the diagnostic report shows counts, charts and escaped cases', async () => {
  const { page, problems, requests } = await open('report.html');
  assert.match(await page.textContent('#count'), /\d+ attributed failures/);
  assert.strictEqual(await page.locator('svg').count(), 3);
  assert.ok(await page.locator('svg rect').count() >= 5);
  // The injected <script> in a case's question is shown as text, not run.
  assert.match(await page.textContent('#cases'), /<script>alert\(1\)<\/script>/);
  assert.strictEqual(await page.locator('script').count(), 0);
  assert.ok((await page.locator('#patterns li').count()) >= 1);
  await screenshot(page, 'report');
  assert.deepStrictEqual(problems, []);
  assert.deepStrictEqual(requests, []);
});

test('the optimization page charts accuracy per round and shows the edit', async () => {
  const { page, problems, requests } = await open('optimize.html');
  const heights = await page.$$eval('#accuracy-chart rect.train', (rs) => rs.map((r) => Number(r.getAttribute('height'))));
  assert.ok(heights.length >= 2 && heights[1] > heights[0], `train bars ${heights}`);
  assert.match(await page.textContent('body'), /fact-extraction-system-prompt@2/);
  await screenshot(page, 'optimize');
  assert.deepStrictEqual(problems, []);
  assert.deepStrictEqual(requests, []);
});
