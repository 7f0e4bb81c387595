// The LLM attribution methods run from the page against the scripted local server
// (tests/llm_server/server.py at MEMTRACE_TEST_LLM_URL): graphtrace with a live transcript, a batch
// of ≥ 50 generated cases under a 30 % fault rate with a reload in the middle, and where requests
// and the API key go.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { launch, openPage, dropFiles, screenshot, waitField, FIXTURES, BASE_URL } = require('./browser');

const LLM = process.env.MEMTRACE_TEST_LLM_URL || 'http://127.0.0.1:8765';
const ROOT = path.resolve(__dirname, '../..');
const FIXTURE = path.join(FIXTURES, 'locomo_locomo-2.json');
const ANNOTATIONS = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')).data.annotations;
const RUN = `${Date.now()}`;

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { await browser.close(); });

async function control(settings) {
  const r = await fetch(`${LLM}/_control`, { method: 'POST', body: JSON.stringify(settings) });
  assert.equal(r.status, 200);
}
const serverLog = async () => (await fetch(`${LLM}/_log`)).json();

/** Sets an input as a user would: type, then commit (the page listens to `change`). */
async function setField(page, selector, value) {
  await page.fill(selector, String(value));
  await page.dispatchEvent(selector, 'change');
}

async function dropTrace(page, name, bytes, failures) {
  await page.waitForSelector('#summary', { timeout: 20000 });
  await dropFiles(page, [{ name, bytes }]);
  await waitField(page, 'failures', failures);
}

async function useProvider(page, { model, key, timeoutS }) {
  await page.selectOption('#attr-method', 'graphtrace');
  await page.waitForSelector('#provider-base-url');
  await page.evaluate(() => { document.querySelector('#provider').open = true; });
  await setField(page, '#provider-base-url', `${LLM}/v1`);
  await setField(page, '#provider-model', model);
  if (key) await setField(page, '#provider-key', key);
  await setField(page, '#price-in', 2);
  await setField(page, '#price-out', 8);
  if (timeoutS) await setField(page, '#provider-timeout', timeoutS);
}

/** The page's stored settings (IndexedDB `memtrace` / `settings`), parsed. */
const storedSettings = (page) => page.evaluate(() => new Promise((resolve, reject) => {
  const open = indexedDB.open('memtrace');
  open.onerror = () => reject(open.error);
  open.onsuccess = () => {
    const db = open.result;
    const req = db.transaction('settings').objectStore('settings').get('settings');
    req.onsuccess = () => { db.close(); resolve(req.result ? JSON.parse(req.result) : null); };
    req.onerror = () => reject(req.error);
  };
}));

/** Everything in IndexedDB as text (trace files decoded: Blobs, or arrays as earlier versions stored them), for the
 *  key search. */
const dumpIndexedDb = (page) => page.evaluate(() => new Promise((resolve, reject) => {
  const open = indexedDB.open('memtrace');
  open.onerror = () => reject(open.error);
  open.onsuccess = () => {
    const db = open.result;
    const names = [...db.objectStoreNames];
    const tx = db.transaction(names);
    const values = [];
    let left = names.length;
    for (const n of names) {
      const req = tx.objectStore(n).getAll();
      req.onsuccess = () => {
        values.push(...req.result);
        left -= 1;
        if (left > 0) return;
        db.close();
        Promise.all(values.map((v) => {
          if (v && v.bytes instanceof Blob) return v.bytes.text();
          if (v && v.bytes) return new TextDecoder().decode(v.bytes);
          return typeof v === 'string' ? v : JSON.stringify(v);
        })).then((out) => resolve(out.join('\n')), reject);
      };
      req.onerror = () => reject(req.error);
    }
  };
}));

const caseOf = (entry) => {
  const m = /query node (\S+?)\)/.exec(JSON.stringify(entry.body));
  return m ? m[1] : null;
};

