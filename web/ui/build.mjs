// build.mjs — builds the Web-UI into ../dist (embedded in the cairn binary
// by package web): one JavaScript bundle and one stylesheet, each named by
// a hash of its content, and index.html that loads them; and the same for
// the terminal's page (terminal.html, assets/terminal-*). The output depends
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

// bundle builds one entry point into a script and a stylesheet named
// <prefix>-<hash of the content>.js/.css, and answers their files and the
// names the page's template refers to.
async function bundle(prefix, entry) {
  const result = await esbuild.build({
    absWorkingDir: here,
    entryPoints: { [prefix]: entry },
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
  const names = {};
  for (const f of result.outputFiles) {
    const ext = f.path.endsWith('.css') ? 'css' : 'js';
    const hash = createHash('sha256').update(f.contents).digest('hex').slice(0, 12);
    names[ext] = `${prefix}-${hash}.${ext}`;
    files.set(names[ext], f.contents);
  }
  return names;
}

const files = new Map(); // name in dist/assets -> contents

// The Web-UI: index.html, served by the API's listener at every page path
// (so its assets are named from the root).
const app = await bundle('app', 'src/main.jsx');
const index = readFileSync(join(here, 'src', 'index.html'), 'utf8')
  .replace('%APP_JS%', `/assets/${app.js}`)
  .replace('%APP_CSS%', `/assets/${app.css}`);

// The terminal's page (xterm.js), served by the app proxy under each
// session's terminal path: its assets are named relative to the page.
const terminal = await bundle('terminal', 'src/terminal/main.js');
const terminalPage = readFileSync(join(here, 'src', 'terminal', 'index.html'), 'utf8')
  .replace('%TERMINAL_JS%', `assets/${terminal.js}`)
  .replace('%TERMINAL_CSS%', `assets/${terminal.css}`);

rmSync(join(outDir, 'assets'), { recursive: true, force: true });
mkdirSync(join(outDir, 'assets'), { recursive: true });
for (const [name, contents] of files) writeFileSync(join(outDir, 'assets', name), contents);
writeFileSync(join(outDir, 'index.html'), index);
writeFileSync(join(outDir, 'terminal.html'), terminalPage);

if (check) {
  const committed = join(here, '..', 'dist');
  const list = (d) => [
    'index.html',
    'terminal.html',
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
  console.log(`built ${[...files.keys()].join(', ')}, index.html and terminal.html into ${outDir}`);
}
