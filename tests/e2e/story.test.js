// The failure story: a selected failure reads as cards from its evidence to its judge, the
// decisive op marked; at 1280×800 and 1920×1080 the evidence, decisive and answer cards are on
// screen without scrolling. Screenshots per error type: story-<type>-<width>.png.
const test = require('node:test');
const assert = require('node:assert');
const { launch, openPage, screenshot } = require('./browser');

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { await browser.close(); });

const cards = (page) => page.evaluate(() => [...document.querySelectorAll('#story .story-card')].map((c) => {
  const r = c.getBoundingClientRect();
  return {
    id: c.dataset.id, kind: c.dataset.kind, role: c.dataset.role, decisive: c.classList.contains('decisive'),
    text: c.querySelector('.card-text')?.textContent || '', marks: [...c.querySelectorAll('mark')].map((m) => m.textContent),
    visible: r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth && r.width > 0,
  };
}));

for (const [width, height] of [[1280, 800], [1920, 1080]]) {
  test(`story of each demo failure at ${width}×${height}: evidence, decisive op and answer on screen`, async () => {
    const { page, problems } = await openPage(browser);
    await page.setViewportSize({ width, height });
    await page.waitForSelector('#failures .failure', { timeout: 20000 });
    const n = await page.locator('#failures .failure').count();
    assert.ok(n >= 5, `${n} demo failures`);
    const seen = new Set();
    for (let i = 0; i < n; i += 1) {
      await page.click(`#failures .failure[data-case="${i}"]`);
      await page.click('#attribute-one');
      await page.waitForSelector('#verdict[data-op]');
      const verdict = await page.evaluate(() => ({ ...document.querySelector('#verdict').dataset }));
      await page.waitForSelector(`#story .story-card.decisive[data-id="${verdict.op}"]`);
      const cs = await cards(page);
      const decisive = cs.filter((c) => c.decisive);
      assert.equal(decisive.length, 1, JSON.stringify(cs));
      assert.equal(decisive[0].id, verdict.op);
      assert.match(await page.textContent('#story .story-card.decisive .card-verdict'), new RegExp(verdict.type));
      const evidence = cs.find((c) => c.kind === 'evidence');
      const answer = cs.find((c) => c.role === 'response');
      assert.ok(evidence && answer, JSON.stringify(cs.map((c) => [c.kind, c.role])));
      for (const c of [evidence, decisive[0], answer]) assert.ok(c.visible, `${c.id} on screen at ${width}×${height}`);
      // The cards show the trace's own text: the answer card is the prediction, the evidence
      // card marks the gold answer's words.
      const prediction = (await page.textContent('#story [data-field="prediction"]')).trim();
      assert.ok(prediction.length > 0 && answer.text.includes(prediction.slice(0, 40)), `${answer.text} / ${prediction}`);
      const gold = (await page.textContent('#story [data-field="gold"]')).toLowerCase();
      assert.ok(evidence.marks.length > 0 && evidence.marks.every((m) => gold.includes(m.toLowerCase().replace(/[^a-z0-9]/g, '').slice(0, 4))),
        `${evidence.marks} in ${gold}`);
      if (!seen.has(verdict.type)) {
        seen.add(verdict.type);
        await screenshot(page, `story-${verdict.type}-${width}`);
      }
    }
    assert.ok(seen.size >= 5, [...seen].join(','));
    assert.deepStrictEqual(problems, []);
  });
}

test('keyboard: g switches story ↔ graph, Enter on a card opens it in the inspector, a group opens in place', async () => {
  const { page, problems } = await openPage(browser);
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.waitForSelector('#failures .failure', { timeout: 20000 });
  await page.click('#failures .failure[data-case="1"]');
  await page.waitForSelector('#story .story-card');
  await page.keyboard.press('g');
  await page.waitForSelector('#graph-canvas');
  assert.equal(await page.$('#story'), null);
  await page.keyboard.press('g');
  await page.waitForSelector('#story .story-card');
  const id = await page.getAttribute('#story .story-card[data-kind="value"], #story .story-card[data-kind="evidence"]', 'data-id');
  await page.focus(`#story .story-card[data-id="${id}"]`);
  await page.keyboard.press('Enter');
  await page.waitForFunction((x) => (document.querySelector('#inspector')?.textContent || '').includes(x.split('@')[0]), id, { timeout: 5000 });
  await page.click('#story .story-group summary');
  assert.ok(await page.isVisible('#story .story-group[open] li'));
  await screenshot(page, 'story-inspector');
  assert.deepStrictEqual(problems, []);
});