test('graphtrace from the page: test connection, live transcript, verdict, highlight, counterfactual', async () => {
  await control({ fault_rate: 0 });
  const { page, problems } = await openPage(browser);
  await dropTrace(page, 'locomo_locomo-2.json', fs.readFileSync(FIXTURE), ANNOTATIONS.length);
  await page.click('#failures .failure[data-case="0"]');

  // A bad provider says what failed, where and what to do; a good one answers.
  await useProvider(page, { model: 'echo', key: 'sk-e2e-graphtrace' });
  await setField(page, '#provider-base-url', `${LLM}/_fault/401/v1`);
  await page.click('#test-connection');
  await page.waitForSelector('#connection-status[data-ok="false"]', { timeout: 20000 });
  const bad = await page.textContent('#connection-status');
  assert.match(bad, /_fault\/401\/v1/);
  assert.match(bad, /401.*Check the key/);
  await setField(page, '#provider-base-url', `${LLM}/v1`);
  // The key is per base URL: set it again for this one.
  await setField(page, '#provider-key', 'sk-e2e-graphtrace');
  await page.click('#test-connection');
  await page.waitForSelector('#connection-status[data-ok="true"]', { timeout: 20000 });
  assert.match(await page.textContent('#connection-status'), /connected: echo answered/);
  // The Anthropic shape too (its key is kept apart: one per API and base URL).
  await page.selectOption('#provider-api', 'anthropic');
  await setField(page, '#provider-key', 'sk-ant-e2e');
  await page.click('#test-connection');
  await page.waitForSelector('#connection-status[data-ok="true"]', { timeout: 20000 });
  const paths = (await serverLog()).slice(-2).map((e) => e.path);
  assert.deepEqual(paths, ['/v1/chat/completions', '/v1/messages']);
  await page.selectOption('#provider-api', 'openai');

  // The scripted conversation of the annotated case: steps appear while it runs.
  await setField(page, '#provider-model', `script:agent_graphtrace@e2e-${RUN}`);
  await page.click('#run-one');
  await page.waitForSelector('#transcript.live .step .step-result', { timeout: 20000 });
  await screenshot(page, 'llm-transcript-live');
  const want = ANNOTATIONS[0];
  // Info-flow's verdict is on screen first (stored when the case was shown): wait for the run's.
  await page.waitForSelector(`#verdict[data-op="${want.final_op_id}"][data-method="graphtrace"]`, { timeout: 60000 });
  assert.equal(await page.getAttribute('#verdict', 'data-type'), want.final_error_type);
  const script = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests/llm_server/scripts/agent_graphtrace.json'), 'utf8'));
  const turns = await page.$$eval('#transcript .step', (els) => new Set(els.map((e) => e.dataset.turn)).size);
  assert.equal(turns, script.steps.length, 'a transcript step for every model turn');
  assert.equal(await page.$$eval('#transcript .step.rejected', (els) => els.length) >= 1, true, 'the malformed call is marked');
  assert.equal(await page.getAttribute('#run-meter', 'data-calls'), String(script.steps.length));
  assert.ok(Number(await page.getAttribute('#run-meter', 'data-usd')) > 0, 'the meter prices the tokens');
  assert.match(await page.textContent('.verdict-cost'), new RegExp(`cost: ${script.steps.length} LLM calls`));

  // Hovering a step that looked at nodes highlights them in the graph; leaving clears it.
  await page.click('.story-graph'); // the graph view, where steps highlight nodes
  await page.waitForSelector('#graph-canvas');
  const step = await page.$('#transcript .step:not([data-nodes="0"])');
  await step.hover();
  await page.waitForFunction(() => Number(document.querySelector('#graph-canvas').dataset.highlighted) > 0);
  await screenshot(page, 'llm-transcript-highlight');
  await page.mouse.move(5, 5);
  await page.waitForFunction(() => document.querySelector('#graph-canvas').dataset.highlighted === '0');

  // The counterfactual check through the same provider.
  await setField(page, '#provider-model', 'echo');
  await page.click('#cf-check');
  await page.waitForSelector('#cf-status[data-outcome]', { timeout: 60000 });
  assert.match(await page.getAttribute('#cf-status', 'data-outcome'), /^(verified|refuted|not replayable)$/);
  await screenshot(page, 'llm-verdict');
  // Chromium logs the deliberate 401 as a failed resource load; nothing else may fail.
  assert.deepEqual(problems.filter((p) => !/status of 401/.test(p)), []);
});

