// The JavaScript module's benchmark in headless Chromium, run by `scripts/bench --browser` (not a
// test: node --test skips it). Prints one Markdown table: loading a large trace through the
// module's web build (`Trace.load(bytes)`) against `JSON.parse` of the same bytes, side by side in
// one page, medians of alternating repetitions; `Trace.loadAsync` of the same bytes (total time and
// the longest main-thread task); then the package sizes of the web and Node builds.
//   node tests/e2e/bench_module.js URL WEB_PKG NODE_PKG BIG.json
// URL serves the example page at vanilla/index.html with WEB_PKG as its pkg/.
const [url, webPkg, nodePkg, bigPath] = process.argv.slice(2);
process.env.MEMTRACE_E2E_URL = url; // read by ./browser when it loads
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');
const { launch } = require('./browser');

// 15 pairs: on a shared two-core machine one run's times swing by half either way, and the
// median of 7 moved the ratio by ±0.1 between runs of the same build.
const REPS = Number(process.env.MEMTRACE_BENCH_REPS || 15);

/** In the page: reads the file from the input, then alternately loads it through the module and
 *  parses it with JSON.parse; returns every time (ms) and what each saw. */
async function loadVsParse(page, file, reps) {
  await page.evaluate(() => {
    const input = Object.assign(document.createElement('input'), { type: 'file', id: 'bench-input', hidden: true });
    document.body.append(input);
  });
  await page.setInputFiles('#bench-input', file);
  return page.evaluate(async (reps) => {
    const mod = await import('./pkg/memtrace_wasm.js');
    await mod.default();
    const bytes = new Uint8Array(await document.querySelector('#bench-input').files[0].arrayBuffer());
    const load = [];
    const used = [];
    const parse = [];
    let vars = 0;
    let nodes = 0;
    for (let i = 0; i < reps; i += 1) {
      // Alternate which goes first so neither always runs after the other's garbage, and collect
      // that garbage before each run (JSON.parse leaves ~1 GB of it).
      for (const which of i % 2 ? ['parse', 'load'] : ['load', 'parse']) {
        globalThis.gc();
        if (which === 'load') {
          const t0 = performance.now();
          const trace = mod.Trace.load(bytes);
          load.push(performance.now() - t0);
          // The first query finds the failed questions (summary counts them).
          vars = trace.summary().variables;
          used.push(performance.now() - t0);
          trace.free();
        } else {
          const t0 = performance.now();
          const json = JSON.parse(new TextDecoder().decode(bytes));
          parse.push(performance.now() - t0);
          nodes = json.data.nodes.length;
        }
      }
    }
    return { load, used, parse, vars, nodes, size: bytes.length };
  }, reps);
}

/** In the page, after loadVsParse: `Trace.loadAsync` of the same file (default 16 ms slices),
 *  its total time and the longest gap between ticks of a 0 ms interval timer (the longest
 *  main-thread task while it loads). */
async function loadAsyncRun(page) {
  return page.evaluate(async () => {
    const mod = await import('./pkg/memtrace_wasm.js');
    const bytes = new Uint8Array(await document.querySelector('#bench-input').files[0].arrayBuffer());
    globalThis.gc();
    let last = performance.now();
    let longest = 0;
    const tick = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 0);
    const t0 = performance.now();
    const trace = await mod.Trace.loadAsync(bytes);
    const total = performance.now() - t0;
    clearInterval(tick);
    longest = Math.max(longest, performance.now() - last);
    const vars = trace.summary().variables;
    trace.free();
    return { total, longest, vars };
  });
}

const median = (v) => { const s = [...v].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const f2 = (x) => x.toFixed(2);
const mb = (n) => `${f2(n / 1e6)} MB`;
const kb = (n) => `${(n / 1e3).toFixed(1)} kB`;
const gz = (buf) => zlib.gzipSync(buf, { level: 9 }).length;

/** Sizes of one wasm-pack output: [file, raw, gzipped] for its .wasm, .js and .d.ts. */
function sizes(dir) {
  const files = fs.readdirSync(dir).filter((f) => /\.(wasm|js|d\.ts)$/.test(f) && !f.endsWith('.wasm.d.ts'));
  return files.sort().map((f) => {
    const buf = fs.readFileSync(path.join(dir, f));
    return [f, buf.length, gz(buf)];
  });
}

(async () => {
  const browser = await launch(['--js-flags=--expose-gc']);
  const rows = [];
  try {
    const page = await browser.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('crash', () => problems.push('the page crashed'));
    await page.goto(new URL('vanilla/index.html', url).href);
    await page.waitForFunction(() => document.readyState === 'complete');
    const r = await loadVsParse(page, bigPath, REPS);
    if (problems.length) throw new Error(problems.join('\n'));
    if (r.vars !== r.nodes) throw new Error(`the module read ${r.vars} variables, JSON.parse ${r.nodes} nodes`);
    const load = median(r.load);
    const parse = median(r.parse);
    rows.push([`load ${mb(r.size)} trace (${r.nodes} variables): \`Trace.load(bytes)\`, web build`,
      `${f2(load / 1000)} s`, '≤ 1.0× JSON.parse',
      `${f2(parse / 1000)} s (\`JSON.parse(new TextDecoder().decode(bytes))\`)`, `${f2(load / parse)}×`]);
    const used = median(r.used);
    rows.push(['`Trace.load(bytes)` then its first query (`summary()`: the failed questions found then)',
      `${f2(used / 1000)} s`, '–', `${f2(parse / 1000)} s (\`JSON.parse\`)`, `${f2(used / parse)}×`]);
    const a = await loadAsyncRun(page);
    if (a.vars !== r.nodes) throw new Error(`loadAsync read ${a.vars} variables, JSON.parse ${r.nodes} nodes`);
    rows.push(['`Trace.loadAsync(bytes)` (16 ms slices): total; longest main-thread task',
      `${f2(a.total / 1000)} s; ${Math.round(a.longest)} ms`, 'longest task ≤ 100 ms',
      `${f2(used / 1000)} s in one task (\`Trace.load\` + first query)`, `${f2(a.total / used)}× the time`]);
    for (const [build, dir] of [['web', webPkg], ['Node', nodePkg]]) {
      for (const [file, raw, z] of sizes(dir)) {
        const big = file.endsWith('.wasm');
        rows.push([`package (${build}): ${file}`, big ? mb(z) : kb(z), big ? '≤ 1.5 MB gzipped' : '–',
          `${big ? mb(raw) : kb(raw)} raw`, `${f2(z / raw)}× gzipped`]);
      }
    }
    console.log('| measure | value | goal | baseline (same run) | ratio |');
    console.log('|---|---|---|---|---|');
    for (const row of rows) console.log(`| ${row.join(' | ')} |`);
    console.log(`\nload: median of ${REPS} repetitions each, alternating, in one page (headless Chromium);`
      + ` all times (ms): Trace.load ${r.load.map(Math.round).join(' ')}, with its first query ${r.used.map(Math.round).join(' ')}, JSON.parse ${r.parse.map(Math.round).join(' ')}.`
      + ' Package sizes: value gzipped (level 9), baseline raw.');
  } finally {
    await browser.close();
  }
})().catch((e) => { console.error(e.stack || e.message); process.exit(1); });
