// The viewer: failures list, canvas graph, inspector with version diff, persistence, keyboard.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { browserFor, dropLocomo1, openPage, dropFiles, generatedTraces, screenshot, waitField, FIXTURES } = require('./browser');

const FIXTURE = path.join(FIXTURES, 'locomo_locomo-1.json');

const held = browserFor(test);

const dropFixture = dropLocomo1;

const stats = (page) => page.evaluate(() => window.__memtrace_graph_stats);

/** Share of canvas pixels that differ from its top-left (background) pixel. */
const inkRatio = (page) => page.evaluate(() => {
  const c = document.querySelector('#graph-canvas');
  const ctx = c.getContext('2d');
  const { data } = ctx.getImageData(0, 0, c.width, c.height);
  let ink = 0;
  for (let i = 0; i < data.length; i += 4) {
    if (Math.abs(data[i] - data[0]) + Math.abs(data[i + 1] - data[1]) + Math.abs(data[i + 2] - data[2]) > 30) ink += 1;
  }
  return ink / (data.length / 4);
});

const selectedCase = (page) => page.getAttribute('#failures .failure.selected', 'data-case');

test('the failures list shows the six annotated cases with their labels', async () => {
  const { page, problems } = await openPage(held.browser);
  await dropFixture(page);
  const text = await page.textContent('#failures');
  for (const label of ['ExtractionError', 'UpdateError', 'DeletionError', 'RetrievalError', 'ResponseError']) {
    assert.match(text, new RegExp(label));
  }
  assert.match(text, /When did Caroline go to the LGBTQ support group\?/);
  assert.match(text, /7 May 2023/);
  // Filter by type, then clear it.
  await page.selectOption('#failures select[aria-label="filter by error type"]', 'ResponseError');
  await page.waitForFunction(() => document.querySelectorAll('#failures .failure').length === 2);
  await page.selectOption('#failures select[aria-label="filter by error type"]', '');
  await page.waitForFunction(() => document.querySelectorAll('#failures .failure').length === 6);
  await screenshot(page, 'viewer-failures');
  assert.deepStrictEqual(problems, []);
});

test('selecting a failure draws its slice on the canvas; j/k move the selection', async () => {
  const { page, problems } = await openPage(held.browser);
  await dropFixture(page);
  await page.click('#failures .failure[data-case="1"]');
  await page.waitForFunction(() => document.querySelector('#failures .failure.selected')?.dataset.case === '1');
  // A failure opens as its story; g shows its graph (and keeps it for the next failures).
  await page.waitForSelector('#story .story-card');
  await page.keyboard.press('g');
  await page.waitForSelector('#graph-canvas');
  await page.waitForTimeout(200);
  const s = await stats(page);
  assert.ok(s.nodes > 10 && s.drawn_nodes === s.nodes, JSON.stringify(s));
  assert.ok(s.path_nodes >= 1, 'the information path is highlighted');
  const ink = await inkRatio(page);
  assert.ok(ink > 0.005, `canvas is drawn (ink ${ink})`);
  await page.keyboard.press('j');
  await page.waitForFunction(() => document.querySelector('#failures .failure.selected')?.dataset.case === '2');
  await page.keyboard.press('k');
  await page.keyboard.press('k');
  await page.waitForFunction(() => document.querySelector('#failures .failure.selected')?.dataset.case === '0');
  // Zoom in with the keyboard: labels appear, fewer nodes are drawn (culling).
  await page.focus('#graph-canvas');
  for (let i = 0; i < 6; i += 1) await page.keyboard.press('+');
  const zoomed = await stats(page);
  assert.equal(zoomed.detail, 'labels');
  assert.ok(zoomed.drawn_nodes < zoomed.nodes, JSON.stringify(zoomed));
  await screenshot(page, 'viewer-graph-zoomed');
  await page.keyboard.press('f');
  await page.waitForFunction(() => window.__memtrace_graph_stats.drawn_nodes === window.__memtrace_graph_stats.nodes);
  assert.deepStrictEqual(problems, []);
});

