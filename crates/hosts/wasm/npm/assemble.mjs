// Puts wasm-pack's web build and Node build of the module into one npm package folder:
//   web/   the ESM build (`init()` fetches memtrace_wasm_bg.wasm beside it): browsers and bundlers
//   node/  the CommonJS build (wasm read from disk, no init) and index.mjs, its ESM face, which also
//          exports an `init` / `initSync` that do nothing, so the same code runs in both
// and writes package.json with the `exports` map that picks one by condition (node → node/,
// anything else → web/).
//   node assemble.mjs WEB_BUILD NODE_BUILD OUT
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

const [web, nodeBuild, out] = process.argv.slice(2).map((p) => resolve(p));
if (!out) throw new Error('usage: node assemble.mjs WEB_BUILD NODE_BUILD OUT');
const crate = resolve(import.meta.dirname, '..');
const built = JSON.parse(readFileSync(join(web, 'package.json'), 'utf8'));
const stem = 'memtrace_wasm';
for (const [dir, want] of [[web, `${stem}.js`], [nodeBuild, `${stem}.js`], [web, `${stem}_bg.wasm`]]) {
  if (!existsSync(join(dir, want))) throw new Error(`${dir} has no ${want}: is it a wasm-pack build?`);
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const keep = (name) => !['package.json', 'README.md', 'LICENSE', '.gitignore'].includes(name.split('/').pop());
cpSync(web, join(out, 'web'), { recursive: true, filter: (p) => keep(p) });
cpSync(nodeBuild, join(out, 'node'), { recursive: true, filter: (p) => keep(p) });
// Each half says how Node must read its .js files, whatever a bundler assumes of the root.
writeFileSync(join(out, 'web', 'package.json'), '{ "type": "module" }\n');
writeFileSync(join(out, 'node', 'package.json'), `{ "type": "commonjs", "main": "${stem}.js" }\n`);

// The ESM face of the Node build: every export by name, plus init/initSync for code written
// for the web build.
const names = Object.keys(createRequire(import.meta.url)(join(out, 'node', `${stem}.js`)))
  .filter((n) => /^[A-Za-z_$][\w$]*$/.test(n) && !n.startsWith('__') && n !== 'default' && n !== 'init' && n !== 'initSync')
  .sort();
writeFileSync(join(out, 'node', 'index.mjs'), [
  '// The Node build as an ES module (written by crates/hosts/wasm/npm/assemble.mjs).',
  "import { createRequire } from 'node:module';",
  `const m = createRequire(import.meta.url)('./${stem}.js');`,
  '/** Nothing to do under Node (the wasm is read from disk on import); kept so code written for the web build runs. */',
  'export default async function init() { return m; }',
  'export function initSync() { return m; }',
  ...names.map((n) => `export const ${n} = m.${n};`),
  '',
].join('\n'));
writeFileSync(join(out, 'node', 'index.d.mts'), [
  `export * from './${stem}.js';`,
  'export default function init(...args: unknown[]): Promise<unknown>;',
  'export function initSync(...args: unknown[]): unknown;',
  '',
].join('\n'));

// The repository's address: MEMTRACE_REPOSITORY_URL, else the clone's `origin` remote; none → no field.
let repository = process.env.MEMTRACE_REPOSITORY_URL || '';
if (!repository) {
  try {
    repository = execFileSync('git', ['-C', crate, 'remote', 'get-url', 'origin'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch { /* no remote: a local clone */ }
}
if (!repository) console.warn('assemble: no origin remote and no MEMTRACE_REPOSITORY_URL: package.json has no repository field');

const pkg = {
  name: built.name,
  version: built.version,
  description: built.description,
  license: 'MIT',
  ...(repository ? { repository: { type: 'git', url: repository, directory: 'crates/hosts/wasm' } } : {}),
  keywords: built.keywords,
  engines: { node: '>=20' },
  files: ['web/', 'node/', 'README.md', 'LICENSE'],
  main: './node/memtrace_wasm.js',
  module: './web/memtrace_wasm.js',
  browser: './web/memtrace_wasm.js',
  types: './web/memtrace_wasm.d.ts',
  exports: {
    '.': {
      node: {
        import: { types: './node/index.d.mts', default: './node/index.mjs' },
        require: { types: './node/memtrace_wasm.d.ts', default: './node/memtrace_wasm.js' },
      },
      types: './web/memtrace_wasm.d.ts',
      default: './web/memtrace_wasm.js',
    },
    './web': { types: './web/memtrace_wasm.d.ts', default: './web/memtrace_wasm.js' },
    './memtrace_wasm_bg.wasm': './web/memtrace_wasm_bg.wasm',
    './package.json': './package.json',
  },
  sideEffects: (built.sideEffects || []).map((p) => `./web/${p.replace(/^\.\//, '')}`),
};
writeFileSync(join(out, 'package.json'), JSON.stringify(pkg, null, 2) + '\n');
writeFileSync(join(out, 'README.md'), readFileSync(join(crate, 'README.md')));  // the crate's files may be symlinks
writeFileSync(join(out, 'LICENSE'), readFileSync(join(crate, 'LICENSE')));
console.log(`assembled ${pkg.name}@${pkg.version} in ${out} (${names.length} exports; ${dirname(out)})`);
