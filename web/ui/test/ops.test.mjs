// The operator's pages (superadmins): Information (GET /v1/system),
// Maintenance (online read model rebuilds, audit chain verification) and
// the Audit page's verified head and CSV export; a domain admin gets the
// 403 page on each without the page asking the API.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { admin, api, base, launch, login, newPage, newUser, tokenOf, unique } from './lib.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

const menuLink = (page, name) => page.getByRole('navigation', { name: 'menu' }).getByRole('link', { name, exact: true });

test('Information shows the sqlite store, the bus, the leases and every read model with its position', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await menuLink(page, 'Information').click();
  await page.getByRole('heading', { name: 'Information', level: 1 }).waitFor();
  const sys = await api('GET', '/v1/system');
  const backend = page.locator('dl.facts').filter({ hasText: 'Backend' });
  await backend.getByText('sqlite', { exact: true }).waitFor();
  await backend.getByText(sys.store.dsn, { exact: true }).waitFor();
  await page.locator('dl.facts').filter({ hasText: 'Go version' }).getByText(sys.go_version, { exact: true }).waitFor();
  await page.locator('dl.facts').filter({ hasText: 'Mode' }).getByText('embedded', { exact: true }).waitFor();
  // Every read model has a row with its position (no later than the head read after it).
  const rows = page.locator('table.read-models tbody tr');
  await rows.first().waitFor();
  assert.equal(await rows.count(), sys.read_models.length);
  const after = await api('GET', '/v1/system');
  for (const m of sys.read_models) {
    const cells = await rows.filter({ has: page.getByRole('cell', { name: m.name, exact: true }) }).locator('td').allTextContents();
    const pos = Number(cells[1]);
    assert.ok(pos > 0 && pos <= after.store.head, `${m.name} position ${cells[1]} (head ${after.store.head})`);
  }
  // Every lease this process holds, and since when.
  for (const l of sys.leases) await page.locator('table.leases').getByRole('cell', { name: l.name, exact: true }).waitFor();
  // Refresh reads the system again.
  const reread = page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/system' && r.status() === 200);
  await page.getByRole('button', { name: 'Refresh' }).click();
  await reread;
  assert.deepEqual(problems, []);
  await page.close();
});

