// The attribution panel: info-flow verdicts, labels, verdict exports, value search.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { browserFor, dropLocomo1, openPage, dropFiles, screenshot, waitField, FIXTURES } = require('./browser');

const FIXTURE = path.join(FIXTURES, 'locomo_locomo-1.json');
const ANNOTATIONS = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')).data.annotations;

const held = browserFor(test);

const dropFixture = dropLocomo1;

const verdictOf = (page) => page.evaluate(() => {
  const v = document.querySelector('#verdict');
  return v && { type: v.dataset.type, op: v.dataset.op, text: v.textContent };
});

test('info-flow attributes a case as annotated, survives reload, exports, labels', async () => {
  const { page, problems } = await openPage(held.browser);
  await dropFixture(page);
  // Cases are the annotations in file order; attribute each until one agrees with its annotation.
  let agreed = -1;
  for (let i = 0; i < ANNOTATIONS.length && agreed < 0; i += 1) {
    await page.click(`#failures .failure[data-case="${i}"]`);
    await page.click('#attribute-one');
    await page.waitForSelector('#verdict[data-op]');
    const v = await verdictOf(page);
    assert.match(v.text, /confidence \d\.\d\d/);
    if (v.type === ANNOTATIONS[i].final_error_type && v.op === ANNOTATIONS[i].final_op_id) agreed = i;
  }
  assert.ok(agreed >= 0, 'info-flow agrees with at least one annotation');
  const want = ANNOTATIONS[agreed];
  assert.match(await page.textContent('#verdict'), /agrees/);
  // The failures list shows the verdict too.
  assert.match(await page.textContent(`#failures .failure[data-case="${agreed}"]`), new RegExp(`verdict: ${want.final_error_type}`));
  // Jump to op: the inspector shows the op.
  await page.click('#jump-to-op');
  await page.waitForFunction((id) => (document.querySelector('#inspector')?.textContent || '').includes(id),
    want.final_op_id, { timeout: 5000 });
  await screenshot(page, 'attribution-verdict');

  // Label: confirm the verdict, then correct its type.
  await page.click('#label-confirm');
  await page.waitForSelector(`#label[data-op="${want.final_op_id}"]`);
  const other = want.final_error_type === 'UpdateError' ? 'DeletionError' : 'UpdateError';
  await page.selectOption('#label-type', other);
  await page.waitForSelector(`#label[data-type="${other}"]`);

  // Reload: verdict and label are still there.
  await page.waitForTimeout(400);
  await page.reload();
  await waitField(page, 'operations', 107);
  await page.click(`#failures .failure[data-case="${agreed}"]`);
  await page.waitForSelector('#verdict[data-op]', { timeout: 10000 });
  const after = await verdictOf(page);
  assert.equal(after.op, want.final_op_id);
  assert.equal(after.type, want.final_error_type);
  await page.waitForSelector(`#label[data-type="${other}"][data-op="${want.final_op_id}"]`);

  // Export verdicts as JSON (MemTrace result records), CSV and labels as annotations.
  const [dj] = await Promise.all([page.waitForEvent('download'), page.click('#export-verdicts-json')]);
  assert.match(dj.suggestedFilename(), /verdicts\.json$/);
  const run = JSON.parse(fs.readFileSync(await dj.path(), 'utf8'));
  assert.equal(run.results.length, 6);
  const rec = run.results.find((r) => r.query_id === want.query_id);
  assert.equal(rec.error_attribution_result.op_id, want.final_op_id);
  assert.equal(rec.error_attribution_result.method, 'infoflow');
  // Scored against the label: same op, other type.
  assert.equal(rec.final_error_type, other);
  assert.equal(rec.is_operation_identifier_correct, true);
  assert.equal(rec.is_error_type_correct, false);
  const [dc] = await Promise.all([page.waitForEvent('download'), page.click('#export-verdicts-csv')]);
  const csv = fs.readFileSync(await dc.path(), 'utf8').trim().split(/\r\n/);
  assert.equal(csv.length, 7);
  assert.match(csv[0], /^case_id,query,verdict_type,op_id,op_name,reason,annotation_type,annotation_op,agrees$/);
  assert.ok(csv.some((l) => l.startsWith(want.query_id) && l.endsWith(`,${other},${want.final_op_id},false`)), csv.join('\n'));
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-labels')]);
  const anns = JSON.parse(fs.readFileSync(await dl.path(), 'utf8')).annotations;
  assert.deepStrictEqual(anns.map((a) => [a.query_id, a.final_error_type, a.final_op_id]),
    [[want.query_id, other, want.final_op_id]]);
  assert.equal(anns[0].query, want.query);
  assert.deepStrictEqual(problems, []);
});

