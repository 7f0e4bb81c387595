// The OTLP exports of real instrumentation packages (tests/fixtures/otel: OpenInference, GenAI
// semconv on spans and as log records (one file, or the exporters' two files dropped together), OpenLLMetry, GenAI memory ops, Langfuse, Phoenix's span
// export; JSON, protobuf, gzip, zstd) dropped on the page: each loads, its one failed question is found, and info-flow's verdict names
// the span that wrote the wrong answer (read from the fixture's JSON by tests/e2e/otel.js).
const test = require('node:test');
const assert = require('node:assert');
const { launch, openPage, dropFiles, screenshot, waitField } = require('./browser');
const { FIXTURES, ANSWER, answeringOp, file } = require('./otel');

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { await browser.close(); });

for (const [which, files, json] of FIXTURES) {
  test(`${which}: loads, finds the failed question, blames the span that answered`, async () => {
    const want = answeringOp(json);
    const { page, context, problems } = await openPage(browser);
    await page.waitForSelector('#summary', { timeout: 20000 });
    await dropFiles(page, files);
    // One tab, named after the traces file (logs join it), without a .gz / .zst ending.
    const tab = files.find((f) => !/_logs\./.test(f.name)).name.replace(/\.(gz|zst)$/, '');
    await page.waitForFunction((n) => document.querySelector('.tab.active .tab-name')?.textContent.trim() === n,
      tab, { timeout: 20000 });
    assert.strictEqual(await page.locator('#load-errors .error').count(), 0, await page.textContent('body'));
    const tabs = await page.$$eval('.tab .tab-name', (e) => e.map((x) => x.textContent.trim()));
    assert.deepStrictEqual(tabs.slice(1), [tab], 'the demo, then one tab');
    await waitField(page, 'failures', 1);
    await page.click('#failures .failure[data-case="0"]');
    assert.match(await page.textContent('#failures'), /What is the name of my cat\?/);
    await page.click('#attribute-one');
    await page.waitForSelector('#verdict[data-op]', { timeout: 20000 });
    const verdict = await page.evaluate(() => {
      const v = document.querySelector('#verdict');
      return { op: v.dataset.op, type: v.dataset.type, text: v.textContent };
    });
    assert.strictEqual(verdict.op, want, `${which}: ${verdict.text}`);
    assert.strictEqual(verdict.type, 'ResponseError', verdict.text);
    assert.ok(verdict.text.includes(ANSWER), verdict.text);
    // The inspector shows the blamed op: an LLM call.
    await page.click('#jump-to-op');
    await page.waitForFunction((id) => (document.querySelector('#inspector')?.textContent || '').includes(id),
      want, { timeout: 5000 });
    await screenshot(page, `otel-${which.replace(/\W+/g, '-')}`);
    assert.match(await page.textContent('#inspector'), /category\s*llm/);
    assert.deepStrictEqual(problems, []);
    await context.close();
  });
}

// The log exporter's file dropped without its traces file: no empty tab, an error that says what
// the file holds, where (resourceLogs) and what to do.
for (const name of ['genai_logs.json', 'genai_logs.pb']) {
  test(`${name} alone: says to drop its traces file with it`, async () => {
    const { page, context, problems } = await openPage(browser);
    await page.waitForSelector('#summary', { timeout: 20000 });
    await dropFiles(page, [file(name)]);
    await page.waitForSelector('#load-errors .error', { timeout: 20000 });
    const error = await page.textContent('#load-errors .error');
    assert.match(error, new RegExp(name.replace('.', '\\.')));
    assert.match(error, /at resourceLogs/);
    assert.match(error, /4 OTLP log record\(s\) and no spans/);
    assert.match(error, /drop its traces file with it/);
    const tabs = await page.$$eval('.tab .tab-name', (e) => e.map((x) => x.textContent.trim()));
    assert.strictEqual(tabs.length, 1, `only the demo: ${tabs}`);
    assert.deepStrictEqual(problems, []);
    await context.close();
  });
}
