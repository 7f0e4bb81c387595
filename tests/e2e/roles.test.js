// Foreign-shaped traces in the page: a NaiveRAG run (no extraction op by name) is listed,
// attributed, its roles panel shows roles inferred from structure, and a role override changes
// the verdict at once, survives a reload and travels in the project bundle.
// Traces are generated at test time (tests/e2e/gen-traces; scripts/test sets MEMTRACE_E2E_TRACES).
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { browserFor, openPage, dropFiles, dropTrace, generatedTraces, screenshot } = require('./browser');

let traces;
const held = browserFor(test, () => { traces = generatedTraces(); });

/** The generated file of `system` with the most failed cases (name, bytes, its annotated cases). */
function generated(system) {
  const dir = path.join(traces, system);
  const files = fs.readdirSync(dir).filter((n) => n.endsWith('.json')).sort().map((n) => {
    const bytes = fs.readFileSync(path.join(dir, n));
    return { name: `${system}-${n}`, bytes, annotations: JSON.parse(bytes).data.annotations };
  });
  assert.ok(files.length > 0, `no ${system} trace in ${dir}: run tests/e2e/gen-traces`);
  return files.reduce((a, b) => (b.annotations.length > a.annotations.length ? b : a));
}

const rolesOf = (page) => page.$$eval('#roles .role-row', (rows) => Object.fromEntries(rows.map((r) =>
  [r.dataset.opName, { role: r.dataset.role, inferred: r.dataset.inferred, overridden: r.dataset.overridden === 'true',
    why: r.querySelector('.role-why').textContent }])));

const verdictOf = (page) => page.evaluate(() => {
  const v = document.querySelector('#verdict');
  return v && { type: v.dataset.type, op: v.dataset.op, role: v.dataset.role,
    name: v.querySelector('.verdict-op-name')?.textContent, reason: v.querySelector('.verdict-reason')?.textContent,
    text: v.textContent };
});

/** The error type of a role the verdict can move to: another role that can be at fault. */
const TYPE = { extraction: 'ExtractionError', update: 'UpdateError', deletion: 'DeletionError',
  retrieval: 'RetrievalError', response: 'ResponseError' };

/** Drops `file`, checks its `cases` failures are listed, attributes them all, opens the roles
 *  panel from the keyboard and overrides the role of one verdict's op (the extraction step's, if
 *  a verdict blames it): the verdict is retyped at once. Screenshots as `shot`-panel / -override. */
async function attributeAndOverride(page, file, cases, shot) {
  await dropTrace(page, file);
  // Every failed question is listed.
  await page.waitForFunction((n) => document.querySelectorAll('#failures .failure').length === n,
    cases, { timeout: 15000 });
  assert.ok(cases >= 3, `${cases} cases`);

  // Attribute all: every failure gets a verdict.
  await page.click('#attribute-all');
  await page.waitForFunction((n) => document.querySelectorAll('#failures .badge.verdict').length === n,
    cases, { timeout: 20000 });

  // The roles panel, opened from the keyboard (L), lists every op name with a role and a reason.
  await page.click('#summary');
  if (await page.getAttribute('#roles-toggle', 'aria-pressed') !== 'true') await page.keyboard.press('Shift+L');
  await page.waitForSelector('#roles .role-row');
  assert.equal(await page.getAttribute('#roles-toggle', 'aria-pressed'), 'true');
  const roles = await rolesOf(page);
  // MemBase files NaiveRAG's chunk store under category "update"; structure says it creates
  // memory units from messages, so it is the extraction step.
  const writers = Object.entries(roles).filter(([, r]) => r.role === 'extraction');
  assert.ok(writers.length >= 1, JSON.stringify(roles));
  assert.match(writers[0][1].why, /^structure: .*messages/);
  for (const want of ['retrieval', 'response', 'judge']) {
    assert.ok(Object.values(roles).some((r) => r.role === want && !r.overridden), `${want}: ${JSON.stringify(roles)}`);
  }
  await screenshot(page, `${shot}-panel`);

  // A case with a verdict (one blaming the extraction step, if any): its op's role is shown with it.
  let pick = 0;
  for (let i = 0; i < cases; i += 1) {
    await page.click(`#failures .failure[data-case="${i}"]`);
    await page.waitForSelector('#verdict[data-op]');
    if ((await verdictOf(page)).role === 'extraction') { pick = i; break; }
  }
  const row = `#failures .failure[data-case="${pick}"]`;
  await page.click(row);
  await page.waitForSelector('#verdict[data-op]');
  const before = await verdictOf(page);
  assert.ok(before.role, JSON.stringify(before));
  assert.equal(before.role, roles[before.name].role);
  assert.match(before.text, new RegExp(`role ${before.role}`));

  // Override that op's role from the keyboard: focus its menu, pick another role that can be at
  // fault (for NaiveRAG's chunk store: update, as MemBase's category says).
  const to = ['update', 'extraction'].find((r) => r !== before.role);
  const select = `#roles .role-row[data-op-name="${before.name}"] select`;
  await page.focus(select);
  if (before.role === 'extraction') await page.keyboard.press('ArrowDown'); // the next role: update
  else await page.selectOption(select, to);
  await page.waitForSelector(`#roles .role-row[data-op-name="${before.name}"][data-overridden="true"]`);
  await page.waitForFunction((t) => document.querySelector('#verdict')?.dataset.type === t, TYPE[to], { timeout: 10000 });
  const after = await verdictOf(page);
  assert.equal(after.op, before.op, 'same op, typed by the role you gave it');
  assert.equal(after.role, to);
  assert.match(after.text, /\(yours\)/);
  assert.match(await page.textContent(row), new RegExp(`verdict: ${TYPE[to]}`));
  assert.match(await page.textContent('#roles [data-field="roles-count"]'), /1 overridden/);
  await screenshot(page, `${shot}-override`);
  return { before, to, row, select };
}