test('Information highlights a lagging read model and shows markup from the server as text', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  const evil = '<img src=x onerror=alert(1)>';
  // The server's answer, with one read model behind and markup where strings are.
  await page.route('**/v1/system*', async (route) => {
    const res = await route.fetch();
    const sys = await res.json();
    sys.read_models[0].lag = 7;
    sys.read_models[0].paused = evil;
    sys.store.dsn = evil;
    await route.fulfill({ response: res, json: sys });
  });
  await login(page, admin.email, admin.password);
  await page.goto(base + '/admin/information');
  const lagging = page.locator('table.read-models tr.lagging');
  await lagging.getByRole('cell', { name: '7 behind' }).waitFor();
  assert.equal(await page.locator('table.read-models tr.lagging').count(), 1);
  await lagging.getByText(`paused: ${evil}`).waitFor();
  await page.locator('dl.facts').getByText(evil, { exact: true }).waitFor();
  assert.equal(await page.locator('main img').count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test('Maintenance: a rebuild of sessions runs to done in the page, and the Sessions page still lists the sessions', async () => {
  const problems = [];
  const name = unique('rebuilt');
  const s = await api('POST', '/v1/sessions', { image: 'localhost/cairn/base:latest', name, resources: { cpu: 1, mem: '64m' }, command: "sh -c 'sleep 30'" });
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await menuLink(page, 'Maintenance').click();
  await page.getByLabel('Read model', { exact: true }).selectOption('sessions');
  const started = page.waitForResponse((r) => r.url().endsWith('/v1/maintenance/rebuilds') && r.request().method() === 'POST');
  await page.getByRole('button', { name: 'Rebuild', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Rebuild sessions' });
  await dialog.getByRole('button', { name: 'Rebuild' }).click();
  const job = await (await started).json();
  assert.equal(job.read_model, 'sessions');
  const row = page.locator(`table.rebuilds tr[data-id="${job.id}"]`);
  await row.getByText('done', { exact: true }).waitFor();
  const done = await api('GET', `/v1/maintenance/rebuilds/${job.id}`);
  assert.equal(done.state, 'done');
  assert.ok(done.events > 0, 'the rebuild replayed events');
  // The progress bar is full and the figures are the job's.
  assert.equal(await row.getByRole('progressbar').getAttribute('value'), await row.getByRole('progressbar').getAttribute('max'));
  await row.getByText(`${done.events.toLocaleString('en-US')} / ${done.total.toLocaleString('en-US')} events (100%)`).waitFor();
  await menuLink(page, 'Sessions').click();
  await page.getByText(name).first().waitFor();
  await api('DELETE', `/v1/sessions/${s.id}`).catch(() => {});
  assert.deepEqual(problems, []);
  await page.close();
});

test('Maintenance: a refused rebuild shows the API\'s problem in the dialog', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  const detail = 'maintenance.rebuild: a rebuild of <b>usage</b> is running';
  await page.route('**/v1/maintenance/rebuilds', (route) =>
    route.request().method() === 'POST'
      ? route.fulfill({ status: 409, contentType: 'application/problem+json', body: JSON.stringify({ title: 'Conflict', status: 409, detail }) })
      : route.continue(),
  );
  await login(page, admin.email, admin.password);
  await page.goto(base + '/admin/maintenance');
  await page.getByLabel('Read model', { exact: true }).selectOption('usage');
  await page.getByRole('button', { name: 'Rebuild', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Rebuild usage' });
  await dialog.getByRole('button', { name: 'Rebuild' }).click();
  await dialog.getByRole('alert').filter({ hasText: '409 Conflict' }).getByText(detail, { exact: true }).waitFor();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });
  assert.deepEqual(problems, []);
  await page.close();
});

test('Maintenance: verifying the audit chain shows a head with records, and the verification is listed', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await menuLink(page, 'Maintenance').click();
  await page.getByRole('heading', { name: 'Verify the audit chain' }).waitFor();
  const started = page.waitForResponse((r) => r.url().endsWith('/v1/audit/verify') && r.request().method() === 'POST');
  await page.getByRole('button', { name: 'Verify the audit chain' }).click();
  const job = await (await started).json();
  await page.getByText('The audit chain is intact up to this head.').waitFor();
  const head = page.locator('dl.verified-head');
  const records = Number(await head.locator('dt:text-is("Records verified") + dd').textContent());
  assert.ok(records > 0, `records verified: ${records}`);
  const j = await api('GET', `/v1/audit/verify/${job.id}`);
  assert.equal(j.state, 'done');
  assert.equal(records, j.head.records);
  await head.getByText(j.head.hash, { exact: true }).waitFor();
  await page.locator('table.verifications').getByRole('cell', { name: `${j.head.records} / ${j.total}` }).first().waitFor();
  assert.deepEqual(problems, []);
  await page.close();
});

test('Audit: the last verified head with Verify now, and a CSV export of the filtered trail', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await menuLink(page, 'Audit').click();
  const region = page.getByRole('region', { name: 'last verified head' });
  const started = page.waitForResponse((r) => r.url().endsWith('/v1/audit/verify') && r.request().method() === 'POST');
  // The page polls the job until it ends.
  const ended = page.waitForResponse(async (r) => r.url().includes('/v1/audit/verify/') && (await r.json()).state !== 'running');
  ended.catch(() => {});
  await region.getByRole('button', { name: 'Verify now' }).click();
  const job = await (await started).json();
  if (job.state === 'running') await ended;
  const j = await api('GET', `/v1/audit/verify/${job.id}`);
  assert.equal(j.state, 'done');
  assert.ok(j.head.records > 0);
  await region.locator('.head-seq').filter({ hasText: String(j.head.seq) }).waitFor();
  await region.getByText(j.head.hash, { exact: true }).waitFor();
  await region.getByText(`${j.head.records} records`).waitFor();
  // CSV of the same filter as the table.
  await page.getByLabel('Action').fill('POST /v1/auth/session');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.getByRole('cell', { name: 'POST /v1/auth/session' }).first().waitFor();
  const link = page.getByRole('link', { name: 'Export CSV' });
  assert.match(await link.getAttribute('href'), /format=csv.*action=POST/);
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  assert.equal(download.suggestedFilename(), 'audit.csv');
  const csv = await readFile(await download.path(), 'utf8');
  const lines = csv.trim().split('\n');
  assert.ok(lines[0].startsWith('seq,'), `first line: ${lines[0]}`);
  const action = lines[0].split(',').indexOf('action');
  assert.ok(lines.length > 1 && lines.slice(1).every((l) => l.split(',')[action] === 'POST /v1/auth/session'), csv);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a domain admin gets the 403 page on Information, Maintenance and Audit, and the page asks the API nothing', async () => {
  const problems = [];
  const other = await newUser({ role: 'admin' });
  const page = await newPage(browser, problems);
  const asked = [];
  page.on('request', (r) => {
    if (/\/v1\/(system|maintenance|audit)/.test(r.url())) asked.push(r.url());
  });
  await login(page, other.email, other.password);
  for (const label of ['Information', 'Maintenance', 'Audit']) assert.equal(await menuLink(page, label).count(), 0, `${label} in the menu`);
  for (const [path, title] of [
    ['/admin/information', 'Information'],
    ['/admin/maintenance', 'Maintenance'],
    ['/admin/audit', 'Audit'],
  ]) {
    await page.goto(base + path);
    await page.getByRole('heading', { name: title, level: 1 }).waitFor();
    await page.getByRole('alert').filter({ hasText: '403' }).waitFor();
    assert.equal(await page.locator('table').count(), 0);
  }
  assert.deepEqual(asked, []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('Information, Maintenance and Audit fit a phone screen without scrolling sideways', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  await page.setViewportSize({ width: 390, height: 844 });
  await login(page, admin.email, admin.password);
  await api('POST', '/v1/maintenance/rebuilds', { read_model: 'agents' });
  await api('POST', '/v1/audit/verify');
  for (const path of ['/admin/information', '/admin/maintenance', '/admin/audit']) {
    await page.goto(base + path);
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    await page.locator('table').first().waitFor();
    await page.waitForLoadState('networkidle');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `${path} scrolls sideways by ${overflow}px at 390px`);
  }
  // The Rebuild button and its confirmation work from the keyboard.
  await page.goto(base + '/admin/maintenance');
  await page.getByLabel('Read model', { exact: true }).focus();
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await page.getByRole('dialog', { name: 'Rebuild sessions' }).waitFor();
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'detached' });
  assert.deepEqual(problems, []);
  await page.close();
});