test('Cancel aborts the request in flight and ends the run', { timeout: 60000 }, async () => {
  await control({ fault_rate: 1, kinds: ['slow'], slow_ms: 8000 });
  const { page, problems } = await openPage(browser);
  await dropTrace(page, 'locomo_locomo-2.json', fs.readFileSync(FIXTURE), ANNOTATIONS.length);
  await useProvider(page, { model: `auto@cancel-${RUN}`, key: 'sk-e2e-cancel' });
  const aborted = [];
  page.on('requestfailed', (r) => aborted.push(`${r.url()} ${r.failure()?.errorText}`));
  const seq = (await serverLog()).length;
  await page.click('#run-all');
  await page.waitForSelector('#run-cancel:not([disabled])');
  while ((await serverLog()).length === seq) await page.waitForTimeout(50);
  const t0 = Date.now();
  await page.click('#run-cancel');
  await page.waitForSelector('#run-cancel[disabled]', { timeout: 3000 });
  const stopped = Date.now() - t0;
  await control({ fault_rate: 0 });
  assert.ok(stopped < 3000, `stopped after ${stopped} ms`);
  // Playwright reports the failed request a moment later.
  for (let i = 0; i < 40 && aborted.length === 0; i += 1) await page.waitForTimeout(50);
  assert.ok(aborted.some((a) => /chat\/completions .*ERR_ABORTED/.test(a)), `aborted: ${aborted}`);
  assert.match(await page.textContent('#llm-run'), /cancelled/);
  assert.equal(await page.$('#run-failed'), null, 'a cancelled case is not a failure');
  assert.equal(await page.getAttribute('#run-progress', 'data-done'), '0');
  assert.deepEqual(problems, []);
});

test('a case that ends with no verdict keeps what the model said, step by step', { timeout: 60000 }, async () => {
  const { page, problems } = await openPage(browser);
  await dropTrace(page, 'locomo_locomo-2.json', fs.readFileSync(FIXTURE), ANNOTATIONS.length);
  // The "echo" model replies in plain text and never calls a tool: no verdict within the cap.
  await useProvider(page, { model: `echo-${RUN}`, key: 'sk-e2e-echo' });
  await setField(page, '#provider-max-calls', 2);
  await page.click('#failures .failure[data-case="0"]');
  await page.click('#run-one');
  await page.waitForSelector('#run-failed .failed-case', { timeout: 30000 });
  assert.match(await page.textContent('#run-failed .failed-case'), /no verdict: .*iteration cap/);
  const steps = await page.$$eval('#transcript .step', (els) => els.map((e) => e.textContent));
  assert.equal(steps.length, 2, `one step per call: ${JSON.stringify(steps)}`);
  assert.ok(steps.every((x) => /echo:/.test(x)), `the raw replies: ${JSON.stringify(steps)}`);
  await screenshot(page, 'llm-no-verdict-transcript');
  assert.deepEqual(problems, []);
});

