// A session's apps in the browser, through the real app proxy to the real
// agent and container: the terminal opened from the session page runs a
// shell (echo $((6*7)) shows 42 in xterm's screen), a reload and a cut
// connection reattach to the same shell, a second window takes it over and
// the first waits for Reconnect, New terminal starts another, an exit is
// shown; a link opens once and only for the session's owner, and nothing
// after the session ended; a web app (busybox httpd on a pre-opened port)
// opens from its button; a tcp port is listed, not offered as a link; the
// API's refusal is shown with its words.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, api, base, launch, login, newPage, newUser, tokenOf, unique, watch } from './lib.mjs';

let browser;
const sessions = [];
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
  for (const id of sessions) await api('DELETE', `/v1/sessions/${id}`).catch(() => {});
});

/**
 * newSession creates a session of the base image through the API and
 * answers its id. Half a CPU: the dev agent has few, and the other test
 * files' sessions may still hold some.
 */
async function newSession(command, extra = {}) {
  const res = await api('POST', '/v1/sessions', {
    image: 'localhost/cairn/base:latest',
    name: unique('app'),
    resources: { cpu: 0.5, mem: '64m' },
    command,
    ...extra,
  });
  sessions.push(res.id);
  return res.id;
}

/** until polls f (every 200 ms) until it answers a truthy value, and answers it. */
async function until(what, f, timeout = 90_000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** end terminates a test's session, so the next test's gets its CPU. */
const end = (id) => api('DELETE', `/v1/sessions/${id}`);

const status = async (id) => (await api('GET', `/v1/sessions/${id}`)).status;

/** running opens the session's page (which follows it) and waits until it shows RUNNING. */
async function running(page, id) {
  await page.goto(`${base}/sessions/${id}`);
  await page.locator('.page-head .status').filter({ hasText: 'RUNNING' }).waitFor({ timeout: 90_000 });
}

/** openApp clicks an app's button (by keyboard when asked) and answers the tab it opened, once it left about:blank. */
async function openApp(page, name, problems, { keyboard = false } = {}) {
  const button = page.getByRole('button', { name, exact: true });
  // An app's button is enabled once its agent found the app answering.
  await until(`${name} ready`, () => button.isEnabled());
  const click = keyboard ? button.focus().then(() => page.keyboard.press('Enter')) : button.click();
  const [tab] = await Promise.all([page.context().waitForEvent('page'), click]);
  watch(tab, problems);
  await tab.waitForURL((u) => u.protocol !== 'about:');
  return tab;
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** row is xterm's screen row that shows exactly text (the DOM renderer's rows). */
const row = (tab, text) => tab.locator('.xterm-rows > div').filter({ hasText: new RegExp(`^\\s*${escape(text)}\\s*$`) });

/** prompt is a row with the shell's prompt (busybox sh as root: "/ # "); type once it shows. */
const prompt = (tab) => tab.locator('.xterm-rows > div').filter({ hasText: /#\s*$/ }).first();

/** shell types a command line into the terminal and presses Enter. */
async function shell(tab, line) {
  await tab.locator('.xterm-helper-textarea').focus();
  await tab.keyboard.type(line);
  await tab.keyboard.press('Enter');
}

const statusLine = (tab, text) => tab.locator('#status').filter({ hasText: text });

test('the terminal: a shell of the session from its page, the same shell after a reload, another on request', async () => {
  const problems = [];
  const id = await newSession("sh -c 'sleep 3600'");
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await running(page, id);
  const tab = await openApp(page, 'Terminal', problems);
  // The ticket was traded for the app cookie and is gone from the address bar.
  assert.equal(new URL(tab.url()).pathname, `/v1/sessions/${id}/apps/terminal/`);
  assert.equal(new URL(tab.url()).search, '');
  assert.equal(await tab.evaluate(() => window.opener), null);
  await statusLine(tab, 'connected').waitFor({ timeout: 30_000 });
  await prompt(tab).waitFor({ timeout: 30_000 });
  await shell(tab, 'V=kept; echo $((6*7))');
  await row(tab, '42').waitFor({ timeout: 30_000 });

  // A reload reattaches to the same shell: the variable is still set.
  // (Its sockets now pass through the test, which can cut them.)
  const sockets = [];
  await tab.routeWebSocket(/\/apps\/terminal\/socket\?/, (ws) => {
    ws.connectToServer();
    sockets.push(ws);
  });
  await tab.reload();
  await statusLine(tab, /^connected$/).waitFor({ timeout: 30_000 });
  await shell(tab, 'echo "got-$V"');
  await row(tab, 'got-kept').waitFor({ timeout: 30_000 });

  // The connection drops under the page (as a network or a restarted
  // proxy would): the page connects again by itself, to the same shell.
  assert.equal(sockets.length, 1);
  await sockets[0].close({ code: 1012, reason: 'cut by the test' });
  await until('a new socket', async () => sockets.length === 2, 30_000);
  await statusLine(tab, /^connected$/).waitFor({ timeout: 30_000 });
  await shell(tab, 'echo "again-$V"');
  await row(tab, 'again-kept').waitFor({ timeout: 30_000 });

  // The same terminal opened in another window (same login, same
  // terminal id) takes it over; this one waits for Reconnect rather than
  // taking it back by itself, then Reconnect shows what the other typed.
  const key = `cairn.terminal.${id}`;
  const terminalId = await tab.evaluate((k) => sessionStorage.getItem(k), key);
  const other = await tab.context().newPage();
  watch(other, problems);
  await other.addInitScript(([k, v]) => sessionStorage.setItem(k, v), [key, terminalId]);
  await other.goto(tab.url());
  await statusLine(other, /^connected$/).waitFor({ timeout: 30_000 });
  await statusLine(tab, 'opened in another window').waitFor({ timeout: 30_000 });
  await shell(other, 'echo "other-$V"');
  await row(other, 'other-kept').waitFor({ timeout: 30_000 });
  assert.equal(await other.locator('#status').innerText(), 'connected', 'the first window did not take the terminal back');
  await tab.getByRole('button', { name: 'Reconnect' }).click();
  await statusLine(tab, /^connected$/).waitFor({ timeout: 30_000 });
  await row(tab, 'other-kept').waitFor({ timeout: 30_000 });
  await statusLine(other, 'opened in another window').waitFor({ timeout: 30_000 });
  await other.close();

  // New terminal: another shell, without the variable.
  await tab.getByRole('button', { name: 'New terminal' }).click();
  await statusLine(tab, 'connected (a new shell)').waitFor({ timeout: 30_000 });
  await prompt(tab).waitFor({ timeout: 30_000 });
  await shell(tab, 'echo "new:$V:"');
  await row(tab, 'new::').waitFor({ timeout: 30_000 });

  // The shell ends: the page says so and does not reconnect.
  await shell(tab, 'exit 3');
  await statusLine(tab, 'the shell exited (code 3)').waitFor({ timeout: 30_000 });
  assert.deepEqual(problems, []);
  await tab.close();
  await page.close();
  await end(id);
});

test('an app link opens once, only for the session’s owner, and nothing after the session ended', async () => {
  const problems = [];
  const id = await newSession("sh -c 'sleep 3600'");
  await until('RUNNING', async () => (await status(id)) === 'RUNNING');
  const opened = await api('POST', `/v1/sessions/${id}/apps/terminal`);
  assert.ok(opened.url.includes(`/v1/sessions/${id}/apps/terminal/?cairn_ticket=`), opened.url);
  assert.ok(Date.parse(opened.expires_at) > Date.now());

  // Another user may not open it: the same 404 as a session that does not exist.
  const other = await tokenOf(await newUser());
  const refused = await fetch(`${base}/v1/sessions/${id}/apps/terminal`, { method: 'POST', headers: { Authorization: `Bearer ${other}` } });
  assert.equal(refused.status, 404, await refused.text());

  // The link opens the terminal once...
  const first = await newPage(browser, problems);
  const res = await first.goto(opened.url);
  assert.equal(res.status(), 200);
  await statusLine(first, 'connected').waitFor({ timeout: 30_000 });
  // ...and a second time (another browser) it is a 404 page.
  const second = await newPage(browser, problems);
  const again = await second.goto(opened.url);
  assert.equal(again.status(), 404);
  assert.match(await second.locator('body').innerText(), /open it from Cairn/);
  assert.equal(await second.locator('.xterm').count(), 0);

  // The session ends: the open terminal stops (the shell is gone, or its
  // link no longer opens anything), a reload is a 404, and a new link is refused.
  await end(id);
  await until('TERMINATED', async () => (await status(id)) === 'TERMINATED');
  await statusLine(first, /the shell exited|this link has expired: open the terminal again from Cairn/).waitFor({ timeout: 30_000 });
  assert.equal((await first.reload()).status(), 404);
  const late = await fetch(`${base}/v1/sessions/${id}/apps/terminal`, { method: 'POST', headers: { Authorization: `Bearer ${admin.token}` } });
  assert.equal(late.status, 409, await late.text());
  // The page's sockets refused after the end are the only errors it logged.
  assert.deepEqual(
    problems.filter((p) => !/WebSocket connection to .*\/apps\/terminal\/socket\?terminal=.* failed/.test(p)),
    [],
  );
  await first.close();
  await second.close();
});

test('the session page lists a tcp port without a button, shows the API’s refusal to open an app, and closes the tab it opened', async () => {
  const problems = [];
  const id = await newSession("sh -c 'sleep 3600'");
  const page = await newPage(browser, problems);
  // The session as the API answers it, with a tcp service port added to
  // its main kernel (the base image declares none).
  await page.route(
    (u) => u.pathname === `/v1/sessions/${id}`,
    async (route) => {
      const res = await route.fetch();
      const s = await res.json();
      if (s.kernels?.[0]) s.kernels[0].service_ports = [{ name: 'ssh', protocol: 'tcp', container_port: 22, host_port: 30522 }];
      await route.fulfill({ response: res, json: s });
    },
  );
  await login(page, admin.email, admin.password);
  await running(page, id);
  const apps = page.locator('ul.apps');
  await apps.getByText('tcp, not a web app: published on 127.0.0.1:30522 of agent').waitFor();
  assert.equal(await apps.getByRole('button', { name: 'ssh' }).count(), 0);
  // The session ends between the page's read and the click: the API answers 409.
  await page.route(`**/v1/sessions/${id}/apps/terminal`, (route) =>
    route.fulfill({
      status: 409,
      contentType: 'application/problem+json',
      body: JSON.stringify({ status: 409, title: 'Conflict', detail: 'session is TERMINATING, not RUNNING: its apps are closed', kind: 'conflict' }),
    }),
  );
  const [tab] = await Promise.all([page.context().waitForEvent('page'), page.getByRole('button', { name: 'Terminal', exact: true }).click()]);
  await page.getByRole('alert').filter({ hasText: 'its apps are closed' }).waitFor();
  await until('the blank tab closed', async () => tab.isClosed(), 10_000);
  assert.deepEqual(problems, []);
  await page.close();
  await end(id);
});

test('a web app of the session: busybox httpd on a pre-opened port opens from its button (by keyboard)', async () => {
  const problems = [];
  const id = await newSession("sh -c 'mkdir -p /www && echo hello > /www/index.html && busybox httpd -f -p 8080 -h /www'", { preopen_ports: [8080] });
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await running(page, id);
  const tab = await openApp(page, 'port-8080', problems, { keyboard: true });
  await tab.getByText('hello', { exact: true }).waitFor({ timeout: 30_000 });
  assert.equal(new URL(tab.url()).search, '');
  assert.deepEqual(problems, []);
  await tab.close();
  await page.close();
  await end(id);
});