test('attribute all gives every case a verdict; the LLM methods bring the provider settings', async () => {
  const { page, problems } = await openPage(held.browser);
  await dropFixture(page);
  // An LLM method shows the provider settings and its run controls instead of info-flow's buttons.
  await page.selectOption('#attr-method', 'graphtrace');
  await page.waitForSelector('#provider #provider-key[type="password"]');
  assert.match(await page.textContent('#run-all'), /Run on all \(6 to do\)/);
  assert.equal(await page.$('#attribute-all'), null);
  await page.selectOption('#attr-method', 'infoflow');
  assert.equal(await page.$('#provider'), null);
  await page.click('#attribute-all');
  await page.waitForFunction(() => document.querySelectorAll('#failures .badge.verdict').length === 6, null, { timeout: 10000 });
  assert.deepStrictEqual(problems, []);
});

test('search: / focuses the box, BM25 and regex hits, clicking one selects the variable', async () => {
  const { page, problems } = await openPage(held.browser);
  await dropFixture(page);
  await page.keyboard.press('/');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'search-box');
  await page.keyboard.type('camping');
  await page.waitForSelector('#search-results .search-hit');
  const hits = await page.$$eval('#search-results .search-hit', (els) => els.map((e) => e.textContent));
  assert.ok(hits.length >= 1);
  assert.match(hits[0], /camping/i);
  const id = await page.getAttribute('#search-results .search-hit >> nth=0', 'data-id');
  await page.click('#search-results .search-hit >> nth=0 >> button');
  await page.waitForFunction((want) => document.querySelector('#inspector [data-field="node-id"]')?.textContent === want,
    id, { timeout: 5000 });
  await screenshot(page, 'attribution-search');
  // Regex: a pattern, and a bad pattern gives an error, not a crash.
  await page.check('#search-regex');
  await page.fill('#search-box', 'camp(ing|ed)');
  await page.waitForSelector('#search-results .search-hit');
  await page.fill('#search-box', 'camp(');
  await page.waitForSelector('#search .error');
  // F focuses the failures filter now.
  await page.click('#summary');
  await page.keyboard.press('Shift+F');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'failure-filter');
  assert.deepStrictEqual(problems, []);
});

test('a low-confidence verdict (no evidence named) suggests an LLM method', async () => {
  const { page, problems } = await openPage(held.browser);
  await page.waitForSelector('#summary', { timeout: 20000 });
  const file = path.resolve(__dirname, '../fixtures/otlp/mem0_unnamed_judge.jsonl');
  await dropFiles(page, [{ name: 'mem0_unnamed_judge.jsonl', bytes: fs.readFileSync(file) }]);
  await waitField(page, 'failures', 1);
  await page.click('#failures .failure[data-case="0"]');
  await page.click('#attribute-one');
  await page.waitForSelector('#verdict[data-op]');
  const v = await verdictOf(page);
  const confidence = Number(/confidence (\d\.\d\d)/.exec(v.text)[1]);
  assert.ok(confidence < 0.8, `confidence ${confidence}`);
  assert.match(await page.textContent('#verdict-low'), /Low confidence.*graphtrace/s);
  await screenshot(page, 'attribution-low-confidence');
  assert.deepStrictEqual(problems, []);
});
