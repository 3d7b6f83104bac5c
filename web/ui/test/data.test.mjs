// Data in the browser: folders (create, rename, trash, restore, delete
// forever, share by invitation and accept it), and a folder's files
// (upload files and whole folders, picked or dropped, 300 in one batch;
// download byte for byte; mkdir, move, delete; errors per file); names
// shown as text; the pages at phone width.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { admin, api, base, launch, login, newPage, newUser, unique } from './lib.mjs';

let browser;
const temps = [];
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

const sha256 = (b) => createHash('sha256').update(b).digest('hex');

/** tempDir is a directory removed after the tests. */
function tempDir() {
  const d = mkdtempSync(join(tmpdir(), 'cairn-data-test-'));
  temps.push(d);
  return d;
}

/** loginAs logs a user in and answers its API token too (for setting up through the API). */
async function loginAs(user) {
  const res = await fetch(`${base}/v1/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: user.email, password: user.password }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()).token;
}

/** newFolder creates a folder through the API (as the token's user) and answers {id, name}. */
async function newFolder(token = admin.token, body = {}) {
  const name = body.name || unique('f');
  const res = await api('POST', '/v1/vfolders', { name, ...body }, token);
  return { id: res.id, name };
}

/** files lists a directory of a folder through the API. */
async function files(id, path = '', token = admin.token) {
  return (await api('GET', `/v1/vfolders/${id}/files?${new URLSearchParams({ path, limit: '10000' })}`, undefined, token)).items;
}

/** openFolder opens a folder's page and waits for its listing. */
async function openFolder(page, id, path = '') {
  await page.goto(`${base}/data/${id}${path ? `?${new URLSearchParams({ path })}` : ''}`);
  await page.locator('.crumbs [aria-current="page"]').waitFor();
  await page.locator('.dropzone .loading').waitFor({ state: 'detached' });
}

/** finished waits for the upload batch to end and answers its summary. */
async function finished(page, timeout = 60_000) {
  const summary = page.locator('.upload-summary').filter({ hasText: 'Upload finished' });
  await summary.waitFor({ timeout });
  return summary.textContent();
}

/**
 * closeAll closes the pages' contexts and waits for it (closing a page
 * alone leaves its context closing while the next test, or the browser's
 * close, runs).
 */
const closeAll = (...pages) => Promise.all(pages.map((p) => p.context().close()));

const row = (page, name) => page.locator('tbody tr').filter({ has: page.getByText(name, { exact: true }) });

test('create a folder, upload a file and download it byte for byte', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await page.getByRole('navigation', { name: 'menu' }).getByRole('link', { name: 'Data' }).click();
  await page.getByRole('button', { name: 'New folder' }).click();
  const dialog = page.getByRole('dialog', { name: 'New folder' });
  const name = unique('web');
  await dialog.getByLabel('Name', { exact: true }).fill(name);
  await dialog.getByLabel('Quota', { exact: true }).fill('64m');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { name }).waitFor();
  await page.getByText('This directory is empty.').waitFor();

  const body = randomBytes(300 * 1024 + 7);
  await page.getByLabel('files to upload').setInputFiles({ name: 'blob.bin', mimeType: 'application/octet-stream', buffer: body });
  assert.match(await finished(page), /1 of 1 uploaded/);
  await row(page, 'blob.bin').waitFor();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download blob.bin' }).click()]);
  assert.equal(download.suggestedFilename(), 'blob.bin');
  const got = readFileSync(await download.path());
  assert.equal(sha256(got), sha256(body));
  // The folder's quota is shown, as the API has it.
  await page.locator('.page-head').getByText('of 64.0 MiB').waitFor();
  assert.deepEqual(problems, []);
  await closeAll(page);
});

test('an upload cut at half resumes from where the server got to, without resending the first half', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  const folder = await newFolder();
  await login(page, admin.email, admin.password);
  await openFolder(page, folder.id);
  // Two chunks of 8 MiB: the connection of the second one is cut once.
  const body = randomBytes(16 * 1024 * 1024);
  const patches = [];
  let cut = false;
  await page.route('**/uploads/**', async (route) => {
    const req = route.request();
    if (req.method() === 'PATCH') {
      const offset = Number(req.headers()['upload-offset']);
      patches.push(offset);
      assert.match(req.headers()['upload-checksum'] || '', /^sha256 /, 'every chunk carries its checksum');
      if (offset > 0 && !cut) {
        cut = true;
        return route.abort('connectionreset');
      }
    }
    return route.continue();
  });
  // From a file on disk: the browser reads it itself, where a buffer would
  // cross the DevTools protocol as 21 MiB of base64 (slow on a busy machine).
  const file = join(tempDir(), 'big.bin');
  writeFileSync(file, body);
  await page.getByLabel('files to upload').setInputFiles(file, { timeout: 120_000 });
  assert.match(await finished(page, 120_000), /1 of 1 uploaded/);
  assert.ok(cut, 'the second chunk was cut');
  assert.deepEqual(patches, [0, 8 * 1024 * 1024, 8 * 1024 * 1024], 'the first half is sent once, the second again after the cut');
  const res = await fetch(`${base}/v1/vfolders/${folder.id}/files/content?path=big.bin`, { headers: { Authorization: `Bearer ${admin.token}` } });
  assert.equal(sha256(Buffer.from(await res.arrayBuffer())), sha256(body));
  assert.deepEqual(problems.filter((p) => !p.includes('ERR_CONNECTION_RESET')), []);
  await closeAll(page);
});

test('upload a folder with nested files, and files and a folder dropped', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  const folder = await newFolder();
  const root = tempDir();
  const tree = { 'top/a.txt': 'alpha\n', 'top/sub/b.txt': 'beta\n', 'top/sub/deeper/c.txt': randomBytes(5000).toString('base64') };
  for (const [p, content] of Object.entries(tree)) {
    mkdirSync(join(root, p, '..'), { recursive: true });
    writeFileSync(join(root, p), content);
  }
  await login(page, admin.email, admin.password);
  await openFolder(page, folder.id);
  await page.getByLabel('folder to upload').setInputFiles(join(root, 'top'));
  assert.match(await finished(page), /3 of 3 uploaded/);
  await page.getByRole('link', { name: 'top/' }).click();
  await page.getByRole('link', { name: 'sub/' }).click();
  await page.getByRole('link', { name: 'deeper/' }).click();
  await row(page, 'c.txt').waitFor();
  // The breadcrumbs lead back up.
  await page.locator('.crumbs').getByRole('link', { name: 'top', exact: true }).click();
  await row(page, 'a.txt').waitFor();
  for (const [p, content] of Object.entries(tree)) {
    const res = await fetch(`${base}/v1/vfolders/${folder.id}/files/content?${new URLSearchParams({ path: p })}`, { headers: { Authorization: `Bearer ${admin.token}` } });
    assert.equal(await res.text(), content, p);
  }

  // Dropped: two files and a directory holding one, into top/.
  await page.evaluate(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(['one'], 'dropped-1.txt'));
    dt.items.add(new File(['two'], 'dropped-2.txt'));
    document.querySelector('.dropzone').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  assert.match(await finished(page), /2 of 2 uploaded/);
  await row(page, 'dropped-2.txt').waitFor();
  const names = (await files(folder.id, 'top')).map((f) => f.name).sort();
  assert.deepEqual(names, ['a.txt', 'dropped-1.txt', 'dropped-2.txt', 'sub']);
  assert.deepEqual(problems, []);
  await closeAll(page);
});

test('300 files upload in one batch and all land', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  const folder = await newFolder();
  await login(page, admin.email, admin.password);
  await openFolder(page, folder.id);
  const many = Array.from({ length: 300 }, (_, i) => ({ name: `file-${String(i).padStart(3, '0')}.txt`, mimeType: 'text/plain', buffer: Buffer.from(`file number ${i}\n`) }));
  await page.getByLabel('files to upload').setInputFiles(many);
  assert.match(await finished(page, 180_000), /300 of 300 uploaded/);
  await row(page, 'file-299.txt').waitFor();
  assert.equal(await page.locator('table.files tbody tr').count(), 300);
  assert.equal((await files(folder.id)).length, 300);
  // The bar is full.
  const bar = page.getByRole('progressbar', { name: 'upload progress' });
  assert.equal(await bar.getAttribute('value'), await bar.getAttribute('max'));
  assert.deepEqual(problems, []);
  await closeAll(page);
});

test('mkdir, move and rename, delete', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  const folder = await newFolder();
  await login(page, admin.email, admin.password);
  await openFolder(page, folder.id);
  await page.getByRole('button', { name: 'New directory' }).click();
  let dialog = page.getByRole('dialog', { name: 'New directory' });
  await dialog.getByLabel('Name', { exact: true }).fill('docs');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('link', { name: 'docs/' }).waitFor();
  await page.getByLabel('files to upload').setInputFiles({ name: 'note.txt', mimeType: 'text/plain', buffer: Buffer.from('a note\n') });
  await finished(page);
  await page.getByRole('button', { name: 'Move note.txt' }).click();
  dialog = page.getByRole('dialog', { name: /Move or rename/ });
  await dialog.getByLabel('New path', { exact: true }).fill('docs/renamed.txt');
  await dialog.getByRole('button', { name: 'Move' }).click();
  await dialog.waitFor({ state: 'detached' });
  await row(page, 'note.txt').waitFor({ state: 'detached' });
  await page.getByRole('link', { name: 'docs/' }).click();
  await row(page, 'renamed.txt').waitFor();
  // A move onto an existing name is refused; the API's words are shown.
  await page.getByRole('button', { name: 'Move renamed.txt' }).click();
  dialog = page.getByRole('dialog', { name: /Move or rename/ });
  await dialog.getByLabel('New path', { exact: true }).fill('docs');
  await dialog.getByRole('button', { name: 'Move' }).click();
  await dialog.getByRole('alert').waitFor();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('button', { name: 'Delete renamed.txt' }).click();
  dialog = page.getByRole('dialog', { name: /Delete/ });
  await dialog.getByText('docs/renamed.txt').waitFor();
  await dialog.getByRole('button', { name: 'Delete' }).click();
  await page.getByText('This directory is empty.').waitFor();
  // A directory goes with its contents.
  await page.locator('.crumbs').getByRole('link', { name: folder.name, exact: true }).click();
  await page.getByRole('button', { name: 'Delete docs' }).click();
  dialog = page.getByRole('dialog', { name: /Delete/ });
  await dialog.getByText('and everything in it').waitFor();
  await dialog.getByRole('button', { name: 'Delete' }).click();
  await page.getByText('This directory is empty.').waitFor();
  assert.deepEqual(await files(folder.id), []);
  assert.deepEqual(problems, []);
  await closeAll(page);
});

test('errors are shown per file: over the quota', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  const folder = await newFolder(admin.token, { quota: 16384 });
  await login(page, admin.email, admin.password);
  await openFolder(page, folder.id);
  await page.getByLabel('files to upload').setInputFiles([
    { name: 'small.txt', mimeType: 'text/plain', buffer: Buffer.from('fits\n') },
    { name: 'big.bin', mimeType: 'application/octet-stream', buffer: randomBytes(64 * 1024) },
  ]);
  assert.match(await finished(page), /1 of 2 uploaded, 1 failed/);
  const failed = page.locator('.upload-files li.upload-failed');
  assert.equal(await failed.count(), 1);
  assert.equal(await failed.locator('.upload-name').textContent(), 'big.bin');
  assert.match(await failed.locator('.upload-error').textContent(), /^403: .*quota/i);
  await row(page, 'small.txt').waitFor();
  assert.deepEqual((await files(folder.id)).map((f) => f.name), ['small.txt']);
  assert.deepEqual(problems, []);
  await closeAll(page);
});

test('rename, trash, restore and delete forever', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  const folder = await newFolder();
  const renamed = unique('renamed');
  await login(page, admin.email, admin.password);
  await page.goto(`${base}/data?view=mine`);
  await page.getByRole('button', { name: `Rename ${folder.name}` }).click();
  let dialog = page.getByRole('dialog', { name: /Rename/ });
  await dialog.getByLabel('New name', { exact: true }).fill(renamed);
  await dialog.getByRole('button', { name: 'Rename' }).click();
  await page.getByRole('link', { name: renamed, exact: true }).waitFor();

  await page.getByRole('button', { name: `Move to trash ${renamed}` }).click();
  await page.getByRole('link', { name: renamed, exact: true }).waitFor({ state: 'detached' });
  await page.getByRole('button', { name: 'Trash', exact: true }).click();
  await page.getByRole('button', { name: `Restore ${renamed}` }).click();
  await page.getByRole('button', { name: `Restore ${renamed}` }).waitFor({ state: 'detached' });
  await page.getByRole('button', { name: 'Mine', exact: true }).click();
  await page.getByRole('link', { name: renamed, exact: true }).waitFor();

  await page.getByRole('button', { name: `Move to trash ${renamed}` }).click();
  await page.getByRole('button', { name: 'Trash', exact: true }).click();
  await page.getByRole('button', { name: `Delete forever ${renamed}` }).click();
  dialog = page.getByRole('dialog', { name: `Delete “${renamed}” forever` });
  const confirm = dialog.getByRole('button', { name: 'Delete forever' });
  assert.ok(await confirm.isDisabled(), 'deleting forever waits for the name');
  await dialog.getByLabel('Type the folder’s name to confirm').fill(renamed.slice(0, -1));
  assert.ok(await confirm.isDisabled());
  await dialog.getByLabel('Type the folder’s name to confirm').fill(renamed);
  await confirm.click();
  await dialog.waitFor({ state: 'detached' });
  await row(page, renamed).locator('.status').filter({ hasText: /delete-(ongoing|complete)/ }).waitFor();
  // Once its data is gone the record can be removed from the list.
  for (let i = 0; ; i++) {
    const f = await api('GET', `/v1/vfolders/${folder.id}`);
    if (f.status === 'delete-complete') break;
    assert.ok(i < 300, `still ${f.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await page.getByRole('button', { name: 'Refresh', exact: true }).click();
  await page.getByRole('button', { name: `Remove from the list ${renamed}` }).click();
  await row(page, renamed).waitFor({ state: 'detached' });
  assert.deepEqual(problems, []);
  await closeAll(page);
});

test('share by invitation: the invitee accepts and sees it shared with them; an invitation is cancelled', async () => {
  const problems = [];
  // Users of a domain of their own, whose users may use the storage host.
  const domainName = unique('dom');
  await api('POST', '/v1/domains', { name: domainName });
  await api('PATCH', `/v1/domains/${domainName}`, { allowed_vfolder_hosts: { local: ['create-vfolder', 'modify-vfolder', 'upload-file', 'download-file', 'invite-others'] } });
  const owner = await newUser({ domain: domainName });
  const invitee = await newUser({ domain: domainName });
  const other = await newUser({ domain: domainName });
  const ownerToken = await loginAs(owner);
  const folder = await newFolder(ownerToken);
  const page = await newPage(browser, problems);
  await login(page, owner.email, owner.password);
  await page.goto(`${base}/data?view=mine`);
  await page.getByRole('button', { name: `Share ${folder.name}` }).click();
  const dialog = page.getByRole('dialog', { name: `Share “${folder.name}”` });
  await dialog.getByLabel('User’s e-mail address').fill(invitee.email);
  await dialog.getByRole('combobox', { name: /^Permission/ }).selectOption('ro');
  await dialog.getByRole('button', { name: 'Invite' }).click();
  await dialog.getByRole('status').filter({ hasText: 'is invited' }).waitFor();
  await dialog.getByLabel('User’s e-mail address').fill(other.email);
  await dialog.getByRole('button', { name: 'Invite' }).click();
  await dialog.locator('.cards li').filter({ hasText: other.email }).waitFor();
  await dialog.getByRole('button', { name: 'Close' }).click();
  // Sent invitations: the second one is cancelled.
  await page.getByRole('button', { name: `Cancel the invitation of ${other.email} to ${folder.name}` }).click();
  await page.getByRole('button', { name: `Cancel the invitation of ${other.email} to ${folder.name}` }).waitFor({ state: 'detached' });
  assert.equal(await page.getByRole('button', { name: `Cancel the invitation of ${invitee.email} to ${folder.name}` }).count(), 1);

  // The invitee accepts and finds it under "shared with me", read-only.
  const page2 = await newPage(browser, problems);
  await login(page2, invitee.email, invitee.password);
  await page2.goto(`${base}/data?view=shared`);
  await page2.getByText('No folders here.').waitFor();
  await page2.getByRole('button', { name: `Accept ${folder.name}` }).click();
  await page2.getByRole('link', { name: folder.name, exact: true }).waitFor();
  await row(page2, folder.name).getByRole('cell', { name: 'ro', exact: true }).waitFor();
  await row(page2, folder.name).getByText('shared with me').waitFor();
  // Read-only: it may read but not upload.
  await page2.getByRole('link', { name: folder.name, exact: true }).click();
  assert.ok(await page2.getByRole('button', { name: 'Upload files' }).isDisabled());
  // The one whose invitation was cancelled has none to accept.
  const page3 = await newPage(browser, problems);
  await login(page3, other.email, other.password);
  await page3.goto(`${base}/data?view=shared`);
  await page3.getByText('No folders here.').waitFor();
  assert.equal(await page3.getByRole('button', { name: `Accept ${folder.name}` }).count(), 0);
  // The owner sees the member in the share dialog and removes them.
  await page.getByRole('button', { name: 'Refresh', exact: true }).click();
  await page.getByRole('button', { name: `Share ${folder.name}` }).click();
  await dialog.getByRole('button', { name: `Remove ${invitee.id}` }).click();
  await dialog.getByText('Shared with nobody yet.').waitFor();
  await page2.goto(`${base}/data?view=shared`);
  await page2.getByText('No folders here.').waitFor();
  assert.deepEqual(problems, []);
  await closeAll(page, page2, page3);
});

test('a project folder: an admin makes it, sets a member read-only, then unshares', async () => {
  const problems = [];
  const member = await newUser({ project: 'default' });
  const page = await newPage(browser, problems);
  await login(page, admin.email, admin.password);
  await page.goto(`${base}/data`);
  await page.getByRole('button', { name: 'New folder' }).click();
  const create = page.getByRole('dialog', { name: 'New folder' });
  const name = unique('proj');
  await create.getByLabel('Name', { exact: true }).fill(name);
  await create.getByRole('combobox', { name: /^Type/ }).selectOption('project');
  await create.getByLabel('Project', { exact: true }).fill('default');
  await create.getByRole('button', { name: 'Create' }).click();
  await create.waitFor({ state: 'detached' });
  await page.getByRole('button', { name: 'Project', exact: true }).click();
  await page.getByRole('button', { name: `Share ${name}` }).click();
  const dialog = page.getByRole('dialog', { name: `Share “${name}”` });
  await dialog.getByLabel('User’s e-mail address').fill(member.email);
  await dialog.getByRole('combobox', { name: /^Permission/ }).selectOption('ro');
  await dialog.getByRole('button', { name: 'Share' }).click();
  await dialog.getByRole('button', { name: `Unshare ${member.id}` }).waitFor();

  // The member sees it under Project, read-only.
  const page2 = await newPage(browser, problems);
  await login(page2, member.email, member.password);
  await page2.goto(`${base}/data?view=project`);
  await row(page2, name).getByRole('cell', { name: 'ro', exact: true }).waitFor();
  // Unshared, the member has the folder's own permission again.
  await dialog.getByRole('button', { name: `Unshare ${member.id}` }).click();
  await dialog.getByText('No per-user permissions').waitFor();
  await page2.getByRole('button', { name: 'Refresh', exact: true }).click();
  await row(page2, name).getByRole('cell', { name: 'rw', exact: true }).waitFor();
  assert.deepEqual(problems, []);
  await closeAll(page, page2);
});

test('a user with many folders pages through them, 50 at a time', async () => {
  const problems = [];
  const domainName = unique('dom');
  await api('POST', '/v1/domains', { name: domainName });
  await api('PATCH', `/v1/domains/${domainName}`, { allowed_vfolder_hosts: { local: ['create-vfolder'] } });
  const user = await newUser({ domain: domainName });
  const token = await loginAs(user);
  const names = Array.from({ length: 120 }, (_, i) => `many-${String(i).padStart(3, '0')}`);
  for (let i = 0; i < names.length; i += 8) await Promise.all(names.slice(i, i + 8).map((n) => newFolder(token, { name: n })));
  const page = await newPage(browser, problems);
  await login(page, user.email, user.password);
  await page.goto(`${base}/data?view=mine`);
  const shown = async () => page.locator('table.folders tbody tr td:first-child').allTextContents();
  await page.getByRole('link', { name: 'many-049', exact: true }).waitFor();
  assert.deepEqual(await shown(), names.slice(0, 50));
  await page.getByRole('button', { name: 'Next →' }).click();
  await page.getByRole('link', { name: 'many-099', exact: true }).waitFor();
  assert.deepEqual(await shown(), names.slice(50, 100));
  await page.getByRole('button', { name: 'Next →' }).click();
  await page.getByRole('link', { name: 'many-119', exact: true }).waitFor();
  assert.deepEqual(await shown(), names.slice(100));
  assert.ok(await page.getByRole('button', { name: 'Next →' }).isDisabled());
  await page.getByRole('button', { name: '← Previous' }).click();
  await page.getByRole('link', { name: 'many-050', exact: true }).waitFor();
  await page.getByText('of at most').or(page.getByText('Your folders: 120')).first().waitFor();
  assert.deepEqual(problems, []);
  await closeAll(page);
});

test('markup in folder and file names is shown as text, never run', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  const evil = '<img src=x onerror=alert(1)>';
  const folder = await newFolder(admin.token, { name: `${evil}${randomBytes(2).toString('hex')}` });
  await login(page, admin.email, admin.password);
  await page.goto(`${base}/data?view=mine`);
  await page.getByRole('link', { name: folder.name, exact: true }).click();
  await page.getByRole('heading', { name: folder.name }).waitFor();
  await page.getByLabel('files to upload').setInputFiles({ name: evil, mimeType: 'text/plain', buffer: Buffer.from('x') });
  await finished(page);
  await row(page, evil).waitFor();
  assert.equal(await page.locator('img[src="x"]').count(), 0, 'no element was made from the markup');
  assert.deepEqual(problems, []);
  await closeAll(page);
});

test('the Data pages work at phone width and by keyboard', async () => {
  const problems = [];
  const page = await newPage(browser, problems);
  const folder = await newFolder();
  await api('POST', `/v1/vfolders/${folder.id}/files/mkdir`, { path: `a-directory-with-a-rather-long-name-${'x'.repeat(60)}` });
  await page.setViewportSize({ width: 390, height: 844 });
  await login(page, admin.email, admin.password);
  for (const path of ['/data', `/data/${folder.id}`]) {
    await page.goto(base + path);
    await page.locator('table.list').waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `${path} scrolls sideways by ${overflow}px`);
  }
  // The folder page's buttons are reached by Tab and work with Enter.
  let reached = false;
  for (let i = 0; i < 40 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate(() => document.activeElement?.textContent === 'New directory');
  }
  assert.ok(reached, 'Tab reaches New directory');
  await page.keyboard.press('Enter');
  await page.getByRole('dialog', { name: 'New directory' }).waitFor();
  await page.keyboard.press('Escape');
  await page.getByRole('dialog', { name: 'New directory' }).waitFor({ state: 'detached' });
  assert.deepEqual(problems, []);
  await closeAll(page);
});