test('Audit for auditors: an auditor reads every domain\'s trail, a domain auditor its domain\'s with the others elided in its export; neither sees the admin pages', async () => {
  // A user of another domain makes a request: its record is not default's.
  const domain = unique('aud');
  await api('POST', '/v1/domains', { name: domain });
  const stranger = await newUser({ domain });
  await api('GET', '/v1/sessions', undefined, await tokenOf(stranger));
  // exportOf polls the caller's NDJSON export until it reaches seq (the
  // records are sealed a moment after the requests) and answers its lines.
  const exportOf = async (token, seq) => {
    for (;;) {
      const res = await fetch(base + '/v1/audit/stream', { headers: { Authorization: `Bearer ${token}` } });
      assert.equal(res.status, 200);
      const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l));
      if (seq ? lines.length >= seq : lines.some((l) => l.user_id === stranger.id)) return lines;
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  let strangerSeq = 0;
  for (const role of ['auditor', 'domain-auditor']) {
    const problems = [];
    const user = await newUser({ role });
    const token = await tokenOf(user);
    const lines = await exportOf(token, strangerSeq && strangerSeq + 1);
    lines.forEach((l, i) => assert.equal(l.seq, i + 1, `line ${i + 1} of the ${role}'s export`));
    if (role === 'auditor') {
      strangerSeq = lines.find((l) => l.user_id === stranger.id).seq;
    } else {
      // The other domain's record is there by its place in the chain only.
      assert.deepEqual(lines[strangerSeq - 1], { seq: strangerSeq, prev_hash: lines[strangerSeq - 2].hash, hash: lines[strangerSeq].prev_hash, elided: true });
      assert.ok(!lines.some((l) => l.user_id === stranger.id), "the domain auditor's export shows another domain's record");
    }
    const page = await newPage(browser, problems);
    await login(page, user.email, user.password);
    for (const label of ['Users', 'Resources', 'Maintenance', 'Information', 'Configurations']) {
      assert.equal(await menuLink(page, label).count(), 0, `${label} in the ${role}'s menu`);
    }
    await menuLink(page, 'Audit').click();
    await page.getByRole('heading', { name: 'Audit', level: 1 }).waitFor();
    await page.getByRole('region', { name: 'last verified head' }).waitFor();
    assert.equal(await page.locator('p.domain-scope').filter({ hasText: 'elided' }).count(), role === 'domain-auditor' ? 1 : 0);
    // The superadmin (of default) made this user: a record both read.
    await page.getByLabel('Action').fill('POST /v1/users');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('cell', { name: 'POST /v1/users' }).first().waitFor();
    // The stranger's record: the auditor's only.
    await page.getByLabel('Action').fill('');
    await page.getByLabel('Actor').fill(stranger.id);
    await page.getByRole('button', { name: 'Filter' }).click();
    if (role === 'auditor') await page.getByRole('cell', { name: 'GET /v1/sessions' }).first().waitFor();
    else await page.getByText('No record matches.').waitFor();
    // Auditors write nothing.
    const res = await fetch(base + '/v1/domains', {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: unique('no') }),
    });
    assert.equal(res.status, 403);
    assert.deepEqual(problems, []);
    await page.close();
  }
});

test('Users: a superadmin may make auditors and domain auditors, a domain admin only domain auditors', async () => {
  const dadmin = await newUser({ role: 'admin' });
  for (const [who, roles] of [
    [admin, ['domain-auditor', 'auditor']],
    [dadmin, ['domain-auditor']],
  ]) {
    const problems = [];
    const page = await newPage(browser, problems);
    await login(page, who.email, who.password);
    await page.goto(base + '/admin/users');
    await page.getByRole('button', { name: 'New user' }).click();
    const offered = await page.getByLabel('Role').locator('option').evaluateAll((os) => os.map((o) => o.value));
    assert.deepEqual(offered.filter((r) => r.includes('auditor')), roles);
    assert.deepEqual(problems, []);
    await page.close();
  }
});
