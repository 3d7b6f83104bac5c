// The pages over the registry, the agents, the resource groups and the
// policies: what they show, what a superadmin changes there, and that each
// fits a phone's width.
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

test('Environments: register an image with its apps, edit it, forget it', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await page.getByRole('navigation', { name: 'menu' }).getByRole('link', { name: 'Environments' }).click();
  await page.getByRole('cell', { name: 'localhost/cairn/base:latest' }).waitFor();
  const ref = `localhost/test/${unique('img')}:1`;
  await page.getByRole('button', { name: 'Register image' }).click();
  let dialog = page.getByRole('dialog', { name: 'Register image' });
  await dialog.getByLabel('Reference', { exact: true }).fill(ref);
  await dialog.getByLabel('Apps', { exact: true }).fill('jupyter:http:8888');
  await dialog.getByLabel('Minimum per kernel', { exact: true }).fill('cpu=1, mem=128m');
  await dialog.getByRole('button', { name: 'Save' }).click();
  const row = page.getByRole('row').filter({ hasText: ref });
  await row.getByRole('cell', { name: 'jupyter (http 8888)' }).waitFor();
  // A bad port is refused with the field named.
  await row.getByRole('button', { name: 'Edit' }).click();
  dialog = page.getByRole('dialog', { name: `Edit ${ref}` });
  await dialog.getByLabel('Apps', { exact: true }).fill('jupyter:http:8888, tty:http:99999');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.getByRole('alert').filter({ hasText: 'field: service_ports' }).waitFor();
  await dialog.getByLabel('Apps', { exact: true }).fill('jupyter:http:8888, tty:http:7681');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await row.getByRole('cell', { name: 'jupyter (http 8888), tty (http 7681)' }).waitFor();
  await row.getByRole('button', { name: 'Forget' }).click();
  await page.getByRole('dialog', { name: 'Forget image' }).getByRole('button', { name: 'Forget' }).click();
  await page.getByRole('row').filter({ hasText: ref }).waitFor({ state: 'detached' });
  assert.deepEqual(problems, []);
  await page.close();
});

test('Agent Summary shows the local agent with its capacity, use and free resources', async () => {
  const problems = [];
  const user = await newUser();
  const page = await newPage(browser, problems);
  await login(page, user.email, user.password);
  await page.getByRole('navigation', { name: 'menu' }).getByRole('link', { name: 'Agent Summary' }).click();
  const agents = await api('GET', '/v1/agents');
  assert.ok(agents.items.length >= 1);
  const a = agents.items[0];
  const card = page.locator('article.agent').filter({ hasText: a.id });
  await card.getByRole('cell', { name: 'cpu', exact: true }).waitFor();
  await card.getByRole('cell', { name: 'mem', exact: true }).waitFor();
  assert.ok((await card.getByRole('meter').count()) >= 2);
  assert.deepEqual(problems, []);
  await page.close();
});

test('Resources: a superadmin grants a domain access to a resource group and revokes it', async () => {
  const problems = [];
  const domainName = unique('dom');
  await api('POST', '/v1/domains', { name: domainName });
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await page.getByRole('navigation', { name: 'menu' }).getByRole('link', { name: 'Resources' }).click();
  const card = page.locator('article.agent').filter({ has: page.getByRole('heading', { name: 'default' }) });
  await card.getByRole('button', { name: 'Grant access' }).click();
  const dialog = page.getByRole('dialog', { name: 'Grant access to default' });
  await dialog.getByLabel('Grantee', { exact: true }).fill(domainName);
  await dialog.getByRole('button', { name: 'Grant' }).click();
  const grant = card.getByRole('listitem').filter({ hasText: domainName });
  await grant.waitFor();
  await grant.getByRole('button', { name: 'Revoke' }).click();
  await grant.waitFor({ state: 'detached' });
  assert.deepEqual(problems, []);
  await page.close();
});

