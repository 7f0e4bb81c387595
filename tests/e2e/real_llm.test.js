// The page against a real OpenAI-compatible server (llama-cpp-python with Gemma 3 270M, started
// by scripts/test-llm, which sets MEMTRACE_REAL_LLM_URL to its base URL): "test connection", then
// one graphtrace run that must end with a verdict or a "no verdict: <why>" message, and no console
// error. What the tiny model answers is not judged. Skipped without MEMTRACE_REAL_LLM_URL.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { launch, openPage, dropFiles, screenshot, waitField } = require('./browser');

const REAL = process.env.MEMTRACE_REAL_LLM_URL;
const FIXTURE = path.resolve(__dirname, '../fixtures/smartcomment/mem0_commented.json');
const MAX_CALLS = 4;
const skip = REAL ? false : 'needs MEMTRACE_REAL_LLM_URL (the real LLM server): run scripts/test-llm';

async function setField(page, selector, value) {
  await page.fill(selector, String(value));
  await page.dispatchEvent(selector, 'change');
}

test('a real server: test connection, then graphtrace ends with a verdict or "no verdict: <why>"', { skip, timeout: 900000 }, async () => {
  const browser = await launch();
  try {
    const { page, problems } = await openPage(browser);
    await page.waitForSelector('#summary', { timeout: 20000 });
    await dropFiles(page, [{ name: 'mem0_commented.json', bytes: fs.readFileSync(FIXTURE) }]);
    await waitField(page, 'failures', 1);
    await page.click('#failures .failure[data-case="0"]');
    await page.selectOption('#attr-method', 'graphtrace');
    await page.waitForSelector('#provider-base-url');
    await page.evaluate(() => { document.querySelector('#provider').open = true; });
    await setField(page, '#provider-base-url', REAL);
    await setField(page, '#provider-model', 'gemma3-270m');
    await setField(page, '#provider-timeout', 300);
    await setField(page, '#provider-max-calls', MAX_CALLS);
    await setField(page, '#provider-max-tokens', 64);

    await page.click('#test-connection');
    await page.waitForSelector('#connection-status', { timeout: 330000 });
    const status = await page.textContent('#connection-status');
    console.log(`test connection: ${status}`);
    assert.equal(await page.getAttribute('#connection-status', 'data-ok'), 'true', status);
    assert.match(status, /connected: .* answered \(\d+ input, \d+ output tokens\)/);

    const t0 = Date.now();
    await page.click('#run-one');
    await page.waitForSelector('#verdict[data-op][data-method="graphtrace"], #run-failed .failed-case', { timeout: 840000 });
    const secs = ((Date.now() - t0) / 1000).toFixed(1);
    const calls = Number(await page.getAttribute('#run-meter', 'data-calls'));
    const tokens = `${await page.getAttribute('#run-meter', 'data-input')} in / ${await page.getAttribute('#run-meter', 'data-output')} out`;
    const steps = await page.$$eval('#transcript .step', (els) => els.length);
    await screenshot(page, 'real-llm-graphtrace');
    // The verdict graphtrace gave, not the info-flow verdict the page stores for the case.
    if (await page.$('#verdict[data-op][data-method="graphtrace"]')) {
      const op = await page.getAttribute('#verdict', 'data-op');
      const ops = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')).data.operations.map((o) => o.op_id);
      assert.ok(ops.includes(op), `the verdict names ${op}, not an operation of the trace`);
      console.log(`page graphtrace: verdict ${await page.getAttribute('#verdict', 'data-type')} at ${op}; ${calls} calls, ${steps} transcript steps, ${tokens} tokens, ${secs} s`);
    } else {
      const why = await page.textContent('#run-failed .failed-case');
      assert.match(why, /no verdict: \S.{9,}/, 'a no-verdict says why');
      console.log(`page graphtrace: ${why}; ${calls} calls, ${steps} transcript steps, ${tokens} tokens, ${secs} s`);
    }
    assert.ok(calls >= 1 && calls <= MAX_CALLS, `${calls} calls, cap ${MAX_CALLS}`);
    assert.ok(steps >= 1, 'the transcript shows the raw steps, verdict or not');
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});
