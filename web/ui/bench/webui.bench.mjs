// webui.bench.mjs — the Web-UI's benchmark in the browser, run by
// `cairn-bench webui` (cmd/cairn-bench/internal/webuibench) against a Cairn
// it seeded: Debian's Chromium through playwright-core, logged in once as
// the measured user (CAIRN_EMAIL, CAIRN_PASSWORD; CAIRN_TOKEN is the same
// user's bearer token, for the creates of the SSE phase).
//
// Page loads: BENCH_LOADS full navigations (after BENCH_WARMUP unmeasured
// ones) to each of /sessions and /data, cache allowed. A script that runs
// before the page's own (addInitScript) watches the DOM with a
// MutationObserver and notes when the first row of the page's list table
// (`table.list tbody tr`) is in the document, and when the next animation
// frame after it runs (the frame that paints it), which resolves the
// promise the load waits on; both are
// performance.now(), whose origin is the navigation's start. The
// resource timings say where the time went: the document, the app's
// script and the last API answer (their responseEnd).
// Each load also counts the page's API requests (/v1/..., the EventSource
// included) and the read-model queries the server ran for them (its
// cairn_readmodel_queries_total, read from /metrics before and after the
// load, once every request of the load has been answered).
//
// SSE delivery: with /sessions open, BENCH_CHANGES sessions are created one
// at a time by a fetch in the page itself (Bearer token, no cookie): from
// the create's answer to the MutationObserver seeing its row, one clock.
// The baseline is the same on a bare EventSource of /v1/events in a page
// of the same origin (no app): from the create's answer to its change
// event.
//
// BENCH_PROFILE=DIR also writes, after the measured loads of each page, the
// CPU profile of one more load (unmeasured) to DIR/<label>-<page>.cpuprofile
// and a Chromium trace of another to DIR/<label>-<page>.trace.json (Chrome
// DevTools opens both): where the page's main thread spends a load.
//
// It prints one JSON object on its last line of stdout; progress goes to
// stderr.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const env = (name, fallback) => {
  const v = process.env[name];
  if (v === undefined || v === '') {
    if (fallback === undefined) throw new Error(`${name} must be set (cairn-bench webui sets it)`);
    return fallback;
  }
  return v;
};
const base = env('CAIRN_URL');
const email = env('CAIRN_EMAIL');
const password = env('CAIRN_PASSWORD');
const token = env('CAIRN_TOKEN');
const loads = Number(env('BENCH_LOADS', '50'));
const warmup = Number(env('BENCH_WARMUP', '5'));
const changes = Number(env('BENCH_CHANGES', '200'));
const image = env('BENCH_IMAGE');
const label = env('BENCH_LABEL', '');
const profileDir = env('BENCH_PROFILE', '-');
const log = (...a) => console.error(`[webui bench${label ? ' ' + label : ''}]`, ...a);

// Pages measured: path and the selector of their list's rows.
const pages = [
  ['/sessions', 'table.list tbody tr'],
  ['/data', 'table.list tbody tr'],
];

// watchRows runs in every new document before the app: it records when
// the first row of the list is in the DOM and the frame after it.
function watchRows() {
  let painted;
  window.__bench = { domAt: 0, frameAt: 0, painted: new Promise((resolve) => (painted = resolve)) };
  const check = () => {
    if (window.__bench.domAt || !document.querySelector('table.list tbody tr')) return false;
    window.__bench.domAt = performance.now();
    requestAnimationFrame(() => {
      window.__bench.frameAt = performance.now();
      painted();
    });
    return true;
  };
  const obs = new MutationObserver(() => check() && obs.disconnect());
  obs.observe(document, { childList: true, subtree: true });
}

async function queriesSoFar() {
  const res = await fetch(base + '/metrics');
  if (!res.ok) throw new Error(`GET /metrics: ${res.status}`);
  const text = await res.text();
  const m = /^cairn_readmodel_queries_total (\S+)$/m.exec(text);
  if (!m) throw new Error('GET /metrics: no cairn_readmodel_queries_total');
  return Number(m[1]);
}

// load navigates to path and waits until its rows are painted and every
// API request of the load is answered (an EventSource, if the page opens
// one: its headers).
async function load(page, path, selector) {
  const started = [];
  const pending = new Set();
  let eventsOpen = null;
  let eventsAsked = false;
  const eventsAnswered = new Promise((resolve) => (eventsOpen = resolve));
  const onRequest = (r) => {
    const u = new URL(r.url());
    if (u.origin !== new URL(base).origin || !u.pathname.startsWith('/v1/')) return;
    started.push(`${r.method()} ${u.pathname}`);
    if (u.pathname === '/v1/events') eventsAsked = true;
    else pending.add(r);
  };
  const onDone = (r) => pending.delete(r);
  const onResponse = (r) => new URL(r.url()).pathname === '/v1/events' && eventsOpen();
  page.on('request', onRequest);
  page.on('requestfinished', onDone);
  page.on('requestfailed', onDone);
  page.on('response', onResponse);
  const before = await queriesSoFar();
  try {
    await page.goto(base + path, { waitUntil: 'commit' });
    // Waiting through the page's own promise, not Playwright's
    // waitForSelector: that one loads Playwright's selector engine (a
    // script of ~330 kB) into the page, whose main thread then spends
    // ~40 ms on it in the middle of the load being measured (seen in a
    // Chromium trace), which no user's browser does.
    await Promise.race([
      page.evaluate(() => window.__bench.painted),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`${path}: no row of ${selector} painted in 30 s`)), 30000)),
    ]);
    const t = await page.evaluate(() => {
      // Where the time went: the document, the app's script and the
      // last API answer (each responseEnd, from navigation start).
      const nav = performance.getEntriesByType('navigation')[0];
      const res = performance.getEntriesByType('resource');
      const end = (f) => Math.max(0, ...res.filter(f).map((r) => r.responseEnd));
      return {
        ...window.__bench,
        html: nav ? nav.responseEnd : 0,
        script: end((r) => /\/assets\/.*\.js$/.test(new URL(r.name).pathname)),
        api: end((r) => {
          const p = new URL(r.name).pathname;
          return p.startsWith('/v1/') && p !== '/v1/events';
        }),
      };
    });
    if (eventsAsked) await eventsAnswered;
    while (pending.size) await new Promise((r) => setTimeout(r, 5));
    const after = await queriesSoFar();
    return { dom: t.domAt, painted: t.frameAt, html: t.html, script: t.script, api: t.api, requests: started.sort(), queries: after - before };
  } finally {
    page.off('request', onRequest);
    page.off('requestfinished', onDone);
    page.off('requestfailed', onDone);
    page.off('response', onResponse);
  }
}

