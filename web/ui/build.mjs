// build.mjs — builds the Web-UI into ../dist (embedded in the cairn binary
// by package web): one JavaScript bundle and one stylesheet, each named by
// a hash of its content, and index.html that loads them. The output depends
// only on the sources and the pinned esbuild, so it is reproducible:
// `node build.mjs --check` builds into a temporary directory and fails if
// ../dist differs (make test runs it).
import * as esbuild from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const check = process.argv.includes('--check');
const outDir = check ? mkdtempSync(join(tmpdir(), 'cairn-webui-')) : join(here, '..', 'dist');

const result = await esbuild.build({
  absWorkingDir: here,
  entryPoints: { app: 'src/main.jsx' },
  bundle: true,
  format: 'esm',
  target: ['chrome120', 'firefox120', 'safari17'],
  minify: true,
  sourcemap: false,
  legalComments: 'eof',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  loader: { '.css': 'css' },
  write: false,
  outdir: 'out',
  logLevel: 'warning',
});

const files = new Map(); // name in dist/assets -> contents
const names = {};
for (const f of result.outputFiles) {
  const ext = f.path.endsWith('.css') ? 'css' : 'js';
  const hash = createHash('sha256').update(f.contents).digest('hex').slice(0, 12);
  const name = `app-${hash}.${ext}`;
  names[ext] = name;
  files.set(name, f.contents);
}
const index = readFileSync(join(here, 'src', 'index.html'), 'utf8')
  .replace('%APP_JS%', `/assets/${names.js}`)
  .replace('%APP_CSS%', `/assets/${names.css}`);

rmSync(join(outDir, 'assets'), { recursive: true, force: true });
mkdirSync(join(outDir, 'assets'), { recursive: true });
for (const [name, contents] of files) writeFileSync(join(outDir, 'assets', name), contents);
writeFileSync(join(outDir, 'index.html'), index);

if (check) {
  const committed = join(here, '..', 'dist');
  const list = (d) => [
    'index.html',
    ...readdirSync(join(d, 'assets')).map((n) => `assets/${n}`),
  ].sort();
  const want = list(outDir), have = list(committed);
  const problems = [];
  if (want.join() !== have.join()) problems.push(`files differ: built ${want.join(', ')}; committed ${have.join(', ')}`);
  else for (const n of want) {
    if (!readFileSync(join(outDir, n)).equals(readFileSync(join(committed, n)))) problems.push(`${n} differs`);
  }
  rmSync(outDir, { recursive: true, force: true });
  if (problems.length) {
    console.error(`web/dist is not the build of web/ui/src: ${problems.join('; ')}. Run \`make webui\` and commit web/dist.`);
    process.exit(1);
  }
  console.log('web/dist is the build of web/ui/src');
} else {
  console.log(`built ${Object.values(names).join(', ')} and index.html into ${outDir}`);
}
