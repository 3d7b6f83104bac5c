// Sessions in the browser: create one with the dialog, watch it reach
// RUNNING without reloading, read its logs, terminate it; names shown as
// text; another domain sees none of it; an admin creates a user who then
// cannot reach the admin pages.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, api, base, launch, login, newPage, newUser, unique } from './lib.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

test('create a session, see it run without reloading, read its logs, terminate it', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await page.getByRole('navigation', { name: 'menu' }).getByRole('link', { name: 'Sessions' }).click();
  await page.getByRole('button', { name: 'New session' }).click();
  const dialog = page.getByRole('dialog', { name: 'New session' });
  const name = unique('web');
  await dialog.getByLabel('Name', { exact: true }).fill(name);
  await dialog.getByLabel('Memory', { exact: true }).fill('64m');
  await dialog.getByLabel('Command', { exact: true }).fill("sh -c 'echo hello from the browser; sleep 600'");
  await dialog.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('heading', { name }).waitFor();
  const url = page.url();
  // It reaches RUNNING without a reload (the page follows it).
  await page.locator('.page-head .status').filter({ hasText: 'RUNNING' }).waitFor({ timeout: 90_000 });
  assert.equal(page.url(), url);
  // Its logs show what the container printed, as the API has them.
  await page.locator('pre.logs').filter({ hasText: 'hello from the browser' }).waitFor({ timeout: 30_000 });
  const id = url.split('/').pop();
  const shown = await page.locator('pre.logs').textContent();
  const res = await fetch(`${base}/v1/sessions/${id}/logs`, { headers: { Authorization: `Bearer ${admin.token}` } });
  assert.equal(shown, await res.text());
  // Terminate.
  await page.getByRole('button', { name: 'Terminate' }).click();
  await page.locator('.page-head .status').filter({ hasText: 'TERMINATED' }).waitFor({ timeout: 60_000 });
  // The list shows it.
  await page.getByRole('navigation', { name: 'menu' }).getByRole('link', { name: 'Sessions' }).click();
  await page.getByRole('link', { name }).waitFor();
  assert.deepEqual(problems, []);
  await page.close();
});

test('markup in names and errors is shown as text, never run', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  const evil = '<img src=x onerror=alert(1)>';
  // A user whose name is markup, listed on the Users page.
  await api('POST', '/v1/users', { email: `${unique('xss')}@example.com`, password: 'a long password', full_name: evil, domain: 'default', role: 'user' });
  await login(page, admin.email, admin.password);
  await page.goto(base + '/admin/users');
  await page.getByRole('cell', { name: evil }).first().waitFor();
  // A session name that is markup: the API refuses it, the error (which quotes it) is text.
  await page.goto(base + '/sessions?new=1');
  const dialog = page.getByRole('dialog', { name: 'New session' });
  await dialog.getByLabel('Name', { exact: true }).fill(evil);
  await dialog.getByRole('button', { name: 'Create' }).click();
  const alert = dialog.getByRole('alert');
  await alert.filter({ hasText: 'field: name' }).waitFor();
  assert.equal(await page.locator('img[src="x"]').count(), 0, 'no element was made from the markup');
  assert.deepEqual(problems, []);
  await page.close();
});

