// data.jsx — the Data page: the virtual folders the caller sees, a page at
// a time from the server, by view (all, mine, project, shared with me, the
// trash; admins and monitors also their domain's), with the caller's quota
// scope; dialogs that create, rename, share (a project folder: per-user
// permissions; a user folder: invitations and members) and delete forever;
// and the invitations the caller received (accept, reject) and sent
// (cancel). The files of a folder are on the Folder page (files.jsx).
import { useEffect, useState } from 'preact/hooks';
import { get, post, del } from '../api.js';
import { adminRoles } from '../menu.js';
import { Link, navigate, queryParam } from '../router.jsx';
import { Dialog, Empty, ErrorBox, Field, Loading, Pager, Time, bytes, useApi, useSubmit, useForm } from '../ui.jsx';

const PAGE = 50;

/** The statuses a view shows: the trash's lifecycle, or every other. */
const LIVE = 'ready,performing,cloning,error';
const TRASH = 'delete-pending,delete-ongoing,delete-error,delete-complete';

/** views: [key, label, relation, statuses, roles?]. */
const views = [
  ['all', 'All', '', LIVE],
  ['mine', 'Mine', 'own', LIVE],
  ['project', 'Project', 'project', LIVE],
  ['shared', 'Shared with me', 'shared', LIVE],
  ['trash', 'Trash', 'own,shared,project', TRASH],
  ['domain', 'Domain', 'domain', LIVE, [...adminRoles, 'monitor']],
];

const RELATIONS = { own: 'mine', shared: 'shared with me', project: 'project', domain: 'domain' };

/** parseSize reads a size in bytes, or with a unit (k, m, g, t; powers of 1024); '' is 0. */
export function parseSize(s) {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$/i.exec(s || '');
  if (!s || !s.trim()) return 0;
  if (!m) return NaN;
  const mult = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 }[m[2].toLowerCase()];
  return Math.round(Number(m[1]) * mult);
}

export const folderPath = (id) => `/data/${encodeURIComponent(id)}`;

