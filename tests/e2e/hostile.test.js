// Hostile content: a trace whose values, names, comments, op names and questions carry HTML/script
// payloads must render as text. No payload may run (window.__pwned stays undefined) and no element
// from a payload may reach the DOM.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { launch, openPage, dropFiles, screenshot, FIXTURES } = require('./browser');

const FIXTURE = path.join(FIXTURES, 'locomo_locomo-1.json');

const PAYLOADS = [
  '<script>window.__pwned=1</script>',
  '<img src=x onerror="window.__pwned=1">',
  '"><svg onload=window.__pwned=1>',
  "'><iframe src=\"javascript:window.__pwned=1\"></iframe>",
  '<a href="javascript:window.__pwned=1" id="pwn-link">click</a>',
  '<details open ontoggle="window.__pwned=1">',
  '{{constructor.constructor("window.__pwned=1")()}}',
  '<style>*{display:none}</style>',
];
const ALL = PAYLOADS.join(' ');

/** The real fixture with every payload appended to node values, comments, op names, message and
 * memory-unit names (every reference to a renamed node is rewritten) and the annotated questions. */
function hostileTrace() {
  const doc = JSON.parse(fs.readFileSync(FIXTURE, 'utf8'));
  const renamed = new Map();
  doc.data.nodes.forEach((n, i) => {
    if (n.category === 'message' || /^memory-unit-/.test(n.name)) {
      // Names may not contain '@' (it separates the version); the payloads have none.
      renamed.set(n.name, `${n.name}${PAYLOADS[i % PAYLOADS.length]}`);
    }
    if (typeof n.value === 'string') {
      try {
        const v = JSON.parse(n.value);
        if (v && typeof v === 'object' && !Array.isArray(v)) {
          for (const k of Object.keys(v)) if (typeof v[k] === 'string') v[k] = `${v[k]} ${ALL}`;
          n.value = JSON.stringify(v);
        } else if (typeof v === 'string') {
          n.value = JSON.stringify(`${v} ${ALL}`);
        }
      } catch {
        n.value = `${n.value} ${ALL}`;
      }
    }
    if (typeof n.comment === 'string') n.comment = `${n.comment} ${ALL}`;
  });
  for (const op of doc.data.operations) {
    op.op_name = `${op.op_name}${PAYLOADS[1]}`;
    if (typeof op.comment === 'string') op.comment = `${op.comment} ${ALL}`;
  }
  for (const e of doc.data.edges) if (typeof e.comment === 'string') e.comment = `${e.comment} ${PAYLOADS[0]}`;
  for (const a of doc.data.annotations) {
    a.query = `${a.query} ${PAYLOADS[2]}`;
    a.prediction = `${a.prediction} ${PAYLOADS[1]}`;
  }
  const rewrite = (x) => {
    if (typeof x === 'string') {
      const m = /^(.*)@(\d+)$/s.exec(x);
      if (m && renamed.has(m[1])) return `${renamed.get(m[1])}@${m[2]}`;
      return renamed.has(x) ? renamed.get(x) : x;
    }
    if (Array.isArray(x)) return x.map(rewrite);
    if (x && typeof x === 'object') {
      for (const k of Object.keys(x)) x[k] = rewrite(x[k]);
    }
    return x;
  };
  rewrite(doc.data);
  return Buffer.from(JSON.stringify(doc));
}

/** Elements or state a payload would leave behind if it had been parsed as HTML or run. */
const injected = (page) => page.evaluate(() => ({
  pwned: typeof window.__pwned,
  imgs: document.querySelectorAll('img[src="x"]').length,
  svgs: document.querySelectorAll('svg[onload]').length,
  iframes: document.querySelectorAll('iframe').length,
  links: document.querySelectorAll('a[href^="javascript:"], #pwn-link').length,
  details: document.querySelectorAll('details[ontoggle]').length,
  handlers: [...document.querySelectorAll('*')].filter((el) => el.getAttribute('onerror') !== null
    || el.getAttribute('onload') !== null || el.getAttribute('ontoggle') !== null).length,
  scripts: [...document.querySelectorAll('script')].filter((s) => s.textContent.includes('__pwned')).length,
  styles: [...document.querySelectorAll('style')].filter((s) => s.textContent.includes('display:none')).length,
}));

const CLEAN = { pwned: 'undefined', imgs: 0, svgs: 0, iframes: 0, links: 0, details: 0, handlers: 0, scripts: 0, styles: 0 };

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { await browser.close(); });

test('payloads in a trace render as text: no script runs, nothing is injected', async () => {
  const { page, problems } = await openPage(browser);
  await page.waitForSelector('#summary', { timeout: 20000 });
  await dropFiles(page, [{ name: 'hostile<img src=x onerror="window.__pwned=1">.json', bytes: hostileTrace() }]);
  // Wait for the hostile trace itself (the demo's failures are already listed before it loads).
  await page.waitForFunction(() => {
    const list = document.querySelector('#failures');
    return list && list.textContent.includes('<svg onload=window.__pwned=1>');
  }, null, { timeout: 20000 });
  // The question's payload is shown as text.
  assert.match(await page.textContent('#failures'), /"><svg onload=window.__pwned=1>/);
  assert.deepStrictEqual(await injected(page), CLEAN);
  // Walk the failures; on each, open the inspector on every version of the longest lifeline.
  const count = await page.locator('#failures .failure').count();
  await page.keyboard.press('g'); // the graph, not the story
  await page.waitForSelector('#graph-canvas');
  let opened = 0;
  for (let c = 0; c < count; c += 1) {
    await page.locator('#failures .failure').nth(c).click();
    await page.waitForTimeout(150);
    const s = await page.evaluate(() => window.__memtrace_graph_stats);
    const box = await page.locator('#graph-canvas').boundingBox();
    for (const [x, y] of (s && s.lifeline_points) || []) {
      await page.mouse.click(box.x + x, box.y + y);
      await page.waitForTimeout(60);
      const id = await page.locator('#inspector [data-field="node-id"]').textContent().catch(() => '');
      if (/memory-unit-/.test(id || '')) {
        opened += 1;
        assert.match(id, /<|svg|img|script|iframe|details|style|constructor/, 'the payload in the name shows as text');
      }
      assert.deepStrictEqual(await injected(page), CLEAN);
    }
  }
  assert.ok(opened >= 1, 'the inspector opened on at least one payload-carrying node');
  const inspector = await page.textContent('#inspector');
  assert.ok(inspector.includes('window.__pwned=1'), 'the inspector shows the payload as text');
  await screenshot(page, 'hostile');
  await page.waitForTimeout(300);
  assert.deepStrictEqual(await injected(page), CLEAN);
  assert.deepStrictEqual(problems, []);
});
