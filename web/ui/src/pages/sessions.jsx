// sessions.jsx — the Sessions page: the caller's sessions (an admin's: the
// domain's), newest first, a page at a time from the server (cursor
// pagination), filtered by status; and the dialog that creates one.
import { useState } from 'preact/hooks';
import { get, post } from '../api.js';
import { useLiveReload } from '../live.js';
import { Link, navigate, queryParam } from '../router.jsx';
import { STATUSES } from '../statuses.js';
import { Dialog, Empty, ErrorBox, Field, Loading, Pager, Slots, Status, Time, useApi, useForm } from '../ui.jsx';

const PAGE = 50;

export function SessionsPage({ loc }) {
  const [status, setStatus] = useState('');
  const [cursors, setCursors] = useState([]);
  const creating = queryParam(loc, 'new') === '1';
  const cursor = cursors[cursors.length - 1] || '';
  const list = useApi((signal) => get('/v1/sessions', { status, limit: PAGE, cursor }, { signal }), [status, cursor]);
  useLiveReload(['session'], list.reload);
  return (
    <section>
      <div class="page-head">
        <h1>Sessions</h1>
        <button type="button" class="primary" onClick={() => navigate('/sessions?new=1')}>
          New session
        </button>
      </div>
      <div class="filters">
        <label>
          Status{' '}
          <select
            name="status"
            value={status}
            onChange={(e) => {
              setStatus(e.currentTarget.value);
              setCursors([]);
            }}
          >
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && !list.data.items.length && <Empty>No sessions{status ? ` in status ${status}` : ''}.</Empty>}
      {list.data && list.data.items.length > 0 && (
        <div class="table-wrap">
          <table class="list">
            <thead>
              <tr>
                <th>Name</th>
                <th>Status</th>
                <th>Image</th>
                <th>Resources (per kernel)</th>
                <th>Owner (access key)</th>
                <th>Created</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((s) => (
                <tr key={s.id}>
                  <td>
                    <Link href={`/sessions/${s.id}`}>{s.name || s.id}</Link>
                  </td>
                  <td>
                    <Status status={s.status} />
                  </td>
                  <td>{s.image}</td>
                  <td>
                    <Slots slots={s.requested_slots} />
                  </td>
                  <td>{s.owner && s.owner.access_key}</td>
                  <td>
                    <Time at={s.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.data && <Pager cursors={cursors} next={list.data.next_cursor} onPage={setCursors} />}
      {creating && <CreateSession onClose={() => navigate('/sessions')} />}
    </section>
  );
}

function CreateSession({ onClose }) {
  const images = useApi((signal) => get('/v1/images', {}, { signal }), []);
  const [v, bind] = useForm({ name: '', image: '', type: 'interactive', cpu: '1', mem: '256m', gpus: '', shares: '', command: '', cluster_size: '1', env: '', mounts: '' });
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    const resources = { cpu: v.cpu, mem: v.mem };
    if (v.gpus) resources['cuda.device'] = v.gpus;
    if (v.shares) resources['cuda.shares'] = v.shares;
    const env = {};
    for (const line of v.env.split('\n')) {
      const i = line.indexOf('=');
      if (i > 0) env[line.slice(0, i).trim()] = line.slice(i + 1);
    }
    const mounts = v.mounts
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean)
      .map((m) => {
        const [name, permission] = m.split(':');
        return permission ? { name, permission } : { name };
      });
    const body = { image: v.image || (images.data && images.data.items[0] && images.data.items[0].reference), type: v.type, resources, cluster_size: Number(v.cluster_size) || 1 };
    if (v.name) body.name = v.name;
    if (v.command) body.command = v.command;
    if (Object.keys(env).length) body.env = env;
    if (mounts.length) body.mounts = mounts;
    setBusy(true);
    try {
      const res = await post('/v1/sessions', body);
      navigate(`/sessions/${res.id}`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title="New session" onClose={onClose}>
      <form onSubmit={submit} class="form">
        <ErrorBox error={error || images.error} />
        <Field label="Name" name="name" error={error} hint="optional">
          <input {...bind('name')} />
        </Field>
        <Field label="Image" name="image" error={error}>
          <select {...bind('image')} onChange={bind('image').onInput}>
            {images.data &&
              images.data.items.map((i) => (
                <option key={i.id} value={i.reference}>
                  {i.reference} ({i.architecture})
                </option>
              ))}
          </select>
        </Field>
        <Field label="Type" name="type" error={error}>
          <select {...bind('type')} onChange={bind('type').onInput}>
            <option value="interactive">interactive</option>
            <option value="batch">batch</option>
          </select>
        </Field>
        <div class="row">
          <Field label="CPU cores" name="resources" error={error}>
            <input {...bind('cpu')} inputMode="decimal" />
          </Field>
          <Field label="Memory" name="resources" error={error} hint="e.g. 512m, 4g">
            <input {...bind('mem')} />
          </Field>
          <Field label="GPUs" name="resources" error={error} hint="whole devices">
            <input {...bind('gpus')} inputMode="numeric" />
          </Field>
          <Field label="GPU shares" name="resources" error={error} hint="fractions, e.g. 0.5">
            <input {...bind('shares')} inputMode="decimal" />
          </Field>
        </div>
        <Field label="Command" name="command" error={error} hint="required for batch sessions">
          <input {...bind('command')} />
        </Field>
        <Field label="Cluster size" name="cluster_size" error={error}>
          <input {...bind('cluster_size')} type="number" min="1" />
        </Field>
        <Field label="Environment" name="env" error={error} hint="one NAME=value per line">
          <textarea {...bind('env')} rows={3} />
        </Field>
        <Field label="Folders" name="mounts" error={error} hint="names separated by commas; name:ro for read-only">
          <input {...bind('mounts')} />
        </Field>
        <div class="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
