// The login: a cookie the page cannot read, errors shown, log out, the menu
// by role, and the API as the authority over forced admin URLs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, base, launch, login, newPage, newUser } from './lib.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

test('a wrong password shows the API error; the right one logs in with an HttpOnly SameSite=Strict cookie; log out ends it', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  await page.goto(base + '/');
  await page.getByLabel('E-mail address', { exact: true }).fill(admin.email);
  await page.getByLabel('Password', { exact: true }).fill('not the password');
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('alert').filter({ hasText: 'wrong e-mail address or password' }).waitFor();

  await login(page, admin.email, admin.password);
  const cookies = await page.context().cookies(base);
  const c = cookies.find((x) => x.name === 'cairn_session');
  assert.ok(c, 'the login cookie is set');
  assert.equal(c.httpOnly, true);
  assert.equal(c.sameSite, 'Strict');
  assert.equal(await page.evaluate(() => document.cookie.includes('cairn_session')), false, 'the page cannot read the cookie');
  // The superadmin sees the admin section.
  await page.getByRole('navigation', { name: 'menu' }).getByRole('link', { name: 'Users' }).waitFor();
  // A reload keeps the login (the cookie) and writes still work (the CSRF token comes back with any answer).
  await page.reload();
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.getByRole('status').filter({ hasText: 'You have logged out.' }).waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('cairn.me')), null, 'log out forgets the principal');
  // The token is revoked: the old cookie no longer works.
  const res = await fetch(base + '/v1/auth/whoami', { headers: { Cookie: `cairn_session=${c.value}` } });
  assert.equal(res.status, 401);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a user sees no admin menu, and a forced admin URL shows the API 403 and no data', async () => {
  const problems = [];
  const user = await newUser();
  const page = await newPage(browser, problems);
  await login(page, user.email, user.password);
  const menu = page.getByRole('navigation', { name: 'menu' });
  await menu.getByRole('link', { name: 'Sessions' }).waitFor();
  assert.equal(await menu.getByRole('link', { name: 'Users' }).count(), 0);
  await page.goto(base + '/admin/users');
  await page.getByRole('alert').filter({ hasText: '403' }).waitFor();
  assert.equal(await page.locator('table').count(), 0, 'no data is shown');
  assert.equal(await page.getByText(admin.email).count(), 0);
  // The API is the authority: what an admin page reads is refused to the user's own cookie too.
  const status = await page.evaluate(async () => (await fetch('/v1/audit')).status);
  assert.equal(status, 403);
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.getByRole('status').waitFor();
  assert.deepEqual(problems, []);
  await page.close();
});

test('an expired or revoked login brings the login form back with a notice', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  // Revoke every login token of this browser's login from outside (as an admin would).
  const me = await page.evaluate(async () => (await fetch('/v1/auth/whoami')).json());
  await fetch(base + `/v1/auth/tokens/${me.token_id}`, { method: 'DELETE', headers: { Authorization: `Bearer ${admin.token}` } });
  await page.getByRole('navigation', { name: 'menu' }).getByRole('link', { name: 'Sessions' }).click();
  await page.getByRole('status').filter({ hasText: 'Your login has expired or was ended' }).waitFor();
  await page.getByLabel('E-mail address', { exact: true }).waitFor();

  // A reload after a revocation: the page renders at once with the principal it
  // remembers (sessionStorage), but the API refuses its reads, so the login form
  // comes back and no data is shown.
  await login(page, admin.email, admin.password);
  await page.goto(base + '/sessions');
  await page.getByRole('heading', { name: 'Sessions' }).waitFor();
  assert.ok(await page.evaluate(() => sessionStorage.getItem('cairn.me')), 'the principal is remembered');
  const again = await page.evaluate(async () => (await fetch('/v1/auth/whoami')).json());
  await fetch(base + `/v1/auth/tokens/${again.token_id}`, { method: 'DELETE', headers: { Authorization: `Bearer ${admin.token}` } });
  await page.reload();
  await page.getByLabel('E-mail address', { exact: true }).waitFor();
  assert.equal(await page.locator('table.list').count(), 0, 'no data is shown');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('cairn.me')), null, 'the refused principal is forgotten');
  assert.deepEqual(problems, []);
  await page.close();
});

test('the page works at phone width and by keyboard', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  await page.setViewportSize({ width: 390, height: 844 });
  await login(page, admin.email, admin.password);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px at phone width`);
  await page.setViewportSize({ width: 1280, height: 800 });
  // Tab from the top reaches the skip link, then the menu; Enter follows a link.
  await page.goto(base + '/');
  await page.getByRole('button', { name: 'Log out' }).waitFor();
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Skip to content');
  let reached = false;
  for (let i = 0; i < 10 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate(() => document.activeElement.textContent === 'Sessions');
  }
  assert.ok(reached, 'Tab reaches the Sessions link of the menu');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Sessions' }).waitFor();
  assert.deepEqual(problems, []);
  await page.close();
});