/** A generated trace with at least `min` failed questions (`memtrace gen`, at test time). */
function generatedTrace(min) {
  const out = path.join(os.tmpdir(), `memtrace-e2e-batch-${process.pid}.json`);
  const built = ['debug', 'release'].map((p) => path.join(ROOT, 'target', p, 'memtrace')).find((f) => fs.existsSync(f));
  for (const nodes of [4500, 6000, 12000]) {
    const args = ['gen', '--nodes', String(nodes), '--seed', '3', '-o', out];
    if (built) execFileSync(built, args);
    else execFileSync('cargo', ['run', '-q', '-p', 'memtrace-cli', '--bin', 'memtrace', '--', ...args], { cwd: ROOT });
    const info = JSON.parse(execFileSync(built || 'cargo', built ? ['info', '--json', out]
      : ['run', '-q', '-p', 'memtrace-cli', '--bin', 'memtrace', '--', 'info', '--json', out], { cwd: ROOT }));
    const failures = [info].flat()[0].failures;
    if (failures >= min) return { bytes: fs.readFileSync(out), failures };
  }
  throw new Error(`memtrace gen made fewer than ${min} failures`);
}

test('a batch of ≥ 50 cases under a 30 % fault rate survives a reload: every case done, none paid twice', { timeout: 600000 }, async () => {
  const { bytes, failures } = generatedTrace(50);
  const name = 'batch.json';
  await control({ fault_rate: 0.3, seed: 11, kinds: ['429', '500', 'slow', 'malformed', 'truncated'], retry_after_s: 1, slow_ms: 2500 });
  const { page, problems } = await openPage(browser);
  await dropTrace(page, name, bytes, failures);
  await useProvider(page, { model: `auto@batch-${RUN}`, key: 'sk-e2e-batch', timeoutS: 2 });
  await page.click('#run-all');
  await page.waitForFunction(() => Number(document.querySelector('#run-progress')?.dataset.done) >= 15, null, { timeout: 300000 });
  await screenshot(page, 'llm-batch-before-reload');

  // Reload in the middle; what is stored then is what must never be asked for again.
  const before = await storedSettings(page);
  const done = Object.entries(before.verdicts[name] || {}).filter(([, v]) => v.method === 'graphtrace').map(([q]) => q);
  assert.ok(done.length >= 10, `verdicts stored before the reload: ${done.length}`);
  await page.reload();
  await waitField(page, 'failures', failures);
  await page.selectOption('#attr-method', 'graphtrace');
  await page.waitForSelector('#run-all');
  const seqAtReload = (await serverLog()).length;
  // Once the stored verdicts are restored, the finished cases are not to do.
  await page.waitForFunction((most) => {
    const m = /\((\d+) to do\)/.exec(document.querySelector('#run-all').textContent);
    return m && Number(m[1]) <= most;
  }, failures - done.length, { timeout: 15000 });
  await page.click('#run-all');
  await page.waitForFunction(() => {
    const p = document.querySelector('#run-progress');
    return p && p.dataset.done === p.dataset.total && document.querySelector('#run-cancel').disabled;
  }, null, { timeout: 500000 });
  // Cases that failed after every retry are shown; retrying them finishes the batch.
  for (let i = 0; i < 3 && await page.$('#run-failed'); i += 1) {
    await page.click('#retry-failed');
    await page.waitForFunction(() => document.querySelector('#run-cancel').disabled
      && document.querySelector('#run-progress').dataset.done === document.querySelector('#run-progress').dataset.total,
    null, { timeout: 200000 });
  }
  assert.equal(await page.$('#run-failed'), null, 'no case left failed');
  await screenshot(page, 'llm-batch-done');
  await page.waitForTimeout(500);
  const after = await storedSettings(page);
  const finished = Object.values(after.verdicts[name]).filter((v) => v.method === 'graphtrace');
  assert.equal(finished.length, failures, 'every case has a graphtrace verdict');
  assert.ok(finished.every((v) => v.cost && v.cost.llm_calls >= 1), 'each verdict carries its cost');

  const log = await serverLog();
  const batch = log.filter((e) => e.body && e.body.model === `auto@batch-${RUN}`);
  const faults = batch.filter((e) => e.fault);
  const kinds = new Set(faults.map((e) => e.fault));
  const rate = faults.length / batch.length;
  console.log(`batch: ${failures} cases, ${batch.length} requests, ${faults.length} faults (${(rate * 100).toFixed(1)} %: ${[...kinds].sort().join(', ')}), ${done.length} done before the reload`);
  assert.ok(rate > 0.2, `fault rate ${rate}`);
  for (const k of ['429', '500', 'slow', 'malformed', 'truncated']) assert.ok(kinds.has(k), `fault ${k} injected`);
  assert.ok(batch.every((e) => caseOf(e)), 'every request names its case');
  const again = log.slice(seqAtReload).map(caseOf).filter((q) => q && done.includes(q));
  assert.deepEqual([...new Set(again)], [], 'cases finished before the reload were asked for again');
  await control({ fault_rate: 0 });
  assert.deepEqual(problems.filter((p) => !/Failed to load resource/.test(p)), []);
});