test('Resource Policy: a superadmin creates a policy and edits it; bad input names the field', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await page.getByRole('navigation', { name: 'menu' }).getByRole('link', { name: 'Resource Policy' }).click();
  await page.getByRole('button', { name: 'New policy' }).click();
  const name = unique('pol');
  let dialog = page.getByRole('dialog', { name: 'New policy' });
  await dialog.getByLabel('Name', { exact: true }).fill(name);
  await dialog.getByLabel('Total resources', { exact: true }).fill('cpu=x');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.getByRole('alert').filter({ hasText: 'is not a decimal number' }).waitFor();
  await dialog.getByLabel('Total resources', { exact: true }).fill('cpu=8, mem=16g');
  await dialog.getByLabel('Sessions at once', { exact: true }).fill('3');
  await dialog.getByRole('button', { name: 'Save' }).click();
  const row = page.getByRole('row').filter({ hasText: name });
  await row.getByRole('cell', { name: '3', exact: true }).waitFor();
  await row.getByRole('button', { name: 'Edit' }).click();
  dialog = page.getByRole('dialog', { name: `Edit ${name}` });
  await dialog.getByLabel('Idle timeout (s)', { exact: true }).fill('600');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await row.getByRole('cell', { name: '600 s' }).waitFor();
  assert.deepEqual(problems, []);
  await page.close();
});

test('every page fits a phone screen without scrolling sideways', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  await page.setViewportSize({ width: 390, height: 844 });
  await login(page, admin.email, admin.password);
  for (const path of ['/', '/dashboard', '/sessions', '/sessions?new=1', '/environments', '/agents', '/admin/users', '/admin/resources', '/admin/policies', '/admin/audit']) {
    await page.goto(base + path);
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    await page.waitForLoadState('networkidle');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `${path} scrolls sideways by ${overflow}px at 390px`);
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test('Audit: the superadmin filters the trail and exports it; a domain admin has no Audit page', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await page.getByRole('navigation', { name: 'menu' }).getByRole('link', { name: 'Audit' }).click();
  await page.locator('table.list').waitFor();
  await page.getByLabel('Action').fill('POST /v1/auth/session');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.getByRole('cell', { name: 'POST /v1/auth/session' }).first().waitFor();
  const actions = await page.locator('table.list tbody tr td:nth-child(4)').allTextContents();
  assert.ok(actions.length > 0 && actions.every((a) => a === 'POST /v1/auth/session'), `filtered actions: ${actions}`);
  // The export is the records exactly as stored, one per line, for the same filter.
  const href = await page.getByRole('link', { name: 'Export NDJSON' }).getAttribute('href');
  const body = await page.evaluate(async (u) => (await fetch(u)).text(), href);
  const lines = body.trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(lines.length >= actions.length && lines.every((r) => r.action === 'POST /v1/auth/session' && r.hash));
  await page.getByRole('button', { name: 'Log out' }).click();
  const other = await newUser({ role: 'admin' });
  await login(page, other.email, other.password);
  assert.equal(await page.getByRole('navigation', { name: 'menu' }).getByRole('link', { name: 'Audit' }).count(), 0);
  await page.goto(base + '/admin/audit');
  await page.getByRole('alert').filter({ hasText: '403' }).waitFor();
  assert.deepEqual(problems, []);
  await page.close();
});

test('Dashboard: my sessions, my use at each level of limits, what the cluster has free', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await page.getByRole('navigation', { name: 'menu' }).getByRole('link', { name: 'Dashboard' }).click();
  const mine = await api('GET', '/v1/quotas/mine');
  for (const l of mine.levels) {
    await page.getByRole('cell', { name: { keypair: 'Keypair', user: 'User', project: 'Project', domain: 'Domain' }[l.scope], exact: true }).waitFor();
    await page.getByRole('cell', { name: l.subject, exact: true }).first().waitFor();
  }
  const free = page.locator('table').filter({ has: page.getByRole('columnheader', { name: 'Capacity' }) });
  await free.getByRole('cell', { name: 'cpu', exact: true }).waitFor();
  await page.getByRole('heading', { name: 'Recent sessions' }).waitFor();
  assert.deepEqual(problems, []);
  await page.close();
});
