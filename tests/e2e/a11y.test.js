// axe-core (WCAG 2 A/AA rules), light and dark, over the page's main views: the demo's summary and failures, a
// failure's story with its verdict and its causes ("find all causes"), and the graph view. Any violation fails with its rule and nodes.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const { launch, openPage, screenshot } = require('./browser');

const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { await browser.close(); });

/** axe's violations on the page as it is, one line each. */
async function violations(page) {
  // Evaluated through the DevTools protocol, so the page's CSP does not block it.
  await page.evaluate(AXE);
  const found = await page.evaluate(async () => {
    const r = await window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] } });
    return r.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
  });
  return found;
}

for (const scheme of ['light', 'dark']) {
  test(`axe-core finds no WCAG 2 A/AA violation (${scheme}): the demo, a story with its verdict, the graph`, async () => {
    const { page, problems } = await openPage(browser);
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.waitForSelector('#failures .failure', { timeout: 20000 });
    assert.deepStrictEqual(await violations(page), [], 'demo');

    await page.focus('#failures .failure[data-case="0"]');
    await page.keyboard.press('Enter');
    await page.focus('#attribute-one');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#verdict[data-op]', { timeout: 15000 });
    await page.waitForSelector('#story .story-card');
    assert.deepStrictEqual(await violations(page), [], 'story');
    // "Find all causes": the set (cause chips on the story) and the replays listed.
    await page.focus('#find-causes');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#causes[data-state="done"] #causes-replays', { timeout: 30000 });
    assert.deepStrictEqual(await violations(page), [], 'story with its causes');
    await screenshot(page, `a11y-story-${scheme}`);

    await page.keyboard.press('g');
    await page.waitForSelector('#graph-canvas');
    assert.deepStrictEqual(await violations(page), [], 'graph');
    assert.deepStrictEqual(problems, []);
  });
}
