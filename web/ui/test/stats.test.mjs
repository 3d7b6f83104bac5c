// Statistics and Scheduler in the browser: a running session's usage shows
// for its user (totals, charts, CSV export), a user sees only their own
// usage; a session that cannot be placed shows in the scheduler's queue with
// its failed checks in words; a plain user gets the 403 page; both pages
// fit a phone's width.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, api, base, launch, login, newPage, newUser, unique } from './lib.mjs';

let browser;
const sessions = []; // [id, token]: terminated after the tests
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
  for (const [id, token] of sessions) await api('DELETE', `/v1/sessions/${id}`, undefined, token).catch(() => {});
});

/** tokenOf logs a user in through the API and answers its token. */
async function tokenOf(user) {
  const res = await fetch(`${base}/v1/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: user.email, password: user.password }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()).token;
}

/** newSession creates a session through the API (as the token's user) and answers its id, name and log position. */
async function newSession(resources, token = admin.token) {
  const name = unique('s');
  const res = await api('POST', '/v1/sessions', { image: 'localhost/cairn/base:latest', name, resources, command: "sh -c 'sleep 600'" }, token);
  sessions.push([res.id, token]);
  return { id: res.id, name, position: res.position };
}

/** running opens the session's page (which follows it) and waits until it shows RUNNING. */
async function running(page, id) {
  await page.goto(`${base}/sessions/${id}`);
  await page.locator('.page-head .status').filter({ hasText: 'RUNNING' }).waitFor({ timeout: 90_000 });
}

/** totalsRow is the totals table's row of a subject. */
const totalsRow = (page, label) => page.locator('table.totals tbody tr').filter({ has: page.getByRole('rowheader', { name: label, exact: true }) });

test('Statistics: a running session shows as its user’s usage in the totals, the charts and the CSV; a user sees only their own', async () => {
  const problems = [];
  const user = await newUser({ project: 'default' });
  await api('POST', '/v1/keypairs', { user_id: user.id, resource_policy: 'default', main: true });
  const token = await tokenOf(user);
  const s = await newSession({ cpu: 1, mem: '64m' }, token);
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await running(page, s.id);
  // The kernel's allocation is in the log before RUNNING; a write after it
  // gives a position the read models (usage included) are then waited for,
  // so the page's first read has the usage.
  const w = await api('POST', '/v1/domains', { name: unique('dom') });
  await api('GET', `/v1/usage?wait_for_position=${w.position}`);

  await page.getByRole('navigation', { name: 'menu' }).getByRole('link', { name: 'Statistics' }).click();
  // The default range is the last 30 days, grouped by user.
  const from = await page.getByLabel('From (UTC day)').inputValue();
  const to = await page.getByLabel('To (UTC day)').inputValue();
  assert.equal(to, new Date().toISOString().slice(0, 10));
  assert.equal((Date.parse(to) - Date.parse(from)) / 86_400_000, 29);
  const row = totalsRow(page, user.email);
  await row.waitFor();
  const cpu = Number(await row.locator('td.cpu-hours').getAttribute('title'));
  assert.ok(cpu > 0, `cpu hours ${cpu}`);
  assert.equal(await row.locator('td').first().textContent(), '1', 'one session started');
  // Five charts, each with a series (its legend entry) for the user.
  assert.equal(await page.locator('figure.chart canvas').count(), 5);
  for (const f of await page.locator('figure.chart').all()) {
    await f.locator('.u-legend .u-label').filter({ hasText: user.email }).waitFor();
  }
  // The API's rows agree (a day the API has no row for is 0 in the charts: only today has use).
  const usage = await api('GET', `/v1/usage?group_by=user&from=${from}&to=${to}&user=${user.id}`);
  assert.ok(usage.items.length >= 1 && usage.items.every((r) => r.day >= from && r.day <= to));
  assert.equal(usage.items.at(-1).day, to);

  // The CSV export: same filter, the cookie authenticates it.
  const href = await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href');
  assert.match(href, /format=csv/);
  assert.match(href, new RegExp(`from=${from}`));
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()]);
  const csv = await (await download.createReadStream()).toArray().then((b) => Buffer.concat(b).toString('utf8'));
  assert.ok(csv.startsWith('day,'), csv.slice(0, 80));
  assert.ok(csv.split('\n').some((l) => l.includes(user.email)), 'the user has a line');

  // Grouped by domain: the default domain has a row.
  await page.getByLabel('Group by').selectOption('domain');
  await page.getByRole('button', { name: 'Show' }).click();
  await totalsRow(page, 'default').waitFor();
  assert.equal(await page.getByRole('columnheader', { name: 'Domain' }).count(), 1);

  // An empty range says so.
  await page.getByLabel('From (UTC day)').fill('2001-01-01');
  await page.getByLabel('To (UTC day)').fill('2001-01-31');
  await page.getByRole('button', { name: 'Show' }).click();
  await page.getByText('No usage in this range.').waitFor();
  // A range the API refuses shows its words.
  await page.getByLabel('From (UTC day)').fill('2001-01-01');
  await page.getByLabel('To (UTC day)').fill('2010-01-31');
  await page.getByRole('button', { name: 'Show' }).click();
  await page.getByRole('alert').filter({ hasText: '400' }).waitFor();

  // The user sees their own usage only.
  await page.getByRole('button', { name: 'Log out' }).click();
  await login(page, user.email, user.password);
  await page.goto(base + '/statistics');
  await totalsRow(page, user.email).waitFor();
  assert.equal(await page.locator('table.totals tbody tr').count(), 1);
  assert.equal(await totalsRow(page, admin.email).count(), 0);
  assert.deepEqual(problems, []);
  await page.context().close();
});

test('Scheduler: a session that cannot be placed shows in the queue with its failed checks, live; a plain user gets the 403 page', async () => {
  const problems = [];
  const s = await newSession({ cpu: 64, mem: '64m' });
  // The read models have the session before the page reads the queue.
  await api('GET', `/v1/scheduler/queue?wait_for_position=${s.position}`);
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await page.getByRole('navigation', { name: 'menu' }).getByRole('link', { name: 'Scheduler' }).click();
  const row = page.locator('ol.queue > li').filter({ has: page.getByRole('link', { name: s.name, exact: true }) });
  await row.waitFor();
  assert.equal(await row.locator('.placeable').textContent(), 'not placeable now');
  // Its owner by e-mail address, with the keypair.
  await row.locator('dd').filter({ hasText: admin.email }).waitFor();
  const checks = await row.locator('.checks li').allTextContents();
  assert.ok(checks.length > 0 && checks.some((m) => /cpu/i.test(m)), `checks: ${checks}`);
  const queue = await api('GET', '/v1/scheduler/queue');
  const item = queue.items.find((i) => i.session_id === s.id);
  assert.equal(await row.locator('.position').textContent(), String(item.position));
  assert.deepEqual(checks, item.checks.map((c) => c.message));
  // A session that starts waiting while the page is open shows without a reload.
  const later = await newSession({ cpu: 64, mem: '64m' });
  await page.locator('ol.queue > li').filter({ has: page.getByRole('link', { name: later.name, exact: true }) }).waitFor();
  // Filtering by another resource group leaves it out.
  await page.getByLabel('Resource group').fill(unique('rg'));
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.getByText(/No session is waiting in resource group/).waitFor();
  await page.getByLabel('Resource group').fill('default');
  await page.getByRole('button', { name: 'Filter' }).click();
  await row.waitFor();
  // The session's link opens its page.
  await row.getByRole('link', { name: s.name, exact: true }).click();
  await page.waitForURL(`${base}/sessions/${s.id}`);
  await page.getByRole('heading', { level: 1, name: s.name }).waitFor();

  await page.getByRole('button', { name: 'Log out' }).click();
  const user = await newUser();
  await login(page, user.email, user.password);
  assert.equal(await page.getByRole('navigation', { name: 'menu' }).getByRole('link', { name: 'Scheduler' }).count(), 0);
  const asked = [];
  page.on('request', (r) => r.url().includes('/v1/scheduler/') && asked.push(r.url()));
  await page.goto(base + '/admin/scheduler');
  await page.getByRole('alert').filter({ hasText: '403' }).filter({ hasText: 'for administrators' }).waitFor();
  assert.equal(await page.locator('ol.queue').count(), 0);
  assert.deepEqual(asked, [], 'the page does not ask the API for the queue');
  // The API refuses the queue too.
  await assert.rejects(api('GET', '/v1/scheduler/queue', undefined, await tokenOf(user)), /403/);
  assert.deepEqual(problems, []);
  await page.context().close();
});

// The first test's usage and the second's waiting session are on the pages by now.
test('Statistics and Scheduler fit a phone screen without scrolling sideways', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  await page.setViewportSize({ width: 390, height: 844 });
  await login(page, admin.email, admin.password);
  for (const [path, ready] of [
    ['/statistics', 'figure.chart canvas'],
    ['/admin/scheduler', 'ol.queue'],
  ]) {
    await page.goto(base + path);
    await page.locator(ready).first().waitFor();
    await page.waitForLoadState('networkidle');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `${path} scrolls sideways by ${overflow}px at 390px`);
  }
  // By keyboard: the filters and the Show button are reachable and work.
  await page.goto(base + '/statistics');
  await page.locator('figure.chart canvas').first().waitFor();
  await page.getByLabel('Group by').focus();
  await page.keyboard.press('ArrowDown'); // project
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await page.getByRole('columnheader', { name: 'Project' }).waitFor();
  assert.deepEqual(problems, []);
  await page.context().close();
});