/** A full session recording every request and console line; returns what it saw. */
async function session(remember) {
  const key = `sk-e2e-secret-${remember ? 'kept' : 'tab'}-${RUN}`;
  await control({ fault_rate: 0 });
  const { page, context, problems } = await openPage(browser);
  const requests = [];
  const consoleLines = [];
  context.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => consoleLines.push(m.text()));
  await page.reload();
  await dropTrace(page, 'locomo_locomo-2.json', fs.readFileSync(FIXTURE), ANNOTATIONS.length);
  await useProvider(page, { model: `auto@net-${RUN}`, key });
  if (remember) await page.check('#remember-key');
  await page.click('#test-connection');
  await page.waitForSelector('#connection-status[data-ok="true"]', { timeout: 20000 });
  await page.click('#failures .failure[data-case="0"]');
  await page.click('#run-one');
  await page.waitForSelector('#verdict[data-op]', { timeout: 60000 });
  const downloads = [];
  for (const sel of ['#export-verdicts-json', '#export-verdicts-csv', 'button[title^="save every loaded trace"]']) {
    const [d] = await Promise.all([page.waitForEvent('download'), page.click(sel)]);
    downloads.push(fs.readFileSync(await d.path(), 'utf8'));
  }
  await page.waitForTimeout(400);
  const local = await page.evaluate(() => JSON.stringify({ ...localStorage }));
  const tab = await page.evaluate(() => JSON.stringify({ ...sessionStorage }));
  const idb = await dumpIndexedDb(page);
  // After a reload the key is still usable (this tab, or remembered).
  await page.reload();
  await page.waitForSelector('#summary');
  await page.selectOption('#attr-method', 'graphtrace');
  const summary = await page.textContent('#provider summary');
  await context.close();
  return { key, requests, consoleLines, downloads, local, tab, idb, summary, problems };
}

for (const remember of [false, true]) {
  test(`network and key (remember the key: ${remember})`, { timeout: 120000 }, async () => {
    const s = await session(remember);
    const pageOrigin = new URL(BASE_URL).origin;
    const base = `${LLM}/v1/`;
    const elsewhere = s.requests.filter((u) => !(new URL(u).origin === pageOrigin || u.startsWith(base)));
    assert.deepEqual(elsewhere, [], 'requests outside the page origin and the base URL');
    assert.ok(s.requests.some((u) => u.startsWith(`${base}chat/completions`)), 'the provider was called');
    assert.ok(s.requests.every((u) => !u.includes(s.key)), 'key in a URL');
    assert.ok(s.consoleLines.every((l) => !l.includes(s.key)), 'key in the console');
    s.downloads.forEach((d, i) => assert.ok(!d.includes(s.key), `key in export ${i}`));
    assert.ok(!s.idb.includes(s.key), 'key in IndexedDB');
    assert.equal(s.local.includes(s.key), remember, 'key in localStorage only when remembered');
    assert.equal(s.tab.includes(s.key), !remember, 'key in sessionStorage only when not remembered');
    assert.match(s.summary, /key set/);
    assert.ok(s.idb.includes(`auto@net-${RUN}`), 'the other provider settings are stored');
    assert.deepEqual(s.problems, []);
  });
}
