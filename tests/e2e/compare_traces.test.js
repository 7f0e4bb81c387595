// The report view's compare panel on two traces (not optimize rounds): a real OpenTelemetry export
// (tests/fixtures/otlp/mem0_llm_judge.jsonl: one question judged CORRECT, one WRONG) and the same
// export with the two judge labels and scores swapped. The panel's fixed / broken / still failing
// counts must match the two traces' own failure lists, as each tab shows them.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { launch, openPage, screenshot, dropTrace } = require('./browser');

const A = fs.readFileSync(path.resolve(__dirname, '../fixtures/otlp/mem0_llm_judge.jsonl'), 'utf8');
const B = A.replace(/\\"label\\": \\"WRONG\\"/g, '@@W@@')
  .replace(/\\"label\\": \\"CORRECT\\"/g, '\\"label\\": \\"WRONG\\"')
  .replace(/@@W@@/g, '\\"label\\": \\"CORRECT\\"')
  .replace(/\\"score\\": 0}/g, '@@0@@')
  .replace(/\\"score\\": 1}/g, '\\"score\\": 0}')
  .replace(/@@0@@/g, '\\"score\\": 1}');

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { await browser.close(); });

/** The question texts of the active tab's failure list. */
const failed = (page) => page.$$eval('#failures .failure .q', (els) => els.map((e) => e.textContent.trim()).sort());

test('two traces of the same questions: fixed / broken / still failing match their failure lists', async () => {
  assert.notStrictEqual(A, B, 'the labels were swapped');
  const { page, problems } = await openPage(browser);
  await dropTrace(page, { name: 'before.jsonl', bytes: Buffer.from(A) });
  const fa = await failed(page);
  await dropTrace(page, { name: 'after.jsonl', bytes: Buffer.from(B) });
  const fb = await failed(page);
  assert.ok(fa.length > 0 && fb.length > 0, `failures: ${fa} / ${fb}`);
  await page.click('#report-toggle');
  await page.waitForSelector('#trace-compare');
  await page.selectOption('#trace-compare-a', { label: 'before.jsonl' });
  await page.selectOption('#trace-compare-b', { label: 'after.jsonl' });
  await page.waitForFunction(() => document.querySelector('#trace-compare-rows th:nth-child(3)')?.textContent === 'A: before.jsonl');
  const counts = await page.$eval('#trace-compare-counts', (el) => ({ ...el.dataset }));
  const want = {
    fixed: fa.filter((q) => !fb.includes(q)).length,
    broken: fb.filter((q) => !fa.includes(q)).length,
    stillFailing: fa.filter((q) => fb.includes(q)).length,
  };
  assert.deepStrictEqual({ fixed: +counts.fixed, broken: +counts.broken, stillFailing: +counts.stillFailing }, want,
    JSON.stringify(counts));
  assert.ok(want.fixed + want.broken > 0, 'the swap changed something');
  // The rows name each changed question with its change.
  const rows = await page.$$eval('#trace-compare-rows tr.opt-row', (trs) => trs.map((tr) => tr.dataset.change));
  assert.strictEqual(rows.filter((c) => c === 'fixed').length, want.fixed);
  assert.strictEqual(rows.filter((c) => c === 'broken').length, want.broken);
  await page.locator('#trace-compare').scrollIntoViewIfNeeded();
  await screenshot(page, 'compare-traces');
  assert.deepStrictEqual(problems, []);
});