test('NaiveRAG: failures listed and attributed, roles inferred from structure, an override changes the verdict', async () => {
  const file = generated('naiverag');
  const { page, problems } = await openPage(held.browser);
  const { before, to, row, select } = await attributeAndOverride(page, file, file.annotations.length, 'roles');

  // The override survives a reload (IndexedDB) ...
  await page.waitForTimeout(400);
  await page.reload();
  await page.waitForSelector('#summary', { timeout: 20000 });
  await page.click(`.tab-name:text-is("${file.name}")`);
  if (await page.getAttribute('#roles-toggle', 'aria-pressed') !== 'true') await page.click('#roles-toggle');
  await page.waitForSelector(`#roles .role-row[data-op-name="${before.name}"][data-role="${to}"][data-overridden="true"]`);
  await page.click(row);
  await page.waitForFunction((t) => document.querySelector('#verdict')?.dataset.type === t, TYPE[to], { timeout: 10000 });

  // ... and travels in the exported project.
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('text=Export project')]);
  const bundle = fs.readFileSync(await dl.path());
  assert.deepStrictEqual(JSON.parse(bundle).settings.roles[file.name], { [before.name]: to });
  const fresh = await openPage(held.browser);
  await fresh.page.waitForSelector('#summary', { timeout: 20000 });
  await dropFiles(fresh.page, [{ name: 'memtrace-project.json', bytes: bundle }]);
  await fresh.page.waitForFunction((n) => document.querySelector('.tab.active .tab-name')?.textContent.trim() === n,
    file.name, { timeout: 20000 });
  await fresh.page.click('#roles-toggle');
  await fresh.page.waitForSelector(`#roles .role-row[data-op-name="${before.name}"][data-role="${to}"][data-overridden="true"]`);
  assert.deepStrictEqual(fresh.problems, []);

  // Reset from the keyboard (the menu, then Tab to its reset): the inferred role and the first
  // verdict are back.
  await page.focus(select);
  await page.keyboard.press('Tab');
  assert.ok(await page.evaluate(() => document.activeElement?.classList.contains('role-reset')));
  await page.keyboard.press('Enter');
  await page.waitForSelector(`#roles .role-row[data-op-name="${before.name}"][data-overridden="false"]`);
  await page.waitForFunction((t) => document.querySelector('#verdict')?.dataset.type === t, before.type, { timeout: 10000 });
  assert.equal((await verdictOf(page)).role, before.role);
  assert.deepStrictEqual(problems, []);
});

test('OTLP with an LLM-as-judge span: failures found without a rule, attributed, roles shown, an override changes the verdict', async () => {
  const dir = path.join(traces, 'naiverag-otlp');
  const names = fs.readdirSync(dir).filter((n) => n.endsWith('.jsonl')).sort();
  assert.ok(names.length > 0, `no OTLP trace in ${dir}: run tests/e2e/gen-traces`);
  // The file with the most wrong answers, by its sidecar ground truth (not dropped: the page must
  // find them from the judge span alone).
  const files = names.map((n) => {
    const sidecar = path.join(dir, n.replace(/\.jsonl$/, '.annotations.json'));
    assert.ok(fs.existsSync(sidecar), `no sidecar ${sidecar}`);
    const truth = JSON.parse(fs.readFileSync(sidecar, 'utf8'));
    return { name: `otlp-${n}`, bytes: fs.readFileSync(path.join(dir, n)), cases: (Array.isArray(truth) ? truth : truth.annotations).length };
  });
  const file = files.reduce((a, b) => (b.cases > a.cases ? b : a));
  const text = file.bytes.toString('utf8');
  assert.doesNotMatch(text, /"EVALUATOR"/, 'judged by an LLM span, not an evaluator');
  const { page, problems } = await openPage(held.browser);
  await attributeAndOverride(page, file, file.cases, 'roles-otlp');
  assert.equal(await page.textContent('#summary [data-field="format"]'), 'otlp');
  assert.deepStrictEqual(problems, []);
});
