// The Optimize view's compare panel: the closed loop on the built-in retrieval-starved
// conversations (3 train, 4 held-out) from top_k 2, the memory system run by the simulated
// provider in the page, the optimizer played by the scripted local server
// (tests/llm_server/scripts/optimize_loop.json at MEMTRACE_TEST_LLM_URL). The loop raises top_k,
// held-out accuracy rises, and round 0 vs round 1 shows fixed / broken / still-failing counts
// that match the two rounds' verdicts in the rows below them; the settings history shows the
// new top_k with its reason. Screenshot: artifacts/compare-view.png.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const { launch, openPage, screenshot } = require('./browser');

const LLM = process.env.MEMTRACE_TEST_LLM_URL || 'http://127.0.0.1:8765';
const MODEL = `script:optimize_loop@compare-${Date.now()}`;

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { await browser.close(); });

async function setField(page, selector, value) {
  await page.fill(selector, String(value));
  await page.dispatchEvent(selector, 'change');
}

test('round 0 vs round 1: top_k raised, counts match the verdicts, settings history shown', async () => {
  const { page, problems } = await openPage(browser);
  await page.waitForSelector('#summary', { timeout: 20000 });
  await page.click('#summary');
  await page.keyboard.press('Shift+O');
  await page.waitForSelector('#opt-run:not([disabled])');
  assert.ok(await page.locator('#opt-conversations li').count() >= 5, 'the retrieval-starved conversations are built in');
  await page.evaluate(() => { document.querySelector('#provider').open = true; });
  await setField(page, '#provider-base-url', `${LLM}/v1`);
  await setField(page, '#provider-model', MODEL);
  await setField(page, '#opt-train', '3');
  await setField(page, '#opt-heldout', '4');
  await setField(page, '#opt-rounds', 1);
  await setField(page, '#opt-top-k', 2);
  await page.click('#opt-run');
  await page.waitForFunction(() => document.querySelector('#opt-progress')?.dataset.phase === 'Done', null,
    { timeout: 90000 });

  const rounds = await page.$$eval('#opt-chart .opt-round', (els) => els.map((e) => ({
    round: Number(e.dataset.round), heldout: Number(e.dataset.heldout), label: e.textContent,
    rejected: e.classList.contains('rejected'),
  })));
  assert.deepStrictEqual(rounds.map((r) => r.round), [0, 1]);
  assert.ok(rounds[1].heldout > rounds[0].heldout, `held-out accuracy rises: ${JSON.stringify(rounds)}`);
  assert.match(rounds[0].label, /top_k 2/);
  assert.match(rounds[1].label, /top_k 3/);
  assert.ok(rounds.every((r) => !r.rejected));

  await page.waitForSelector('#opt-compare-counts');
  const counts = await page.$eval('#opt-compare-counts', (e) => ({
    fixed: Number(e.dataset.fixed), broken: Number(e.dataset.broken),
    stillFailing: Number(e.dataset.stillFailing), stillRight: Number(e.dataset.stillRight), text: e.textContent,
  }));
  // Recount from the rows: each row's A and B verdicts.
  const rows = await page.$$eval('#opt-compare-rows tr.opt-row', (trs) => trs.map((tr) => {
    const [a, b] = tr.querySelectorAll('td.opt-answer');
    return { change: tr.dataset.change, a: a?.classList.contains('right'), b: b?.classList.contains('right') };
  }));
  assert.equal(rows.length, 8, 'every question of both conversations');
  const n = (x, y) => rows.filter((r) => r.a === x && r.b === y).length;
  assert.deepStrictEqual(
    [counts.fixed, counts.broken, counts.stillFailing, counts.stillRight],
    [n(false, true), n(true, false), n(false, false), n(true, true)], counts.text);
  for (const r of rows) {
    const want = r.a ? (r.b ? 'still right' : 'broken') : (r.b ? 'fixed' : 'still failing');
    assert.equal(r.change, want);
  }
  assert.ok(counts.fixed > 0, counts.text);
  assert.match(await page.textContent('#opt-compare-types'), /RetrievalError/);

  const v2 = page.locator('#opt-settings tr.opt-setting[data-name="top_k"][data-version="2"]');
  assert.equal(await v2.getAttribute('data-value'), '3');
  assert.match(await v2.textContent(), /just below the cut/);

  const [d] = await Promise.all([page.waitForEvent('download'), page.click('#opt-export-update-results')]);
  const results = JSON.parse(fs.readFileSync(await d.path(), 'utf8'));
  assert.equal(results.settings['top_k@2'].value, 3);

  await page.locator('#opt-compare').scrollIntoViewIfNeeded();
  await screenshot(page, 'compare-view');
  assert.deepStrictEqual(problems, []);
});
