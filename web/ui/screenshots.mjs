// screenshots.mjs — a PNG of every page of the Web-UI at 1280×800, into
// docs/screenshots (make screenshots runs it against a `cairn dev` it
// starts, with some sessions and users made first).
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { admin, api, base, launch, login, newPage } from './test/lib.mjs';

const out = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'screenshots');
mkdirSync(out, { recursive: true });

// Something to show: sessions (one running, one waiting for more than the
// cluster has), a few users, a policy.
await api('POST', '/v1/sessions', { name: 'train-resnet', image: 'localhost/cairn/base:latest', resources: { cpu: 1, mem: '64m' }, command: "sh -c 'echo epoch 1: loss 0.93; echo epoch 2: loss 0.71; sleep 3600'" });
await api('POST', '/v1/sessions', { name: 'too-big', image: 'localhost/cairn/base:latest', resources: { cpu: 64, mem: '1g' }, command: 'sleep 60' }).catch(() => {});
for (const [email, role] of [['ada@example.com', 'user'], ['grace@example.com', 'admin'], ['alan@example.com', 'monitor']]) {
  await api('POST', '/v1/users', { email, password: 'a long password', full_name: email.split('@')[0], domain: 'default', role }).catch(() => {});
}
await api('POST', '/v1/keypair-policies', { name: 'students', total_resource_slots: { cpu: '8', mem: '16g' }, default_for_unspecified: 'unlimited', max_concurrent_sessions: 2 }).catch(() => {});

// A folder with a few files.
const folder = await api('POST', '/v1/vfolders', { name: 'datasets' }).catch(() => null);
if (folder) {
  for (const [path, text] of [['README.md', '# datasets\n'], ['imagenet-sample.csv', 'id,label\n1,cat\n2,dog\n']]) {
    await fetch(`${base}/v1/vfolders/${folder.id}/files/content?${new URLSearchParams({ path })}`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${admin.token}`, 'Content-Type': 'application/octet-stream' },
      body: text,
    });
  }
  await api('POST', `/v1/vfolders/${folder.id}/files/mkdir`, { path: 'checkpoints' }).catch(() => {});
}

const browser = await launch();
const problems = [];
const page = await newPage(browser, problems);
await page.goto(base + '/');
await page.getByLabel('E-mail address', { exact: true }).waitFor();
await page.screenshot({ path: join(out, 'login.png') });
await login(page, admin.email, admin.password);
// The session page of a running session (its apps, its logs), else of the newest.
const list = await api('GET', '/v1/sessions?limit=1');
const run = (await api('GET', '/v1/sessions?status=RUNNING&limit=1')).items[0] || list.items[0];
const shots = [
  ['start', '/'],
  ['dashboard', '/dashboard'],
  ['sessions', '/sessions'],
  ['session-create', '/sessions?new=1'],
  ['session', `/sessions/${run.id}`],
  ['data', '/data'],
  ...(folder ? [['folder', `/data/${folder.id}`]] : []),
  ['environments', '/environments'],
  ['agents', '/agents'],
  ['users', '/admin/users'],
  ['resources', '/admin/resources'],
  ['policies', '/admin/policies'],
  ['audit', '/admin/audit'],
  ['statistics', '/statistics'],
  ['scheduler', '/admin/scheduler'],
  ['configurations', '/admin/settings'],
  ['maintenance', '/admin/maintenance'],
  ['information', '/admin/information'],
];
for (const [name, path] of shots) {
  await page.goto(base + path);
  await page.getByRole('heading', { level: 1 }).first().waitFor();
  // A running session's page follows its log (a request that stays
  // open): wait for the log it shows instead of a quiet network.
  if (name === 'session' && run.status === 'RUNNING') await page.locator('pre.logs').filter({ hasText: 'epoch 2' }).waitFor();
  else await page.waitForLoadState('networkidle');
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(out, `${name}.png`) });
  console.log(`docs/screenshots/${name}.png`);
}
// The terminal of the running session, opened from its page through the
// app proxy.
if (run.status === 'RUNNING') {
  await page.goto(`${base}/sessions/${run.id}`);
  const button = page.getByRole('button', { name: 'Terminal', exact: true });
  const [tab] = await Promise.all([page.context().waitForEvent('page'), button.click()]);
  await tab.setViewportSize({ width: 1280, height: 800 });
  await tab.locator('#status').filter({ hasText: 'connected' }).waitFor();
  await tab.locator('.xterm-rows > div').filter({ hasText: /#\s*$/ }).first().waitFor(); // the shell's prompt
  await tab.locator('.xterm-helper-textarea').focus();
  await tab.keyboard.type('echo $((6*7)); ls /');
  await tab.keyboard.press('Enter');
  await tab.locator('.xterm-rows > div').filter({ hasText: /^\s*42\s*$/ }).waitFor();
  await tab.screenshot({ path: join(out, 'terminal.png') });
  console.log('docs/screenshots/terminal.png');
}
await browser.close();
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
