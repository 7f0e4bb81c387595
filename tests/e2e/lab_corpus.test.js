// Traces from real memory libraries in the page (tests/data/lab/, issue #38): one compressed
// OTLP file per library and format (tuning conversation 26, `26.jsonl.gz`; OTel GenAI's holds the
// logs requests after the traces) dropped alone, with no rule and no ground truth: every injected
// failure its sidecar names is listed, and nothing else.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { launch, openPage, dropFiles } = require('./browser');

const LAB = path.resolve(__dirname, '../data/lab');

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { if (browser) await browser.close(); });

// voices/ is the lab's voices corpus, with a test of its own (tests/lab_voices.rs).
const libraries = fs.readdirSync(LAB, { withFileTypes: true }).filter((d) => d.isDirectory() && d.name !== 'voices').map((d) => d.name).sort();

test('the lab corpus has libraries', () => {
  assert.ok(libraries.length >= 3, `libraries under ${LAB}: ${libraries.join(', ')}`);
});

const subdirs = (dir) => fs.readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
const groups = libraries.flatMap((lib) => subdirs(path.join(LAB, lib)).map((fmt) => [lib, fmt]));

test('the lab corpus has formats beyond OpenInference', () => {
  assert.ok(groups.some(([, fmt]) => fmt !== 'openinference'), `formats: ${groups.join(' ')}`);
});

for (const [lib, fmt] of groups) {
  test(`${lib} × ${fmt}: a dropped lab trace lists every injected failure`, async () => {
    const dir = path.join(LAB, lib, fmt);
    const bytes = fs.readFileSync(path.join(dir, '26.jsonl.gz'));
    const truth = JSON.parse(fs.readFileSync(path.join(dir, '26.annotations.json'), 'utf8'));
    const cases = truth.annotations.length;
    assert.ok(cases > 0, `${lib}/${fmt} 26: no injected failure`);
    const { page, context, problems } = await openPage(browser);
    await page.waitForSelector('#summary', { timeout: 20000 });
    await dropFiles(page, [{ name: `${lib}-26.jsonl.gz`, bytes }]);
    // The tab is named after the decompressed file.
    await page.waitForFunction((n) => document.querySelector('.tab.active .tab-name')?.textContent.trim() === n,
      `${lib}-26.jsonl`, { timeout: 60000 });
    await page.waitForFunction((n) => document.querySelectorAll('#failures .failure').length === n,
      cases, { timeout: 30000 });
    assert.deepStrictEqual(problems, []);
    await context.close();
  });
}
