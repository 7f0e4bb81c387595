// A real library's failure reads at a glance (issue #62 item 6): the first failure of one trace per
// lab library (tuning conversation 26, OpenInference) and per voice × library (its first
// conversation with a failure), dropped with no ground truth, so no evidence ids. The story opens on the turn
// found for the question (its own words, not the prompt that embeds it), the decisive card's role
// is the one its verdict names, and no error sits beside the verdict.
// Screenshots: lab-story-<voice or "lab">-<library>.png.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { launch, openPage, dropFiles, screenshot } = require('./browser');

const LAB = path.resolve(__dirname, '../data/lab');
const ROLE = {
  ExtractionError: 'extraction', UpdateError: 'update', DeletionError: 'deletion',
  RetrievalError: 'retrieval', ResponseError: 'response',
};
// Each voice × library's first conversation with an injected failure (tests/lab_voices.rs).
const firstFailing = (dir) => fs.readdirSync(dir).filter((f) => f.endsWith('.annotations.json')).sort()
  .find((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')).annotations.length > 0)
  .replace('.annotations.json', '.jsonl.gz');
const VOICES = ['terse', 'first', 'third', 'json'];

const files = [
  ...['agno', 'graphiti', 'langmem', 'mem0ai', 'mem0v1'].map((lib) => ['lab', lib, path.join(LAB, lib, 'openinference/26.jsonl.gz')]),
  ...VOICES.flatMap((voice) => ['graphiti', 'langmem', 'mem0ai'].map((lib) => {
    const dir = path.join(LAB, 'voices', voice, lib, 'openinference');
    return [voice, lib, path.join(dir, firstFailing(dir))];
  })),
];

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { if (browser) await browser.close(); });

for (const [voice, lib, file] of files) {
  test(`${voice} × ${lib}: the story shows the turn, a role that fits the verdict, no error`, async () => {
    const { page, context, problems } = await openPage(browser);
    await page.setViewportSize({ width: 1600, height: 1000 });
    await page.waitForSelector('#summary', { timeout: 20000 });
    await dropFiles(page, [{ name: `${voice}-${lib}.jsonl.gz`, bytes: fs.readFileSync(file) }]);
    await page.waitForFunction(() => document.querySelectorAll('#failures .failure').length > 0, null, { timeout: 60000 });
    await page.locator('#failures .failure').first().click();
    await page.click('#attribute-one');
    await page.waitForSelector('#verdict[data-op]', { timeout: 30000 });
    const verdict = await page.evaluate(() => ({ ...document.querySelector('#verdict').dataset }));
    await page.waitForSelector(`#story .story-card.decisive[data-id="${verdict.op}"]`);
    const cards = await page.evaluate(() => [...document.querySelectorAll('#story .story-card')].map((c) => ({
      kind: c.dataset.kind, role: c.dataset.role, decisive: c.classList.contains('decisive'),
      title: c.querySelector('.card-title')?.title || '', text: c.querySelector('.card-text')?.textContent || '',
    })));
    const evidence = cards.filter((c) => c.kind === 'evidence');
    assert.ok(evidence.length >= 1 && evidence.length <= 2, JSON.stringify(cards.map((c) => c.kind)));
    for (const c of evidence) {
      assert.match(c.title, /^turn in /, c.title);
      assert.ok(c.text.length > 0 && c.text.length < 700, `a turn, not a prompt: ${c.text.slice(0, 200)}`);
    }
    const decisive = cards.find((c) => c.decisive);
    assert.equal(decisive.role, ROLE[verdict.type], `decisive card ${decisive.role}, verdict ${verdict.type}`);
    assert.equal(await page.$('#attribution .error'), null, 'no error beside the verdict');
    await screenshot(page, `lab-story-${voice}-${lib}`);
    assert.deepStrictEqual(problems, []);
    await context.close();
  });
}