export function DataPage({ me, loc }) {
  const mine = views.filter((v) => !v[4] || v[4].includes(me.role));
  const key = queryParam(loc, 'view') || 'all';
  const view = mine.find((v) => v[0] === key) || mine[0];
  const [cursors, setCursors] = useState([]);
  const [dialog, setDialog] = useState(null); // [kind, folder]
  const [actionError, setActionError] = useState(null);
  const cursor = cursors[cursors.length - 1] || '';
  // pos: the position of the last change made here; the lists wait for it
  // (read your writes: the read models may lag the command an instant).
  const [pos, setPos] = useState(0);
  const wait = pos || undefined;
  const list = useApi((signal) => get('/v1/vfolders', { relation: view[2], status: view[3], limit: PAGE, cursor, wait_for_position: wait }, { signal }), [view[0], cursor, pos]);
  // The quota and the invitations are asked for once the list has its
  // answer and its rows are painted (an effect runs after the paint): the
  // folders show first, and the three requests neither compete with the
  // list's for the server nor delay its rows' frame.
  const [listed, setListed] = useState(false);
  useEffect(() => {
    if (!list.loading) setListed(true);
  }, [list.loading]);
  const scope = useApi((signal) => get('/v1/vfolders/quota-scope', { wait_for_position: wait }, { signal }), [pos], listed);
  const received = useApi((signal) => get('/v1/vfolder-invitations', { direction: 'received', state: 'pending', wait_for_position: wait }, { signal }), [pos], listed);
  const sent = useApi((signal) => get('/v1/vfolder-invitations', { direction: 'sent', state: 'pending', wait_for_position: wait }, { signal }), [pos], listed);
  /** changed notes a command's answer ({position}) and reads the lists again. */
  const changed = (res) => {
    if (res && res.position) setPos((p) => Math.max(p, res.position));
    reloadAll();
  };
  const reloadAll = () => {
    list.reload();
    scope.reload();
    received.reload();
    sent.reload();
  };
  const act = async (f) => {
    setActionError(null);
    try {
      changed(await f());
    } catch (err) {
      setActionError(err);
    }
  };
  const go = (k) => {
    setCursors([]);
    navigate(k === 'all' ? '/data' : `/data?view=${k}`);
  };
  const close = () => setDialog(null);
  const done = (res) => {
    setDialog(null);
    changed(res);
  };
  const [kind, folder] = dialog || [];
  return (
    <section>
      <div class="page-head">
        <h1>Data</h1>
        <button type="button" class="primary" onClick={() => setDialog(['create'])}>
          New folder
        </button>
      </div>
      <Scope scope={scope} />
      <div class="tabs" role="group" aria-label="view">
        {mine.map(([k, label]) => (
          <button type="button" key={k} aria-pressed={k === view[0] ? 'true' : 'false'} onClick={() => go(k)}>
            {label}
          </button>
        ))}
        <button type="button" onClick={reloadAll}>
          Refresh
        </button>
      </div>
      <ErrorBox error={actionError} />
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && !list.data.items.length && <Empty>{view[0] === 'trash' ? 'The trash is empty.' : 'No folders here.'}</Empty>}
      {list.data && list.data.items.length > 0 && (
        <div class="table-wrap">
          <table class="list folders">
            <thead>
              <tr>
                <th>Name</th>
                <th>Status</th>
                <th>Relation</th>
                <th>Permission</th>
                <th>Quota</th>
                <th>Host</th>
                <th>Usage mode</th>
                <th>Created</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((f) => (
                <tr key={f.id}>
                  <td>{f.status === 'ready' ? <Link href={folderPath(f.id)}>{f.name}</Link> : <span>{f.name}</span>}</td>
                  <td>
                    <span class={`status vstatus-${f.status}`}>{f.status}</span>
                    {f.status_message && <small class="muted"> {f.status_message}</small>}
                  </td>
                  <td>
                    {RELATIONS[f.relation] || f.relation}
                    {f.ownership_type === 'project' && <small class="muted"> {f.owner}</small>}
                  </td>
                  <td>{f.effective_permission}</td>
                  <td>{f.quota ? bytes(f.quota) : 'none'}</td>
                  <td>{f.host}</td>
                  <td>{f.usage_mode}</td>
                  <td>
                    <Time at={f.created_at} />
                  </td>
                  <td class="row-actions">
                    <FolderActions folder={f} act={act} open={(k) => setDialog([k, f])} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.data && <Pager cursors={cursors} next={list.data.next_cursor} onPage={setCursors} labels={['← Previous', 'Next →']} />}
      <Invitations received={received} sent={sent} act={act} />
      {kind === 'create' && <CreateFolder me={me} onClose={close} onDone={done} />}
      {kind === 'rename' && <RenameFolder folder={folder} onClose={close} onDone={done} />}
      {kind === 'share' && <ShareFolder folder={folder} onClose={close} onDone={changed} />}
      {kind === 'forget' && <DeleteForever folder={folder} onClose={close} onDone={done} />}
    </section>
  );
}

/** Scope shows the caller's own quota scope: usage and limits (0 is none). */
function Scope({ scope }) {
  if (scope.error) return <ErrorBox error={scope.error} />;
  const s = scope.data;
  if (!s) return null;
  return (
    <p class="scope">
      Your folders: <strong>{s.folders}</strong>
      {s.max_vfolder_count ? ` of at most ${s.max_vfolder_count}` : ''} · use <strong>{bytes(s.bytes)}</strong>
      {s.max_quota_scope_size ? ` of ${bytes(s.max_quota_scope_size)}` : ''} in {s.files} files
    </p>
  );
}

/** FolderActions are the buttons a folder's row has for its status and the caller's relation. */
function FolderActions({ folder: f, act, open }) {
  const id = encodeURIComponent(f.id);
  const manage = f.effective_permission === 'wd' && f.relation !== 'shared';
  const buttons = [];
  if (f.status === 'ready') {
    if (manage) {
      buttons.push(['Rename', () => open('rename')]);
      buttons.push(['Share', () => open('share')]);
      buttons.push(['Move to trash', () => act(() => del(`/v1/vfolders/${id}`))]);
    }
    if (f.relation === 'shared') buttons.push(['Leave', () => act(() => post(`/v1/vfolders/${id}/leave`, {}))]);
  }
  if (manage && (f.status === 'delete-pending' || f.status === 'delete-error')) {
    if (f.status === 'delete-pending') buttons.push(['Restore', () => act(() => post(`/v1/vfolders/${id}/restore`))]);
    buttons.push(['Delete forever', () => open('forget'), 'danger']);
  }
  if (manage && f.status === 'delete-complete') buttons.push(['Remove from the list', () => act(() => post(`/v1/vfolders/${id}/purge`))]);
  if (!buttons.length) return <span class="muted">—</span>;
  return (
    <span class="buttons">
      {buttons.map(([label, onClick, cls]) => (
        <button type="button" key={label} class={cls} onClick={onClick} aria-label={`${label} ${f.name}`}>
          {label}
        </button>
      ))}
    </span>
  );
}

function CreateFolder({ me, onClose, onDone }) {
  const admin = adminRoles.includes(me.role);
  const [v, bind, setValues] = useForm({ name: '', type: 'user', project: '', host: '', usage_mode: 'general', permission: 'rw', quota: '', cloneable: false });
  const s = useSubmit(async () => {
    const quota = parseSize(v.quota);
    if (Number.isNaN(quota)) throw Object.assign(new Error('a number of bytes, or with a unit: 500m, 10g'), { status: 400, field: 'quota' });
    const body = { name: v.name, usage_mode: v.usage_mode };
    if (v.host) body.host = v.host;
    if (quota) body.quota = quota;
    if (v.cloneable) body.cloneable = true;
    if (v.type === 'project') {
      body.project = v.project;
      body.permission = v.permission;
    }
    onDone(await post('/v1/vfolders', body));
  });
  return (
    <Dialog title="New folder" onClose={onClose}>
      <form onSubmit={s.submit} class="form">
        <ErrorBox error={s.error} />
        <Field label="Name" name="name" error={s.error}>
          <input {...bind('name')} required maxLength={64} />
        </Field>
        <Field label="Type" name="project" error={s.error} hint={admin ? 'a project folder is shared by the project’s members' : 'project folders are made by administrators'}>
          <select {...bind('type')} onChange={bind('type').onInput}>
            <option value="user">user (mine)</option>
            {admin && <option value="project">project</option>}
          </select>
        </Field>
        {v.type === 'project' && (
          <div class="row">
            <Field label="Project" name="project" error={s.error}>
              <input {...bind('project')} required />
            </Field>
            <Field label="Members’ permission" name="permission" error={s.error}>
              <select {...bind('permission')} onChange={bind('permission').onInput}>
                <PermissionOptions />
              </select>
            </Field>
          </div>
        )}
        <div class="row">
          <Field label="Host" name="host" error={s.error} hint="empty: the server’s first storage host">
            <input {...bind('host')} />
          </Field>
          <Field label="Usage mode" name="usage_mode" error={s.error}>
            <select {...bind('usage_mode')} onChange={bind('usage_mode').onInput}>
              <option value="general">general</option>
              <option value="data">data</option>
              <option value="model">model</option>
            </select>
          </Field>
          <Field label="Quota" name="quota" error={s.error} hint="e.g. 500m, 10g; empty: the server’s default">
            <input {...bind('quota')} />
          </Field>
        </div>
        <label class="check">
          <input type="checkbox" checked={v.cloneable} onChange={(e) => setValues((x) => ({ ...x, cloneable: e.currentTarget.checked }))} /> cloneable
        </label>
        <div class="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={s.busy}>
            {s.busy ? 'Creating…' : 'Create'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function PermissionOptions() {
  return (
    <>
      <option value="ro">ro (read only)</option>
      <option value="rw">rw (read and write)</option>
      <option value="wd">wd (read, write and delete)</option>
    </>
  );
}

function RenameFolder({ folder, onClose, onDone }) {
  const [v, bind] = useForm({ name: folder.name });
  const s = useSubmit(async () => {
    onDone(await post(`/v1/vfolders/${encodeURIComponent(folder.id)}/rename`, { name: v.name }));
  });
  return (
    <Dialog title={`Rename “${folder.name}”`} onClose={onClose}>
      <form onSubmit={s.submit} class="form">
        <ErrorBox error={s.error} />
        <Field label="New name" name="name" error={s.error}>
          <input {...bind('name')} required maxLength={64} />
        </Field>
        <div class="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={s.busy}>
            Rename
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/**
 * ShareFolder shares a folder: a project folder with per-user permissions
 * (share, unshare: administrators), a user folder by inviting a user of its
 * domain (who accepts) and removing members.
 */
function ShareFolder({ folder, onClose, onDone }) {
  const id = encodeURIComponent(folder.id);
  const project = folder.ownership_type === 'project';
  const [pos, setPos] = useState(0);
  const wait = pos || undefined;
  const detail = useApi((signal) => get(`/v1/vfolders/${id}`, { wait_for_position: wait }, { signal }), [folder.id, pos]);
  const invited = useApi((signal) => get('/v1/vfolder-invitations', { direction: 'sent', state: 'pending', wait_for_position: wait }, { signal }), [folder.id, pos]);
  const [v, bind, setValues] = useForm({ email: '', permission: 'rw' });
  const [notice, setNotice] = useState('');
  /** changed shows what a command did and reads the folder again once the read models have it. */
  const changed = (res, msg) => {
    setNotice(msg);
    if (res && res.position) setPos((p) => Math.max(p, res.position));
    onDone(res);
  };
  const s = useSubmit(async () => {
    setNotice('');
    if (project) {
      const res = await post(`/v1/vfolders/${id}/share`, { email: v.email, permission: v.permission });
      changed(res, `${v.email} may now use it with ${v.permission}.`);
    } else {
      const res = await post(`/v1/vfolders/${id}/invitations`, { email: v.email, permission: v.permission });
      changed(res, `${v.email} is invited; the folder is shared once they accept.`);
    }
    setValues((x) => ({ ...x, email: '' }));
  });
  const users = (detail.data && detail.data.users) || [];
  const pending = ((invited.data && invited.data.items) || []).filter((i) => i.folder_id === folder.id);
  return (
    <Dialog title={`Share “${folder.name}”`} onClose={onClose}>
      <form onSubmit={s.submit} class="form">
        <ErrorBox error={s.error || detail.error} />
        {notice && (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
        <div class="row">
          <Field label="User’s e-mail address" name="email" error={s.error}>
            <input {...bind('email')} type="email" required />
          </Field>
          <Field label="Permission" name="permission" error={s.error}>
            <select {...bind('permission')} onChange={bind('permission').onInput}>
              <PermissionOptions />
            </select>
          </Field>
        </div>
        <div class="actions">
          <button type="button" onClick={onClose}>
            Close
          </button>
          <button type="submit" class="primary" disabled={s.busy}>
            {project ? 'Share' : 'Invite'}
          </button>
        </div>
      </form>
      <h3>{project ? 'Per-user permissions' : 'Members'}</h3>
      {detail.loading && !detail.data && <Loading />}
      {detail.data && !users.length && <Empty>{project ? 'No per-user permissions: members have the folder’s.' : 'Shared with nobody yet.'}</Empty>}
      {users.length > 0 && (
        <ul class="cards">
          {users.map((u) => (
            <li key={u.user_id} class="line">
              <code>{u.user_id}</code> <span>{u.permission}</span>
              <button type="button" onClick={() => removeUser(u)} aria-label={`${project ? 'Unshare' : 'Remove'} ${u.user_id}`}>
                {project ? 'Unshare' : 'Remove'}
              </button>
            </li>
          ))}
        </ul>
      )}
      {!project && pending.length > 0 && (
        <>
          <h3>Invited, not yet accepted</h3>
          <ul class="cards">
            {pending.map((i) => (
              <li key={i.id}>
                {i.email} <span>{i.permission}</span>
              </li>
            ))}
          </ul>
        </>
      )}
    </Dialog>
  );
  async function removeUser(u) {
    s.setError(null);
    setNotice('');
    try {
      const res = project ? await post(`/v1/vfolders/${id}/unshare`, { user_id: u.user_id }) : await post(`/v1/vfolders/${id}/leave`, { user_id: u.user_id });
      changed(res, 'Removed.');
    } catch (err) {
      s.setError(err);
    }
  }
}

/** DeleteForever asks for the folder's name before removing its data. */
function DeleteForever({ folder, onClose, onDone }) {
  const [typed, setTyped] = useState('');
  const s = useSubmit(async () => {
    onDone(await post(`/v1/vfolders/${encodeURIComponent(folder.id)}/delete-forever`));
  });
  return (
    <Dialog title={`Delete “${folder.name}” forever`} onClose={onClose}>
      <form onSubmit={s.submit} class="form">
        <ErrorBox error={s.error} />
        <p>
          The folder <strong>{folder.name}</strong> and all its files will be removed. This cannot be undone.
        </p>
        <Field label="Type the folder’s name to confirm" name="confirm">
          <input value={typed} onInput={(e) => setTyped(e.currentTarget.value)} autocomplete="off" />
        </Field>
        <div class="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="danger" disabled={s.busy || typed !== folder.name}>
            Delete forever
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** Invitations: the pending ones the caller received (accept, reject) and sent (cancel). */
function Invitations({ received, sent, act }) {
  const inv = (id, what) => act(() => post(`/v1/vfolder-invitations/${encodeURIComponent(id)}/${what}`));
  return (
    <>
      <h2>Invitations to me</h2>
      <ErrorBox error={received.error} />
      {received.data && !received.data.items.length && <Empty>No pending invitations.</Empty>}
      {received.data && received.data.items.length > 0 && (
        <ul class="cards">
          {received.data.items.map((i) => (
            <li key={i.id} class="line">
              <span>
                <strong>{i.folder_name}</strong> with {i.permission} · <Time at={i.created_at} />
              </span>
              <span class="buttons">
                <button type="button" class="primary" onClick={() => inv(i.id, 'accept')} aria-label={`Accept ${i.folder_name}`}>
                  Accept
                </button>
                <button type="button" onClick={() => inv(i.id, 'reject')} aria-label={`Reject ${i.folder_name}`}>
                  Reject
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      <h2>Invitations I sent</h2>
      <ErrorBox error={sent.error} />
      {sent.data && !sent.data.items.length && <Empty>No pending invitations.</Empty>}
      {sent.data && sent.data.items.length > 0 && (
        <ul class="cards">
          {sent.data.items.map((i) => (
            <li key={i.id} class="line">
              <span>
                <strong>{i.folder_name}</strong> to {i.email} with {i.permission} · <Time at={i.created_at} />
              </span>
              <button type="button" onClick={() => inv(i.id, 'cancel')} aria-label={`Cancel the invitation of ${i.email} to ${i.folder_name}`}>
                Cancel
              </button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
