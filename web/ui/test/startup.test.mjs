// A session's startup on its page: the phases while it starts, the image
// pull's progress (the API's answer with a pull in progress: no registry
// can be reached here, so the agent never pulls), and an app that is not
// answering yet, whose button is disabled, and a real app whose button is
// enabled once its agent found it ready (busybox httpd, started seconds
// after the container, on a pre-opened port of a real session).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, api, base, launch, login, newPage, unique } from './lib.mjs';

let browser;
const sessions = [];
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
  for (const id of sessions) await api('DELETE', `/v1/sessions/${id}`).catch(() => {});
});

async function newSession(command, extra = {}) {
  const res = await api('POST', '/v1/sessions', {
    image: 'localhost/cairn/base:latest',
    name: unique('startup'),
    resources: { cpu: 0.5, mem: '64m' },
    command,
    ...extra,
  });
  sessions.push(res.id);
  return res.id;
}

async function until(what, f, timeout = 90_000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('a session pulling its image shows its phase and the pull’s progress', async () => {
  const problems = [];
  const id = await newSession("sh -c 'sleep 3600'");
  const page = await newPage(browser, problems);
  // The session as the API answers it, as if its agent were pulling.
  await page.route(
    (u) => u.pathname === `/v1/sessions/${id}`,
    async (route) => {
      const res = await route.fetch();
      const s = await res.json();
      s.status = 'PULLING';
      s.kernels[0].status = 'PULLING';
      s.kernels[0].pull_progress = { layers_done: 1, layers_total: 3, bytes_done: 42 << 20, bytes_total: 84 << 20, percent: 50 };
      await route.fulfill({ response: res, json: s });
    },
  );
  await login(page, admin.email, admin.password);
  await page.goto(`${base}/sessions/${id}`);
  const startup = page.getByRole('status', { name: 'Startup' });
  await startup.getByText('42.0 of 84.0 MiB, layers 1 of 3').waitFor();
  assert.equal(await startup.getByRole('progressbar', { name: 'Image pull' }).getAttribute('value'), '50');
  assert.equal(await startup.locator('li[aria-current="step"]').textContent(), 'Pulling the image');
  assert.equal(await startup.locator('li.done').count(), 2);
  assert.deepEqual(problems, []);
  await page.close();
  await api('DELETE', `/v1/sessions/${id}`);
});

test('an app that does not answer yet has its button disabled; a real one is enabled once its agent finds it ready', async () => {
  const problems = [];
  const id = await newSession("sh -c 'sleep 2; mkdir -p /www && echo late > /www/index.html && exec busybox httpd -f -p 8080 -h /www'", {
    preopen_ports: [8080],
  });
  const page = await newPage(browser, problems);
  // The API's answer with one more app that never answers (so that its
  // state does not depend on timing).
  await page.route(
    (u) => u.pathname === `/v1/sessions/${id}`,
    async (route) => {
      const res = await route.fetch();
      const s = await res.json();
      if (s.kernels?.[0]?.service_ports?.length) {
        s.kernels[0].service_ports.push({ name: 'later', protocol: 'http', container_port: 9999, host_port: 30999, ready: false });
      }
      await route.fulfill({ response: res, json: s });
    },
  );
  await login(page, admin.email, admin.password);
  await page.goto(`${base}/sessions/${id}`);
  await page.locator('.page-head .status').filter({ hasText: 'RUNNING' }).waitFor({ timeout: 90_000 });
  const apps = page.locator('ul.apps');
  const later = apps.locator('li').filter({ hasText: 'later' });
  await later.getByText('http, container port 9999: starting, not answering yet').waitFor();
  assert.equal(await later.getByRole('button', { name: 'later', exact: true }).isDisabled(), true);
  // The page follows the session: kernel.apps-ready enables the real one.
  const button = apps.getByRole('button', { name: 'port-8080', exact: true });
  await until('port-8080 ready', () => button.isEnabled());
  await apps.locator('li').filter({ hasText: 'port-8080' }).getByText('preopen, container port 8080', { exact: true }).waitFor();
  const s = await api('GET', `/v1/sessions/${id}`);
  assert.equal(s.kernels[0].service_ports[0].ready, true);
  assert.deepEqual(problems, []);
  await page.close();
  await api('DELETE', `/v1/sessions/${id}`);
});