test("another domain's user sees nothing of the first domain", async () => {
  const problems = [];
  const domainName = unique('dom');
  await api('POST', '/v1/domains', { name: domainName });
  const other = await newUser({ domain: domainName, role: 'admin' });
  // The first domain has sessions (the test above, and this one).
  await api('POST', '/v1/sessions', { image: 'localhost/cairn/base:latest', name: unique('mine'), resources: { cpu: 1, mem: '64m' }, command: "sh -c 'sleep 600'" });
  const page = await newPage(browser, problems);
  await login(page, other.email, other.password);
  await page.goto(base + '/sessions');
  await page.getByText('No sessions.').waitFor();
  await page.goto(base + '/admin/users');
  await page.getByRole('cell', { name: other.email }).first().waitFor();
  assert.equal(await page.getByRole('cell', { name: admin.email }).count(), 0);
  assert.equal(await page.getByRole('cell', { name: 'default', exact: true }).count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test('an admin creates a user, who then logs in and cannot reach the admin pages', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await page.getByRole('navigation', { name: 'menu' }).getByRole('link', { name: 'Users' }).click();
  await page.getByRole('button', { name: 'New user' }).click();
  const dialog = page.getByRole('dialog', { name: 'New user' });
  const email = `${unique('new')}@example.com`;
  await dialog.getByLabel('E-mail address', { exact: true }).fill(email);
  await dialog.getByLabel('Password', { exact: true }).fill('the new password');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('cell', { name: email }).first().waitFor();
  await page.getByRole('button', { name: 'Log out' }).click();
  await login(page, email, 'the new password');
  assert.equal(await page.getByRole('navigation', { name: 'menu' }).getByRole('link', { name: 'Users' }).count(), 0);
  await page.goto(base + '/admin/users');
  await page.getByRole('alert').filter({ hasText: '403' }).waitFor();
  assert.equal(await page.getByRole('cell', { name: admin.email }).count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a session created elsewhere shows in an open Sessions page without a reload', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await page.getByRole('navigation', { name: 'menu' }).getByRole('link', { name: 'Sessions' }).click();
  await page.locator('table.list').waitFor();
  const url = page.url();
  // Made by another client (the API, as another browser would).
  const name = unique('live');
  await api('POST', '/v1/sessions', { image: 'localhost/cairn/base:latest', name, resources: { cpu: 64, mem: '64m' }, command: 'sleep 60' });
  await page.getByRole('link', { name }).waitFor();
  assert.equal(page.url(), url, 'no navigation happened');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a waiting session says why in words, with its queue position and its timeline', async () => {
  const problems = [];
  const name = unique('big');
  const s = await api('POST', '/v1/sessions', { image: 'localhost/cairn/base:latest', name, resources: { cpu: 64, mem: '64m' }, command: 'sleep 60' });
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await page.goto(`${base}/sessions/${s.id}`);
  const why = page.getByRole('status').filter({ hasText: 'Why it is waiting' });
  await why.getByText('more than any agent has').waitFor();
  await why.getByText(/Position \d+ of \d+ in the queue/).waitFor();
  await why.getByText('No estimated start').waitFor();
  const timeline = page.locator('ol.timeline');
  await timeline.getByText('session.requested').waitFor();
  // Terminating it shows in the page live: the status and the timeline move on.
  await page.getByRole('button', { name: 'Terminate' }).click();
  await page.locator('.page-head .status').filter({ hasText: /CANCELLED|TERMINATED/ }).waitFor();
  assert.equal(await why.count(), 0, 'an ended session no longer says why it waits');
  assert.deepEqual(problems, []);
  await page.close();
});

test('logs follow live as the container writes, and end identical to the download', async () => {
  const problems = [];
  const name = unique('logs');
  // Lines over a few seconds on stdout and stderr, markup and UTF-8 included.
  const command = `sh -c 'for i in $(seq 1 40); do echo "line $i <b>é</b>"; echo "err $i" >&2; sleep 0.1; done; echo done'`;
  const s = await api('POST', '/v1/sessions', { image: 'localhost/cairn/base:latest', name, type: 'batch', resources: { cpu: 1, mem: '64m' }, command });
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await page.goto(`${base}/sessions/${s.id}`);
  const logs = page.locator('pre.logs');
  await logs.getByText('line 5 <b>é</b>').waitFor({ timeout: 90_000 });
  await page.getByText('· complete').waitFor({ timeout: 90_000 });
  const shown = await logs.textContent();
  const res = await fetch(`${base}/v1/sessions/${s.id}/logs?download=true`, { headers: { Authorization: `Bearer ${admin.token}` } });
  const downloaded = await res.text();
  assert.ok(downloaded.endsWith('done\n') && downloaded.includes('err 40'), downloaded.slice(-200));
  assert.equal(shown, downloaded, 'the page shows the download byte for byte');
  assert.equal(await page.locator('pre.logs b').count(), 0, 'markup in the log is text');
  assert.deepEqual(problems, []);
  await page.close();
});

test('search finds sessions by the start of their name or by id', async () => {
  const problems = [];
  const prefix = unique('find');
  const a = await api('POST', '/v1/sessions', { image: 'localhost/cairn/base:latest', name: `${prefix}-a`, resources: { cpu: 64, mem: '64m' }, command: 'sleep 60' });
  await api('POST', '/v1/sessions', { image: 'localhost/cairn/base:latest', name: `${prefix}-b`, resources: { cpu: 64, mem: '64m' }, command: 'sleep 60' });
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await page.goto(base + '/sessions');
  const box = page.getByRole('searchbox', { name: 'Search sessions' });
  await box.fill(prefix.toUpperCase());
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  // The unfiltered list shows them too (newest first): wait for the
  // search's answer, the two rows alone.
  await page.waitForFunction(() => document.querySelectorAll('table.list tbody tr').length === 2);
  await page.getByRole('link', { name: `${prefix}-b` }).waitFor();
  await page.getByRole('link', { name: `${prefix}-a` }).waitFor();
  await box.fill(a.id);
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.getByRole('link', { name: `${prefix}-b` }).waitFor({ state: 'detached' });
  assert.equal(await page.locator('table.list tbody tr').count(), 1);
  await box.fill(`${prefix}-zzz`);
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.getByText(`matching “${prefix}-zzz”`).waitFor();
  for (const s of [a]) await api('DELETE', `/v1/sessions/${s.id}`).catch(() => {});
  assert.deepEqual(problems, []);
  await page.close();
});
