// The npm package as a user gets it: `npm pack` of the assembled package (scripts/npm-pack), the
// tarball installed into a scratch project with nothing else in it, then `require("memtrace-wasm")`
// and `import init, { Trace } from "memtrace-wasm"` in separate Node processes, each loading a
// LoCoMo fixture (plain and gzip-compressed) and attributing its failures.
//   scripts/npm-pack --dev target/npm && MEMTRACE_NPM_PKG=target/npm/package node --test tests/node/package.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

const root = resolve(import.meta.dirname, '../..');
const pkgDir = resolve(root, process.env.MEMTRACE_NPM_PKG || 'target/npm/package');
const fixture = join(root, 'tests/fixtures/smartcomment/locomo/locomo_locomo-2.json');
assert.ok(existsSync(join(pkgDir, 'package.json')),
  `no assembled npm package at ${pkgDir}: run scripts/npm-pack --dev target/npm first`);

const scratch = mkdtempSync(join(tmpdir(), 'memtrace-npm-'));
test.after(() => rmSync(scratch, { recursive: true, force: true }));

// What each entry point prints: the fixture's failures, and per failure its info-flow verdict.
const body = (mod) => `
const fs = require('node:fs'), zlib = require('node:zlib');
const bytes = fs.readFileSync(${JSON.stringify(fixture)});
const run = (b) => { const t = ${mod}.Trace.load(b, { name: 'locomo-2' });
  const out = { failures: t.summary().failures, verdicts: t.attribute().map((o) => [o.case_id, o.error_type ?? null, o.op_id ?? null]) };
  t.free(); return out; };
const plain = run(bytes), gz = run(zlib.gzipSync(bytes));
process.stdout.write(JSON.stringify({ plain, gzSame: JSON.stringify(plain) === JSON.stringify(gz), version: ${mod}.version() }));`;

test('npm pack → npm install of the tarball → require and import both load and attribute a trace', () => {
  const packed = execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: pkgDir, encoding: 'utf8' });
  const [info] = JSON.parse(packed);
  const files = info.files.map((f) => f.path).sort();
  for (const f of ['package.json', 'README.md', 'LICENSE', 'web/memtrace_wasm.js', 'web/memtrace_wasm_bg.wasm',
    'web/memtrace_wasm.d.ts', 'node/memtrace_wasm.js', 'node/memtrace_wasm_bg.wasm', 'node/index.mjs']) {
    assert.ok(files.includes(f), `the tarball has ${f}: ${files.join(', ')}`);
  }
  const tgz = join(scratch, info.filename);
  const project = join(scratch, 'project');
  execFileSync('mkdir', ['-p', project]);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'scratch', private: true }));
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', tgz], { cwd: project, stdio: 'inherit' });

  const manifest = JSON.parse(readFileSync(join(project, 'node_modules/memtrace-wasm/package.json'), 'utf8'));
  assert.equal(manifest.license, 'MIT');
  assert.equal(manifest.engines.node, '>=20');
  assert.ok(manifest.types && manifest.exports['.'].node.import && manifest.exports['.'].node.require && manifest.exports['.'].default);

  writeFileSync(join(project, 'use.cjs'), `const m = require('memtrace-wasm');\n${body('m')}`);
  writeFileSync(join(project, 'use.mjs'),
    `import init, { Trace, version } from 'memtrace-wasm';\nimport { createRequire } from 'node:module';\n` +
    `const require = createRequire(import.meta.url);\nawait init();\nconst m = { Trace, version };\n${body('m')}`);
  const cjs = JSON.parse(execFileSync('node', ['use.cjs'], { cwd: project, encoding: 'utf8' }));
  const esm = JSON.parse(execFileSync('node', ['use.mjs'], { cwd: project, encoding: 'utf8' }));
  assert.deepEqual(esm, cjs, 'import and require give the same verdicts');
  assert.ok(cjs.plain.failures > 0, 'the fixture has failed questions');
  assert.equal(cjs.plain.verdicts.length, cjs.plain.failures);
  assert.ok(cjs.plain.verdicts.every(([, type, op]) => type && op), `every failure attributed: ${JSON.stringify(cjs.plain.verdicts)}`);
  assert.ok(cjs.gzSame, 'the gzip-compressed trace gives the same verdicts');
  assert.equal(cjs.version, manifest.version);
  console.log(`package: ${info.filename} (${info.size} bytes packed, ${files.length} files); ` +
    `require and import: ${cjs.plain.failures} failures attributed`);
  assert.ok(readdirSync(scratch).includes(info.filename));
});
