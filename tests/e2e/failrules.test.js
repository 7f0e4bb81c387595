// Failure rules and "mark as failed": an OTLP trace whose judge memtrace does not recognize shows
// no failure and what was looked for; the suggested rule finds the wrong answer; a question marked
// as failed becomes a case; rules and marks survive a reload (IndexedDB).
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { launch, openPage, screenshot, waitField, dropFiles } = require('./browser');

const FIXTURE = path.resolve(__dirname, '../fixtures/otlp/mem0_blind_judge.jsonl');

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { await browser.close(); });

test('the suggested rule and a mark turn questions into failures, and stay after a reload', async () => {
  const { page, problems } = await openPage(browser);
  await page.waitForSelector('#summary', { timeout: 20000 });
  await dropFiles(page, [{ name: 'mem0_blind_judge.jsonl', bytes: fs.readFileSync(FIXTURE) }]);
  await waitField(page, 'failures', 0);
  const looked = await page.textContent('#fail-rules .looked-for');
  assert.match(looked, /No failed question found among 2 question/);
  assert.match(looked, /llm-judge: judged 0, failed 0/);
  assert.match(looked, /check_answer did not count/);
  assert.match(looked, /span=check_answer output~WRONG/);
  await screenshot(page, 'failrules-nothing-found');

  await page.click('#fail-rules-suggest');
  await waitField(page, 'failures', 1);
  assert.match(await page.textContent('#failures .failure .q'), /Where does Alice live now\?/);

  await page.click('#questions-toggle');
  const job = page.locator('.question', { hasText: "What is Alice's job?" });
  await job.locator('input.gold').fill('a nurse at a children\'s hospital');
  await job.locator('button.mark').click();
  await waitField(page, 'failures', 2);
  await page.waitForSelector('.question .mark:text("Unmark")');
  await screenshot(page, 'failrules-marked');

  // A bad rule is shown with where it is wrong, and not applied.
  await page.fill('#fail-rules-text', 'span=check_answer output~WRONG\nspan=x outptu~y');
  assert.match(await page.textContent('#fail-rules .rule-error'), /at character 8: unknown key "outptu"/);

  await page.waitForTimeout(1500); // settings are saved after a short debounce
  await page.reload();
  await page.waitForSelector('#summary', { timeout: 20000 });
  await page.click('.trace-tabs .tab-name:text("mem0_blind_judge.jsonl")');
  await waitField(page, 'failures', 2);
  assert.deepStrictEqual(problems, []);
});
