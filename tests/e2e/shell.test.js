// The app shell: demo on first visit, drop a real smartcomment file, drop a broken file.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { launch, openPage, dropFiles, screenshot, waitField, FIXTURES } = require('./browser');

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { await browser.close(); });

test('first visit shows the demo summary', async () => {
  const { page, problems } = await openPage(browser);
  await page.waitForSelector('#summary [data-field="operations"]', { timeout: 15000 });
  const name = await page.textContent('#summary [data-field="name"]');
  assert.match(name, /demo/);
  const failures = Number(await page.textContent('#summary [data-field="failures"]'));
  assert.ok(failures >= 1, `demo failures: ${failures}`);
  await screenshot(page, 'shell-demo');
  assert.deepStrictEqual(problems, []);
});

test('dropping a smartcomment fixture shows its counts', async () => {
  const { page, problems } = await openPage(browser);
  await page.waitForSelector('#summary');
  const file = path.join(FIXTURES, 'locomo_locomo-1.json');
  await dropFiles(page, [{ name: 'locomo_locomo-1.json', bytes: fs.readFileSync(file) }]);
  await waitField(page, 'operations', 107);
  await waitField(page, 'variables', 417);
  await waitField(page, 'edges', 673);
  await waitField(page, 'sessions', 6);
  await waitField(page, 'failures', 6);
  assert.match(await page.textContent('#summary [data-field="name"]'), /locomo_locomo-1\.json/);
  await screenshot(page, 'shell-dropped-fixture');
  assert.deepStrictEqual(problems, []);
});

test('dropping a broken file shows where it is broken, and the page keeps working', async () => {
  const { page, problems } = await openPage(browser);
  await page.waitForSelector('#summary');
  await dropFiles(page, [{ name: 'broken.json', bytes: Buffer.from('{"graph_id": "g", "data": {"nodes": [') }]);
  await page.waitForSelector('#load-errors .error', { timeout: 15000 });
  const text = await page.textContent('#load-errors');
  assert.match(text, /broken\.json/);
  assert.match(text, /line 1, column \d+/);
  assert.match(text, /truncated/);
  // The demo is still there and a good file still loads after the bad one.
  assert.match(await page.textContent('#summary [data-field="name"]'), /demo/);
  const good = fs.readFileSync(path.join(FIXTURES, 'locomo_locomo-2.json'));
  await dropFiles(page, [{ name: 'locomo_locomo-2.json', bytes: good }]);
  await waitField(page, 'operations', 99);
  await screenshot(page, 'shell-broken-file');
  assert.deepStrictEqual(problems, []);
});