// create makes a session from the page (one clock with the observer) and
// answers its id and when its answer arrived.
async function createFromPage(page, name) {
  return page.evaluate(
    async ({ name, token, image }) => {
      const res = await fetch('/v1/sessions', {
        method: 'POST',
        credentials: 'omit',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name, image, resources: { cpu: '0.1', mem: '64m' } }),
      });
      const at = performance.now();
      if (res.status !== 201) throw new Error(`POST /v1/sessions: ${res.status} ${await res.text()}`);
      const body = await res.json();
      return { id: body.id, at };
    },
    { name, token, image },
  );
}

async function ssePage(page, n) {
  await page.goto(base + '/sessions');
  await page.waitForSelector('table.list tbody tr');
  const out = [];
  for (let i = 0; i < n; i++) {
    const name = `sse-${label}-${i}-${Date.now()}`;
    // The observer is armed before the create, so a row that comes
    // before the answer still counts (as 0).
    await page.evaluate((name) => {
      window.__seen = new Promise((resolve) => {
        const found = () => [...document.querySelectorAll('table.list tbody tr a')].some((a) => a.textContent === name);
        if (found()) return resolve(performance.now());
        const obs = new MutationObserver(() => {
          if (found()) {
            obs.disconnect();
            resolve(performance.now());
          }
        });
        obs.observe(document.body, { childList: true, subtree: true, characterData: true });
      });
    }, name);
    const created = await createFromPage(page, name);
    const seenAt = await page.evaluate(() => window.__seen);
    out.push(Math.max(0, seenAt - created.at));
  }
  return out;
}

async function sseBare(page, n) {
  // A page of the same origin without the app: the login cookie goes
  // with the EventSource.
  await page.goto(base + '/healthz');
  await page.evaluate(() => {
    window.__changes = new Map();
    window.__waiters = new Map();
    const es = new EventSource('/v1/events', { withCredentials: true });
    window.__es = es;
    es.addEventListener('session', (e) => {
      const c = JSON.parse(e.data);
      if (window.__changes.has(c.id)) return;
      const at = performance.now();
      window.__changes.set(c.id, at);
      const w = window.__waiters.get(c.id);
      if (w) w(at);
    });
    return new Promise((resolve, reject) => {
      es.addEventListener('open', resolve, { once: true });
      es.addEventListener('error', reject, { once: true });
    });
  });
  const out = [];
  for (let i = 0; i < n; i++) {
    const created = await createFromPage(page, `sse-bare-${label}-${i}-${Date.now()}`);
    const seenAt = await page.evaluate(
      (id) => window.__changes.get(id) ?? new Promise((resolve) => window.__waiters.set(id, resolve)),
      created.id,
    );
    out.push(Math.max(0, seenAt - created.at));
  }
  await page.evaluate(() => window.__es.close());
  return out;
}

const browser = await chromium.launch({
  executablePath: process.env.CAIRN_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const result = { pages: {}, sse: {} };
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addInitScript(watchRows);
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.goto(base + '/');
  await page.getByLabel('E-mail address', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('button', { name: 'Log out' }).waitFor();
  log('logged in as', email);

  for (const [path, selector] of pages) {
    for (let i = 0; i < warmup; i++) await load(page, path, selector);
    const samples = [];
    for (let i = 0; i < loads; i++) samples.push(await load(page, path, selector));
    result.pages[path] = samples;
    if (profileDir !== '-') {
      const cdp = await context.newCDPSession(page);
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
      await cdp.send('Profiler.start');
      await load(page, path, selector);
      const { profile } = await cdp.send('Profiler.stop');
      await cdp.detach();
      const trace = join(profileDir, `${label || 'webui'}${path.replaceAll('/', '-')}.trace.json`);
      await browser.startTracing(page, { path: trace, categories: ['devtools.timeline', 'v8.execute', 'blink', 'loading', 'netlog', 'toplevel'] });
      await load(page, path, selector);
      await browser.stopTracing();
      const file = join(profileDir, `${label || 'webui'}${path.replaceAll('/', '-')}.cpuprofile`);
      writeFileSync(file, JSON.stringify(profile));
      log(path, 'CPU profile and trace of two more loads in', file, 'and', trace);
    }
    log(path, `${loads} loads, median painted ${samples.map((s) => s.painted).sort((a, b) => a - b)[Math.floor(loads / 2)].toFixed(1)} ms`);
  }
  if (changes > 0) {
    result.sse.page = await ssePage(page, changes);
    log(`SSE to the Sessions page: ${changes} changes`);
    result.sse.bare = await sseBare(page, changes);
    log(`SSE to a bare EventSource: ${changes} changes`);
  }
  if (problems.length) throw new Error(problems.join('\n'));
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