test('a memory unit with two versions shows a side-by-side diff', async () => {
  const { page, problems } = await openPage(held.browser);
  await dropFixture(page);
  await page.keyboard.press('g'); // the graph, not the story
  await page.waitForSelector('#graph-canvas');
  // Walk the failures until one's slice holds a lifeline (a unit with >= 2 versions).
  let s = await stats(page);
  for (let i = 0; i < 6 && !(s && s.lifelines > 0); i += 1) {
    await page.keyboard.press('j');
    await page.waitForTimeout(150);
    s = await stats(page);
  }
  assert.ok(s.lifelines > 0, JSON.stringify(s));
  const box = await page.locator('#graph-canvas').boundingBox();
  const [x, y] = s.lifeline_points[s.lifeline_points.length - 1];
  await page.mouse.click(box.x + x, box.y + y);
  await page.waitForSelector('#version-diff tr', { timeout: 10000 });
  assert.match(await page.textContent('#inspector [data-field="node-id"]'), /memory-unit-.*@[2-9]/);
  const changed = await page.locator('#version-diff tr.changed, #version-diff tr.added, #version-diff tr.removed').count();
  assert.ok(changed >= 1, 'the versions differ');
  assert.ok(await page.locator('#version-diff mark').count() >= 1, 'changed words are marked');
  await screenshot(page, 'viewer-diff');
  await page.keyboard.press('Escape');
  await page.waitForSelector('#version-diff', { state: 'detached' });
  assert.deepStrictEqual(problems, []);
});

test('reload restores the dropped trace and the selection from IndexedDB', async () => {
  const { page, problems } = await openPage(held.browser);
  await dropFixture(page);
  await page.click('#failures .failure[data-case="3"]');
  await page.waitForTimeout(300); // settings are written after the render
  await page.reload();
  await page.waitForFunction(() => /locomo_locomo-1\.json/.test(document.querySelector('#summary [data-field="name"]')?.textContent || ''), null, { timeout: 20000 });
  await waitField(page, 'operations', 107);
  await page.waitForFunction(() => document.querySelector('#failures .failure.selected')?.dataset.case === '3', null, { timeout: 10000 });
  // The demo is not shown again on a return visit with stored traces.
  assert.doesNotMatch(await page.textContent('.trace-tabs'), /demo/);
  await screenshot(page, 'viewer-restored');
  assert.deepStrictEqual(problems, []);
});

test('export saves a project bundle that loads back in a fresh browser', async () => {
  const { page, problems } = await openPage(held.browser);
  await dropFixture(page);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('text=Export project')]);
  const bytes = fs.readFileSync(await download.path());
  assert.match(bytes.subarray(0, 100).toString(), /memtrace_bundle/);
  const fresh = await openPage(held.browser);
  await fresh.page.waitForSelector('#summary', { timeout: 20000 });
  await dropFiles(fresh.page, [{ name: 'memtrace-project.json', bytes }]);
  await fresh.page.waitForFunction(() => document.querySelectorAll('.trace-tabs .tab').length >= 2, null, { timeout: 15000 });
  await waitField(fresh.page, 'operations', 107);
  assert.deepStrictEqual([...problems, ...fresh.problems], []);
});

test('a trace and a separate annotation file dropped together, in either order, give the annotated cases', async () => {
  const { page, problems } = await openPage(held.browser);
  await page.waitForSelector('#summary', { timeout: 20000 });
  const full = JSON.parse(fs.readFileSync(FIXTURE, 'utf8'));
  const annotations = full.data.annotations;
  delete full.data.annotations;
  // The annotation file first: the page opens the trace before it (session::opening_order).
  await dropFiles(page, [
    { name: 'bare.annotations.json', bytes: Buffer.from(JSON.stringify(annotations)) },
    { name: 'bare.json', bytes: Buffer.from(JSON.stringify(full)) },
  ]);
  // The bare trace already lists its 6 judged-zero questions, unannotated; the annotation file labels them.
  await page.waitForFunction(() => document.querySelectorAll('#failures .badge.type').length === 6, null, { timeout: 20000 });
  assert.equal(await page.locator('#failures .failure').count(), 6);
  assert.match(await page.textContent('#summary [data-field="name"]'), /bare\.json/);
  assert.match(await page.textContent('#failures'), /DeletionError/);
  await waitField(page, 'annotations', '6 (DeletionError 1, ExtractionError 1, ResponseError 2, RetrievalError 1, UpdateError 1)');
  assert.deepStrictEqual(problems, []);
});

