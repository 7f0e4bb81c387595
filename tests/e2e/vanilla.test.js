// The vanilla example (examples/vanilla: plain JavaScript over the module's web build, served
// under dist/vanilla/ by scripts/test) shows the same info-flow verdicts as the Yew page.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { launch, openPage, dropFiles, waitField, FIXTURES, BASE_URL } = require('./browser');

const FIXTURE = path.join(FIXTURES, 'locomo_locomo-1.json');
const N = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')).data.annotations.length;

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { await browser.close(); });

test('the vanilla example and the Yew page give the same verdicts', async () => {
  // The Yew page: attribute every case, one by one, and read the verdict panel.
  const { page, problems } = await openPage(browser);
  await page.waitForSelector('#summary', { timeout: 20000 });
  await dropFiles(page, [{ name: 'locomo_locomo-1.json', bytes: fs.readFileSync(FIXTURE) }]);
  await waitField(page, 'failures', N);
  const yew = [];
  for (let i = 0; i < N; i += 1) {
    await page.click(`#failures .failure[data-case="${i}"]`);
    await page.click('#attribute-one');
    await page.waitForSelector('#verdict[data-op]');
    yew.push(await page.evaluate(() => {
      const v = document.querySelector('#verdict');
      return `${v.dataset.type} ${v.dataset.op}`;
    }));
  }
  assert.deepEqual(problems, []);

  // The example: the same file dropped on its drop zone.
  const ex = await browser.newPage();
  const exProblems = [];
  ex.on('pageerror', (e) => exProblems.push(e.message));
  await ex.goto(new URL('vanilla/index.html', BASE_URL).href);
  await ex.waitForFunction(() => document.readyState === 'complete');
  await dropFiles(ex, [{ name: 'locomo_locomo-1.json', bytes: fs.readFileSync(FIXTURE) }], '#drop');
  await ex.waitForSelector('#verdicts:not([hidden]) tbody tr', { timeout: 20000 });
  const vanilla = await ex.$$eval('#verdicts tbody tr', (rows) =>
    rows.map((r) => `${r.querySelector('.type').textContent} ${r.querySelector('.op').textContent}`));
  assert.match(await ex.textContent('#status'), new RegExp(`${N} failed questions`));
  assert.deepEqual(exProblems, []);
  assert.equal(vanilla.length, N);
  assert.deepEqual(vanilla, yew);
  console.log(`vanilla example = Yew page on ${N} cases: ${vanilla.join('; ')}`);
});
