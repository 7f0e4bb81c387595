// "Find all causes" (issue #17): on a generated 2-fault Mem0 case the page runs the core's
// decisive-set search (delta debugging over replays, simulated provider), draws both annotated
// decisive ops — numbered cause chips on story cards or pinned out of folded groups, rings in
// the graph — and lists the replays with their outcomes. A trace that cannot be replayed (an
// OTLP run) says "not replayable" and keeps its single-op verdict. The expected ops come from
// the file's annotation (`decisive_op_ids`), read here. Traces: tests/e2e/gen-traces
// (MEMTRACE_E2E_TRACES).
// Screenshots: artifacts/multi-cause-story.png, multi-cause-graph.png, multi-cause-not-replayable.png.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { browserFor, openPage, dropTrace, generatedTraces, screenshot } = require('./browser');

let traces;
const held = browserFor(test, () => { traces = generatedTraces(); });

/** The first generated file under `dir` ending in `ext` (name, bytes). */
function generated(dir, ext) {
  const full = path.join(traces, dir);
  const names = fs.existsSync(full) ? fs.readdirSync(full).filter((n) => n.endsWith(ext)).sort() : [];
  assert.ok(names.length > 0, `no *${ext} in ${full}: run tests/e2e/gen-traces`);
  return { name: `${dir}-${names[0]}`, bytes: fs.readFileSync(path.join(full, names[0])) };
}

/** Presses "Find all causes" from the keyboard and waits for the search to end. */
async function findAllCauses(page) {
  const title = await page.getAttribute('#find-causes', 'title');
  assert.ok(title && title.length > 20, `the button explains itself: ${title}`);
  await page.focus('#find-causes');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => ['done', 'stopped'].includes(document.querySelector('#causes')?.dataset.state),
    null, { timeout: 60000 });
  assert.equal(await page.getAttribute('#causes', 'data-state'), 'done', await page.textContent('#causes'));
}

test('find all causes on a 2-fault case draws both annotated ops and lists the replays', async () => {
  const file = generated('mem0-2fault', '.json');
  const ann = JSON.parse(file.bytes).data.annotations.find((a) => (a.decisive_op_ids || []).length === 2);
  assert.ok(ann, 'the 2-fault file has an annotation with two decisive_op_ids');
  const want = [...ann.decisive_op_ids].sort();

  const { page, problems } = await openPage(held.browser);
  await page.setViewportSize({ width: 1440, height: 900 });
  await dropTrace(page, file);
  // Select the annotated failure by its question.
  const row = page.locator('#failures .failure').filter({ has: page.locator('.q', { hasText: ann.query }) }).first();
  await row.click();
  await page.waitForSelector(`#causes[data-query="${ann.query_id}"][data-state="idle"]`);
  await page.waitForSelector('#story .story-card');
  await findAllCauses(page);

  // The set: both annotated ops, numbered.
  assert.equal(await page.getAttribute('#causes .causes-result', 'data-outcome'), 'found');
  const listed = await page.$$eval('#causes-list .cause', (els) => els.map((e) => ({ op: e.dataset.op, n: e.dataset.cause })));
  assert.deepStrictEqual(listed.map((c) => c.op).sort(), want, JSON.stringify(listed));
  assert.deepStrictEqual(listed.map((c) => c.n), ['1', '2']);

  // Drawn in the story: each op's card, or its entry in an opened group, carries its cause chip.
  for (const { op, n } of listed) {
    const marked = page.locator(`#story .story-card[data-id="${op}"][data-cause="${n}"], #story .cause-pin[data-id="${op}"][data-cause="${n}"]`);
    assert.equal(await marked.count(), 1, `${op} marked as cause ${n} in the story`);
    assert.ok(await marked.first().isVisible(), `${op} visible in the story`);
    assert.match(await marked.first().locator('.cause-chip').textContent(), new RegExp(`cause ${n}`));
  }

  // The replays: at least one, each with the ops it repaired and an outcome; the first
  // (every candidate repaired) rescues the answer and repairs both causes.
  const replays = await page.$$eval('#causes-replays .replay', (els) => els.map((e) => ({
    rescued: e.dataset.rescued, outcome: e.querySelector('.replay-outcome')?.textContent || '',
    repaired: [...e.querySelectorAll('.op-tag')].map((t) => t.dataset.op),
  })));
  assert.ok(replays.length >= 1, 'replays listed');
  for (const r of replays) {
    assert.ok(r.repaired.length >= 1, JSON.stringify(r));
    assert.match(r.outcome, r.rescued === 'true' ? /right/ : /wrong/, JSON.stringify(r));
  }
  assert.equal(replays[0].rescued, 'true', JSON.stringify(replays[0]));
  for (const op of want) assert.ok(replays[0].repaired.includes(op), `replay 1 repairs ${op}`);
  assert.ok(replays.some((r) => r.rescued === 'false'), 'some replay leaves the answer wrong');
  await screenshot(page, 'multi-cause-story');

  // Drawn in the graph: both ops laid out and ringed, on the canvas.
  await page.click('#summary');
  await page.keyboard.press('g');
  await page.waitForSelector('#graph-canvas');
  await page.waitForFunction((n) => (window.__memtrace_graph_stats?.causes || []).length === n, want.length, { timeout: 10000 });
  const drawn = (await page.getAttribute('#graph-canvas', 'data-causes')).split(' ').sort();
  assert.deepStrictEqual(drawn, want);
  const box = await page.locator('#graph-canvas').boundingBox();
  const points = await page.evaluate(() => window.__memtrace_graph_stats.causes);
  for (const [n, x, y] of points) {
    assert.ok(x >= 0 && y >= 0 && x <= box.width && y <= box.height, `cause ${n} at ${x},${y} inside the canvas`);
  }
  await screenshot(page, 'multi-cause-graph');
  assert.deepStrictEqual(problems, []);
});

test('a trace that cannot be replayed says "not replayable" and keeps its single-op verdict', async () => {
  const file = generated('naiverag-otlp', '.jsonl');
  const { page, problems } = await openPage(held.browser);
  await page.setViewportSize({ width: 1440, height: 900 });
  await dropTrace(page, file);
  await page.waitForSelector('#failures .failure', { timeout: 15000 });
  await page.click('#failures .failure');
  await page.click('#attribute-one');
  await page.waitForSelector('#verdict[data-op]');
  const verdictOp = await page.getAttribute('#verdict', 'data-op');
  await findAllCauses(page);

  assert.equal(await page.getAttribute('#causes .causes-result', 'data-outcome'), 'not replayable');
  assert.match(await page.textContent('#causes .causes-outcome'), /not replayable/);
  assert.equal(await page.getAttribute('#causes-single', 'data-op'), verdictOp, 'the single-op verdict stands');
  assert.equal(await page.locator('#causes-list .cause').count(), 0, 'no made-up set');
  assert.equal(await page.locator('#causes-replays .replay').count(), 0);
  assert.equal(await page.locator('#story [data-cause]').count(), 0);
  assert.equal(await page.getAttribute('#verdict', 'data-op'), verdictOp);
  await screenshot(page, 'multi-cause-not-replayable');
  assert.deepStrictEqual(problems, []);
});
