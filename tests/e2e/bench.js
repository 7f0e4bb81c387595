// The page benchmark in headless Chromium, run by `scripts/bench --browser` (not a test: node --test
// skips it). Prints one Markdown table: first paint after dropping a large generated trace, median
// frame time while panning it, the gzipped wasm size, the longest main-thread task while it loads and
// where the load time goes; each with its goal and a baseline from the
// same run.
//   node tests/e2e/bench.js URL DIST BIG.json SMALL.json
const [url, dist, bigPath, smallPath] = process.argv.slice(2);
process.env.MEMTRACE_E2E_URL = url; // read by ./browser when it loads
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');
const { launch, openPage } = require('./browser');

const PAN_MOVES = 60;

/** Page time (ms since navigation) of the first graph frame, recorded by an init script. */
const FIRST_PAINT = () => {
  const tick = () => {
    // The first view of a failure: its story (cards) or the graph.
    if (window.__memtrace_graph_stats || document.querySelector('#story .story-card')) window.__bench_first_paint = performance.now();
    else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
};

/** Drops the file at `file` (read by the browser from disk through a file input of our own, as a
 *  dropped file would be) and resolves with ms from the drop to the first frame showing it
 *  (`ms`), which view that was (`view`), the main thread's long tasks (PerformanceObserver
 *  'longtask', over 50 ms) from the drop to that frame (`tasks`) and in the 2 s after it
 *  (`after`), and the page's load stages (`memtrace:*` performance measures) since the drop. */
async function dropAndPaint(page, file) {
  await page.evaluate(() => {
    if (document.querySelector('#bench-input')) return;
    const input = Object.assign(document.createElement('input'), { type: 'file', id: 'bench-input', hidden: true });
    document.body.append(input);
  });
  await page.setInputFiles('#bench-input', file);
  return page.evaluate(async (name) => {
    const dt = new DataTransfer();
    dt.items.add(document.querySelector('#bench-input').files[0]);
    const zone = document.querySelector('#drop-zone');
    const shown = () => (document.querySelector('#summary [data-field="name"]')?.textContent || '').includes(name)
      && (window.__memtrace_graph_stats || document.querySelector('#story .story-card'));
    window.__memtrace_graph_stats = null;
    const long = [];
    const observer = new PerformanceObserver((list) => long.push(...list.getEntries()));
    observer.observe({ type: 'longtask', buffered: true });
    const t0 = performance.now();
    zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
    zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    const t1 = await new Promise((resolve) => {
      const tick = () => {
        // The frame after the one that drew it: the drawn canvas is on screen.
        if (shown()) requestAnimationFrame(() => resolve(performance.now()));
        else requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    const view = document.querySelector('#story .story-card') ? 'story' : 'graph';
    await new Promise((r) => setTimeout(r, 2000));
    long.push(...observer.takeRecords());
    observer.disconnect();
    const task = (e) => ({ start: e.startTime - t0, ms: e.duration });
    const stages = performance.getEntriesByType('measure')
      .filter((m) => m.name.startsWith('memtrace:') && m.startTime >= t0)
      .map((m) => ({ name: m.name.slice('memtrace:'.length), start: m.startTime - t0, ms: m.duration }));
    performance.clearMeasures();
    return {
      ms: t1 - t0,
      view,
      tasks: long.filter((e) => e.startTime + e.duration > t0 && e.startTime < t1).map(task),
      after: long.filter((e) => e.startTime >= t1).map(task),
      stages,
    };
  }, path.basename(file));
}

/** The floor a dropped file has: ms to read the file at `file` (File.arrayBuffer) and parse it
 *  (TextDecoder + JSON.parse) in the page, median of three. */
async function readAndParse(page, file) {
  await page.evaluate(() => {
    if (document.querySelector('#bench-floor')) return;
    const input = Object.assign(document.createElement('input'), { type: 'file', id: 'bench-floor', hidden: true });
    document.body.append(input);
  });
  await page.setInputFiles('#bench-floor', file);
  const ms = await page.evaluate(async () => {
    const times = [];
    for (let i = 0; i < 3; i += 1) {
      const t0 = performance.now();
      const buf = await document.querySelector('#bench-floor').files[0].arrayBuffer();
      const doc = JSON.parse(new TextDecoder().decode(buf));
      times.push(performance.now() - t0);
      if (!doc) throw new Error('empty trace');
      await new Promise((r) => setTimeout(r, 300));
    }
    return times.sort((a, b) => a - b)[1];
  });
  await page.evaluate(() => document.querySelector('#bench-floor').remove());
  return ms;
}

/** Drags the canvas left and right by `moves` mouse moves, one per animation frame. Returns the
 *  median time of one move until its pixels are on the canvas (handler, draw, deferred canvas
 *  work), the median draw time the page reports, and the median interval between frames. */
async function pan(page, moves) {
  return page.evaluate(async (moves) => {
    const c = document.querySelector('#graph-canvas');
    const ctx = c.getContext('2d');
    const box = c.getBoundingClientRect();
    const at = (type, x, y) => new MouseEvent(type, {
      clientX: box.left + x, clientY: box.top + y, bubbles: true, cancelable: true, buttons: 1,
    });
    const frame = () => new Promise((r) => requestAnimationFrame(r));
    let x = box.width / 2;
    const y = box.height / 2;
    c.dispatchEvent(at('mousedown', x, y));
    const handler = [];
    const draw = [];
    const interval = [];
    let last = await frame();
    for (let i = 0; i < moves; i += 1) {
      x += (Math.floor(i / 15) % 2 === 0 ? 1 : -1) * 9;
      const t = performance.now();
      c.dispatchEvent(at('mousemove', x, y));
      // Reading one pixel makes the canvas execute the drawing it deferred: the frame's full cost.
      ctx.getImageData(0, 0, 1, 1);
      handler.push(performance.now() - t);
      draw.push(window.__memtrace_graph_stats.frame_ms);
      const now = await frame();
      interval.push(now - last);
      last = now;
    }
    c.dispatchEvent(at('mouseup', x, y));
    const median = (v) => { const s = [...v].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
    const s = window.__memtrace_graph_stats;
    return {
      handler: median(handler), draw: median(draw), interval: median(interval),
      drawn: s.drawn_nodes, nodes: s.nodes, raster: s.raster,
    };
  }, moves);
}

async function wholeTrace(page, minNodes) {
  await page.keyboard.press('w');
  await page.waitForFunction((n) => (window.__memtrace_graph_stats?.nodes || 0) >= n
    && document.querySelector('.graph-count')?.textContent.includes('whole trace'), minNodes, { timeout: 120000 });
  await page.waitForTimeout(300);
}

const f1 = (x) => x.toFixed(1);
const f2 = (x) => x.toFixed(2);

(async () => {
  const wasm = fs.readdirSync(dist).filter((f) => f.endsWith('.wasm'));
  if (wasm.length !== 1) throw new Error(`expected one .wasm in ${dist}, found ${wasm.join(', ') || 'none'}`);
  const raw = fs.readFileSync(path.join(dist, wasm[0]));
  const gz = zlib.gzipSync(raw, { level: 9 }).length;

  const browser = await launch();
  try {
    const rows = [];
    const { page, problems } = await openPage(browser, { init: FIRST_PAINT });
    page.on('crash', () => problems.push('the page crashed'));
    await page.waitForFunction(() => window.__bench_first_paint, null, { timeout: 60000 });
    const demoPaint = await page.evaluate(() => window.__bench_first_paint);

    // Baseline pan: the small trace, whole and fitted.
    await dropAndPaint(page, smallPath);
    await wholeTrace(page, 100);
    const small = await pan(page, PAN_MOVES);

    // The baseline: the same file (under another name) parsed in one go, as before the page
    // parsed in steps; closed again before the measured drop.
    const wholePath = path.join(path.dirname(bigPath), `whole-${path.basename(bigPath)}`);
    fs.copyFileSync(bigPath, wholePath);
    await page.evaluate(() => { window.__memtrace_load_whole = true; });
    const whole = await dropAndPaint(page, wholePath);
    await page.evaluate(() => { window.__memtrace_load_whole = false; });
    await page.click(`button[aria-label="close ${path.basename(wholePath)}"]`);
    fs.unlinkSync(wholePath);
    const floor = await readAndParse(page, bigPath);
    const big = await dropAndPaint(page, bigPath);
    await wholeTrace(page, 10000);
    const fitted = await pan(page, PAN_MOVES);
    await page.evaluate(() => { window.__memtrace_overview_off = true; });
    const before = await pan(page, PAN_MOVES);
    await page.evaluate(() => { window.__memtrace_overview_off = false; });
    await page.focus('#graph-canvas');
    for (let i = 0; i < 6; i += 1) await page.keyboard.press('+');
    await page.waitForTimeout(200);
    const zoomed = await pan(page, PAN_MOVES);
    await page.context().close();
    // The same fitted pan on a high-density screen (4× the pixels), with and without the cache.
    const hi = await openPage(browser, { deviceScaleFactor: 2 });
    hi.page.on('crash', () => problems.push('the page crashed'));
    await hi.page.waitForSelector('#summary', { timeout: 60000 });
    await dropAndPaint(hi.page, bigPath);
    await wholeTrace(hi.page, 10000);
    const fitted2 = await pan(hi.page, PAN_MOVES);
    await hi.page.evaluate(() => { window.__memtrace_overview_off = true; });
    const before2 = await pan(hi.page, PAN_MOVES);
    problems.push(...hi.problems);
    if (problems.length) throw new Error(problems.join('\n'));

    const ratio = (a, b) => (b > 0 ? `${f2(a / b)}×` : '–');
    const panRow = (what, p, goal) => rows.push([what, `${f2(p.handler)} ms (draw ${f2(p.draw)}, frame interval ${f1(p.interval)})`,
      goal, `${f2(small.handler)} ms (1k-node trace, ${small.nodes} nodes)`, ratio(p.handler, small.handler)]);
    const mb = f1(fs.statSync(bigPath).size / 1e6);
    const longest = (tasks) => Math.max(0, ...tasks.map((t) => t.ms));
    rows.push([`longest main-thread task, drop to first ${big.view} view (${mb} MB trace)`,
      `${f1(longest(big.tasks))} ms (${big.tasks.length} tasks over 50 ms)`, '≤ 50 ms',
      `${f1(longest(whole.tasks))} ms (parsed in one go)`, ratio(longest(big.tasks), longest(whole.tasks))]);
    rows.push(['  longest task in the 2 s after it', `${f1(longest(big.after))} ms (${big.after.length} tasks over 50 ms)`,
      '–', `${f1(longest(whole.after))} ms (parsed in one go)`, '–']);
    rows.push([`first ${big.view} view after drop, ${(fitted.nodes / 1000).toFixed(1)}k-node trace (${mb} MB)`,
      `${f2(big.ms / 1000)} s`, '≤ 1.0 s',
      `${f2(whole.ms / 1000)} s (parsed in one go); ${f2(demoPaint / 1000)} s (demo, page load)`, ratio(big.ms, whole.ms)]);
    rows.push([`  the same, against reading and parsing the file (${mb} MB)`, `${f2(big.ms / 1000)} s`, '≤ 1.6×',
      `${f2(floor / 1000)} s (File.arrayBuffer + JSON.parse in the page, median of 3)`, ratio(big.ms, floor)]);
    panRow(`pan, whole trace fitted (${fitted.nodes} nodes laid, ${fitted.drawn} on screen)`, fitted, '≤ 16 ms');
    panRow('  same pan, overview cache off (before)', before, '≤ 16 ms');
    panRow(`pan, zoomed in (${zoomed.drawn} nodes on screen)`, zoomed, '≤ 16 ms');
    panRow('pan, whole trace fitted, 2× pixel ratio', fitted2, '≤ 16 ms');
    panRow('  same pan, overview cache off (before)', before2, '≤ 16 ms');
    rows.push(['gzipped wasm (dist/)', `${f2(gz / 1e6)} MB`, '≤ 1.5 MB', `${f2(raw.length / 1e6)} MB raw`,
      `${f2(gz / raw.length)}×`]);
    console.log('| measure | value | goal | baseline (same run) | ratio |');
    console.log('|---|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.join(' | ')} |`);
    console.log(`\npan: median of ${PAN_MOVES} drag moves, one per animation frame; value = time of one move until`
      + ' its pixels are on the canvas (handler, draw, deferred canvas work); draw = the draw time the page reports; frame interval = median time between'
      + ' animation frames (headless Chromium, software rendering).');
    for (const [how, run] of [['parsed in one go (the baseline)', whole], ['parsed in steps', big]]) {
      console.log(`\nwhere the time goes, drop to first ${run.view} view of the ${mb} MB trace, ${how} (the page's`
        + ' `memtrace:*` performance measures, ms since the drop; nested stages overlap their parent; "steps:" stages'
        + ' include the page\'s own work between steps; long tasks are the main thread\'s tasks over 50 ms):\n');
      console.log('| stage | starts at | takes |');
      console.log('|---|---|---|');
      // A stage seen many times (a panel drawn again at each progress step) is one row: its
      // count, total and longest; the others are rows of their own, in time order.
      const byName = new Map();
      for (const st of run.stages) byName.set(st.name, [...(byName.get(st.name) || []), st]);
      const events = [...run.tasks.map((t) => [t.start, 'long task', `${f1(t.ms)} ms`])];
      for (const [name, list] of byName) {
        if (list.length === 1) events.push([list[0].start, name, `${f1(list[0].ms)} ms`]);
        else {
          const ms = list.map((st) => st.ms);
          events.push([list[0].start, `${name} (×${list.length})`,
            `${f1(ms.reduce((a, b) => a + b, 0))} ms in all, longest ${f1(Math.max(...ms))} ms`]);
        }
      }
      events.sort((a, b) => a[0] - b[0]);
      for (const [start, name, ms] of events) console.log(`| ${name} | ${f1(start)} ms | ${ms} |`);
      console.log(`| first ${run.view} view on screen | ${f1(run.ms)} ms | |`);
    }
  } finally {
    await browser.close();
  }
})().catch((e) => { console.error(e.stack || e.message); process.exit(1); });
