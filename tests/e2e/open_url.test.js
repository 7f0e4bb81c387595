// Opening by address and compressed files: `?url=` fetches a trace (here gzip-compressed) from another
// origin that allows it (CORS) and shows it; an address that refuses cross-origin reads, a 404, and a
// value that is no web address each give one error naming the address and what to do; dropped .gz
// traces of every format, and a .gz project bundle, load as their plain files do.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const zlib = require('node:zlib');
const { launch, screenshot, waitField, dropFiles, FIXTURES, BASE_URL } = require('./browser');

const SMART = fs.readFileSync(path.join(FIXTURES, 'locomo_locomo-2.json'));
const OTEL = path.resolve(__dirname, '../fixtures/otel');

let browser;
let server;
let origin;
const served = [];
test.before(async () => {
  browser = await launch();
  // A file host on another origin: /cors/* is served with Access-Control-Allow-Origin, /plain/*
  // without it (a browser must refuse the page that body), anything else is 404.
  server = http.createServer((req, res) => {
    served.push(req.url);
    const [, kind, name] = req.url.split('/');
    const cors = kind === 'cors' ? { 'access-control-allow-origin': '*' } : {};
    if (name !== 'locomo-2.json.gz' || !['cors', 'plain'].includes(kind)) {
      res.writeHead(404, cors).end('no such file');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/gzip', ...cors }).end(zlib.gzipSync(SMART));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${server.address().port}`;
});
test.after(async () => { await browser.close(); server.close(); });

/** A fresh browser context opened at the page with `query` (e.g. `?url=…`). */
async function openWith(query) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(BASE_URL + query);
  return { page, context, problems };
}

const activeTab = (page) => page.textContent('.tab.active .tab-name').then((t) => t.trim());

test('?url= fetches a gzip trace from a CORS origin and shows it, without the demo', async () => {
  const url = `${origin}/cors/locomo-2.json.gz`;
  const { page, context, problems } = await openWith(`?url=${encodeURIComponent(url)}`);
  await waitField(page, 'operations', 99);
  assert.strictEqual(await activeTab(page), 'locomo-2.json');
  assert.strictEqual(await page.locator('.tab').count(), 1, 'only the fetched trace, no demo');
  assert.strictEqual(await page.locator('#load-errors .error').count(), 0);
  assert.ok(served.includes('/cors/locomo-2.json.gz'), `fetched: ${served}`);
  await screenshot(page, 'open-url-gzip');
  assert.deepStrictEqual(problems, []);
  await context.close();
});

for (const [what, query, want] of [
  ['a host without CORS', () => `/plain/locomo-2.json.gz`, [/could not fetch/, /CORS/, /drop it here/]],
  ['a missing file', () => `/cors/missing.json`, [/HTTP 404/, /check the address/]],
]) {
  test(`?url= of ${what}: one error naming the address and what to do`, async () => {
    const url = origin + query();
    const { page, context } = await openWith(`?url=${encodeURIComponent(url)}`);
    await page.waitForSelector('#load-errors .error', { timeout: 20000 });
    const text = await page.textContent('#load-errors');
    assert.ok(text.includes(url), `the error names ${url}: ${text}`);
    for (const re of want) assert.match(text, re);
    assert.strictEqual(await page.locator('.tab').count(), 0, 'nothing loaded');
    await screenshot(page, `open-url-${what.replace(/\W+/g, '-')}`);
    await context.close();
  });
}

test('?url= that is no http(s) address says so and fetches nothing', async () => {
  const { page, context } = await openWith('?url=' + encodeURIComponent('file:///etc/passwd'));
  await page.waitForSelector('#load-errors .error', { timeout: 20000 });
  const text = await page.textContent('#load-errors');
  assert.match(text, /file:\/\/\/etc\/passwd/);
  assert.match(text, /only http: and https:/);
  await context.close();
});

test('dropped .gz traces (smartcomment, OTLP JSON, OTLP protobuf) and a .gz bundle load like their plain files', async () => {
  const { page, context, problems } = await openWith('');
  await page.waitForSelector('#summary', { timeout: 20000 });
  const cases = [
    ['locomo_locomo-2.json', SMART],
    ['openinference_traces.json', fs.readFileSync(path.join(OTEL, 'openinference_traces.json'))],
    ['genai_traces.pb', fs.readFileSync(path.join(OTEL, 'genai_traces.pb'))],
  ];
  for (const [name, plain] of cases) {
    // The plain file first: what the .gz one must equal.
    await dropFiles(page, [{ name, bytes: plain }]);
    await page.waitForFunction((n) => document.querySelector('.tab.active .tab-name')?.textContent.trim() === n,
      name, { timeout: 20000 });
    const want = await page.textContent('#summary');
    await page.click('.tab.active .tab-close');
    await dropFiles(page, [{ name: `${name}.gz`, bytes: zlib.gzipSync(plain) }]);
    await page.waitForFunction((n) => document.querySelector('.tab.active .tab-name')?.textContent.trim() === n,
      name, { timeout: 20000 });
    assert.strictEqual(await page.textContent('#summary'), want, `${name}.gz shows what ${name} shows`);
  }
  const bundle = JSON.stringify({ memtrace_bundle: 1, traces: [{ name: 'in-bundle.json', content: SMART.toString('utf8') }], settings: {} });
  await dropFiles(page, [{ name: 'project.json.gz', bytes: zlib.gzipSync(bundle) }]);
  await page.waitForFunction(() => document.querySelector('.tab.active .tab-name')?.textContent.trim() === 'in-bundle.json',
    null, { timeout: 20000 });
  await waitField(page, 'operations', 99);
  // A file that starts like gzip but is cut short: an error that says so.
  await dropFiles(page, [{ name: 'broken.json.gz', bytes: zlib.gzipSync(SMART).subarray(0, 200) }]);
  await page.waitForSelector('#load-errors .error', { timeout: 20000 });
  assert.match(await page.textContent('#load-errors'), /broken\.json\.gz[\s\S]*gzip body but does not decompress/);
  await screenshot(page, 'open-gz-dropped');
  assert.deepStrictEqual(problems, []);
  await context.close();
});
