// The report view (R): verdict counts per error type and per op name, the cases behind a bar.
const test = require('node:test');
const assert = require('node:assert');
const { launch, openPage, screenshot } = require('./browser');

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { await browser.close(); });

/** Every failure's verdict as the failures list shows it: case index → { type, op }. */
const listedVerdicts = (page) => page.$$eval('#failures .failure', (rows) => {
  const out = {};
  for (const r of rows) {
    const badge = r.querySelector('.badge.verdict');
    if (!badge) continue;
    const m = /^verdict: (\S+) · (.*)$/.exec(badge.textContent.trim());
    if (m) out[r.dataset.case] = { type: m[1], op: m[2] };
  }
  return out;
});

/** The bars of a chart: key → count. */
const bars = (page, chart) => page.$$eval(`#report .chart[data-chart="${chart}"] .bar`,
  (els) => Object.fromEntries(els.map((e) => [e.dataset.key, Number(e.dataset.count)])));

const countBy = (verdicts, field) => {
  const out = {};
  for (const v of Object.values(verdicts)) out[v[field]] = (out[v[field]] || 0) + 1;
  return out;
};

test('the report counts the info-flow verdicts per type and op; a bar lists its cases', async () => {
  const { page, problems } = await openPage(browser);
  await page.waitForSelector('#failures .failure', { timeout: 20000 });
  const cases = await page.locator('#failures .failure').count();
  assert.ok(cases >= 2, `the demo has failures (${cases})`);
  await page.selectOption('#attr-method', 'infoflow');
  await page.click('#attribute-all');
  await page.waitForFunction((n) => document.querySelectorAll('#failures .badge.verdict').length === n, cases,
    { timeout: 15000 });
  const verdicts = await listedVerdicts(page);
  assert.equal(Object.keys(verdicts).length, cases);

  // R opens the report (keyboard), from anywhere but a text field.
  await page.click('#summary');
  await page.keyboard.press('Shift+R');
  await page.waitForSelector('#report');
  assert.match(await page.textContent('#report [data-field="judged"]'), new RegExp(`${cases} of ${cases}`));
  const byType = await bars(page, 'type');
  const byOp = await bars(page, 'op');
  const want = countBy(verdicts, 'type');
  for (const [k, n] of Object.entries(byType)) assert.equal(n, want[k] || 0, `type ${k}`);
  for (const k of Object.keys(want)) assert.ok(k in byType, `a bar for ${k}`);
  assert.deepStrictEqual(byOp, countBy(verdicts, 'op'));

  // Click the op bar with the most cases: its cases are listed, each with that op's verdict.
  const [op, n] = Object.entries(byOp).sort((a, b) => b[1] - a[1])[0];
  await page.click(`#report .chart[data-chart="op"] .bar[data-key="${op}"]`);
  await page.waitForSelector('#report-cases');
  const listed = await page.$$eval('#report-cases .report-case', (els) => els.map((e) => e.dataset.case));
  assert.equal(listed.length, n);
  for (const c of listed) assert.equal(verdicts[c].op, op, `case ${c}`);
  // A type bar lists exactly the cases of that type.
  const [type] = Object.entries(byType).find(([, k]) => k > 0);
  await page.click(`#report .chart[data-chart="type"] .bar[data-key="${type}"]`);
  await page.waitForFunction((t) => document.querySelector('#report-cases')?.dataset.key === t, type);
  const ofType = await page.$$eval('#report-cases .report-case', (els) => els.map((e) => e.dataset.case));
  assert.deepStrictEqual(ofType.sort(), Object.keys(verdicts).filter((c) => verdicts[c].type === type).sort());

  // Clicking a case selects it in the failures list.
  const pick = ofType[ofType.length - 1];
  await page.click(`#report-cases .report-case[data-case="${pick}"]`);
  await page.waitForFunction((c) => document.querySelector('#failures .failure.selected')?.dataset.case === c, pick);
  await screenshot(page, 'report-view');

  // A label that corrects the selected case's type counts only where labels are counted.
  const from = verdicts[pick].type;
  const to = Object.keys(byType).find((k) => k !== from);
  await page.selectOption('#label-type', to);
  await page.waitForFunction((t) => document.querySelector('#label')?.dataset.type === t, to);
  assert.deepStrictEqual(await bars(page, 'type'), byType, 'verdicts are still what is counted');
  await page.selectOption('#report-source', 'labels_over_verdicts');
  await page.waitForFunction(([t, n]) => document.querySelector(`#report .chart[data-chart="type"] .bar[data-key="${t}"]`)
    ?.dataset.count === String(n), [to, byType[to] + 1]);
  assert.equal((await bars(page, 'type'))[from], byType[from] - 1);
  await page.selectOption('#report-source', 'labels');
  await page.waitForFunction(() => /^1 of /.test(document.querySelector('#report [data-field="judged"]')?.textContent || ''));
  assert.deepStrictEqual(Object.entries(await bars(page, 'type')).filter(([, n]) => n > 0), [[to, 1]]);
  await page.click('#summary');
  await page.keyboard.press('Shift+R');
  await page.waitForSelector('#report', { state: 'detached' });
  assert.deepStrictEqual(problems, []);
});