test('? opens the keyboard help and Escape closes it', async () => {
  const { page, problems } = await openPage(held.browser);
  await page.waitForSelector('#summary', { timeout: 20000 });
  await page.keyboard.press('?');
  await page.waitForSelector('#help');
  assert.match(await page.textContent('#help'), /next \/ previous failed question/);
  await screenshot(page, 'viewer-help');
  await page.keyboard.press('Escape');
  await page.waitForSelector('#help', { state: 'detached' });
  assert.deepStrictEqual(problems, []);
});

test('a long failures list draws 200 rows, j walks past them, and "Show more" draws the rest', async () => {
  const file = path.join(generatedTraces(), 'large.json');
  const { page, problems } = await openPage(held.browser);
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.waitForSelector('#summary', { timeout: 20000 });
  await page.setInputFiles('#file-input', file);
  await page.waitForFunction(() => document.querySelector('.tab.active .tab-name')?.textContent.trim() === 'large.json',
    null, { timeout: 60000 });
  const all = Number(await page.textContent('#summary [data-field="failures"]'));
  assert.ok(all > 200, `the trace has over 200 failures (${all})`);
  const rows = () => page.locator('#failures .failure').count();
  assert.equal(await rows(), 200);
  assert.equal((await page.textContent('#failures-more')).trim(), `Show ${Math.min(200, all - 200)} more (200 of ${all} shown)`);

  // j from the last drawn row selects the next one, which is drawn.
  await page.click('#failures .failure:nth-child(200)');
  const last = await selectedCase(page);
  await page.keyboard.press('j');
  await page.waitForFunction((c) => {
    const s = document.querySelector('#failures .failure.selected');
    return s && s.dataset.case !== c;
  }, last);
  assert.equal(await rows(), 201);
  await screenshot(page, 'failures-long-list');

  await page.click('#failures-more');
  await page.waitForFunction((n) => document.querySelectorAll('#failures .failure').length === n, Math.min(all, 400));
  assert.equal(await page.locator('#failures-more').count(), all > 400 ? 1 : 0);
  assert.deepStrictEqual(problems, []);
});

test('a load under way can be cancelled: nothing is loaded, the page says so, the next load works', async () => {
  const file = path.join(generatedTraces(), 'large.json');
  const { page, problems } = await openPage(held.browser);
  await page.waitForSelector('#summary', { timeout: 20000 });
  const tabs = () => page.locator('.tab').count();
  const before = await tabs();
  // The load takes a couple of seconds: cancel in the page the moment its progress shows (a click
  // from here could land after the load has finished). A MutationObserver sees the bar the moment
  // it is drawn: polling on animation frames can miss it while the load's slices hold the frames.
  const armCancel = (how) => page.evaluate((h) => {
    window.__cancelled = new Promise((resolve) => {
      const fire = () => {
        if (!document.querySelector('#load-progress')) return false;
        if (h === 'click') document.querySelector('#load-cancel').click();
        else document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
        return true;
      };
      const seen = new MutationObserver(() => {
        if (fire()) {
          seen.disconnect();
          resolve(true);
        }
      });
      seen.observe(document.body, { childList: true, subtree: true });
      setTimeout(() => { seen.disconnect(); resolve(false); }, 20000);
    });
  }, how);
  const cancelled = async () => assert.ok(await page.evaluate(() => window.__cancelled),
    'the progress bar showed and the load was cancelled');
  await armCancel('click');
  await page.setInputFiles('#file-input', file);
  await cancelled();
  await screenshot(page, 'load-progress');
  await page.waitForSelector('#load-errors', { timeout: 10000 });
  assert.match(await page.textContent('#load-errors'), /large\.json[\s\S]*loading cancelled/);
  await page.waitForSelector('#load-progress', { state: 'detached' });
  assert.equal(await tabs(), before, 'no tab for the cancelled file');

  // Escape cancels too; then a load left alone finishes.
  await armCancel('Escape');
  await page.setInputFiles('#file-input', file);
  await cancelled();
  await page.waitForSelector('#load-progress', { state: 'detached' });
  assert.equal(await tabs(), before);
  await page.setInputFiles('#file-input', file);
  await page.waitForFunction(() => document.querySelector('.tab.active .tab-name')?.textContent.trim() === 'large.json',
    null, { timeout: 60000 });
  assert.deepStrictEqual(problems, []);
});
