// lib.mjs — what the browser tests share: Debian's Chromium through
// playwright-core, the Cairn under test (CAIRN_URL, started by the Go test
// e2e/browser_test.go), its superadmin (CAIRN_EMAIL, CAIRN_PASSWORD,
// CAIRN_TOKEN) and API calls to set up what a test needs.
import { chromium } from 'playwright-core';
import { randomBytes } from 'node:crypto';

export const base = process.env.CAIRN_URL;
export const admin = { email: process.env.CAIRN_EMAIL, password: process.env.CAIRN_PASSWORD, token: process.env.CAIRN_TOKEN };
if (!base || !admin.email || !admin.password || !admin.token) {
  throw new Error('CAIRN_URL, CAIRN_EMAIL, CAIRN_PASSWORD and CAIRN_TOKEN must be set (e2e/browser_test.go sets them)');
}

/** launch starts a headless Chromium; close it with browser.close(). */
export async function launch() {
  return chromium.launch({
    executablePath: process.env.CAIRN_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * newPage opens a page that fails the test on any script error or
 * dialog (an alert() would mean injected script ran).
 */
export async function newPage(browser, problems) {
  // Each page has a context of its own: its own cookies, its own login.
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.on('close', () => context.close().catch(() => {}));
  watch(page, problems);
  return page;
}

/** watch fails the test on any script error, console error or dialog of page (newPage's, or a tab it opened). */
export function watch(page, problems) {
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('dialog', async (d) => {
    problems.push(`a dialog opened: ${d.type()} ${d.message()}`);
    await d.dismiss();
  });
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of (400|401|403|404|409)/.test(m.text())) problems.push(`console error: ${m.text()}`);
  });
}

/** login fills the login form and waits for the shell. */
export async function login(page, email, password) {
  await page.goto(base + '/');
  await page.getByLabel('E-mail address', { exact: true }).fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('button', { name: 'Log out' }).waitFor();
}

/** api calls Cairn's API as the superadmin (Bearer token) and answers the JSON. */
export async function api(method, path, body, token = admin.token) {
  const res = await fetch(base + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** tokenOf logs a user in through the API and answers its login token. */
export async function tokenOf(user) {
  const res = await fetch(`${base}/v1/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: user.email, password: user.password }),
  });
  if (res.status !== 200) throw new Error(`log in ${user.email}: ${res.status} ${await res.text()}`);
  return (await res.json()).token;
}

/** unique is a fresh name for a test's objects. */
export const unique = (prefix) => `${prefix}-${randomBytes(4).toString('hex')}`;

/** newUser creates a user (role user unless given) in a domain and answers {email, password, id}. */
export async function newUser({ domain = 'default', role = 'user', project } = {}) {
  const email = `${unique('user')}@example.com`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const res = await api('POST', '/v1/users', { email, password, domain, role });
  if (project) await api('PUT', `/v1/projects/${project}/members/${res.id}`, {});
  return { email, password, id: res.id };
}
