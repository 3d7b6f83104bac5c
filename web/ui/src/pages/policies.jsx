// policies.jsx — Resource Policy (admins): the keypair resource policies
// (what a keypair's sessions may hold in total, how many may run or wait,
// idle timeout, lifetime); superadmins create and edit them.
import { useState } from 'preact/hooks';
import { get, patch, post } from '../api.js';
import { Dialog, Empty, ErrorBox, Field, Loading, Slots, Time, parseSlots, slotsText, useApi, useForm, useSubmit } from '../ui.jsx';

const seconds = (s) => (s ? `${s} s` : 'none');

export function PoliciesPage({ me }) {
  const list = useApi((signal) => get('/v1/keypair-policies', {}, { signal }), []);
  const [editing, setEditing] = useState(null);
  const admin = me.role === 'superadmin';
  return (
    <section>
      <div class="page-head">
        <h1>Resource Policy</h1>
        {admin && (
          <button type="button" class="primary" onClick={() => setEditing({})}>
            New policy
          </button>
        )}
      </div>
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && !list.data.items.length && <Empty>No keypair resource policy.</Empty>}
      {list.data && list.data.items.length > 0 && (
        <div class="table-wrap">
          <table class="list">
            <thead>
              <tr>
                <th>Name</th>
                <th>Total resources</th>
                <th>Other slots</th>
                <th>Sessions at once</th>
                <th>Pending at most</th>
                <th>Containers per session</th>
                <th>Idle timeout</th>
                <th>Lifetime</th>
                <th>Modified</th>
                {admin && <th>Actions</th>}
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((p) => (
                <tr key={p.name}>
                  <td>{p.name}</td>
                  <td>
                    <Slots slots={p.total_resource_slots} />
                  </td>
                  <td>{p.default_for_unspecified}</td>
                  <td>{p.max_concurrent_sessions || 'no limit'}</td>
                  <td>{p.max_pending_session_count || 'no limit'}</td>
                  <td>{p.max_containers_per_session || 'no limit'}</td>
                  <td>{seconds(p.idle_timeout)}</td>
                  <td>{seconds(p.max_session_lifetime)}</td>
                  <td>
                    <Time at={p.modified_at} />
                  </td>
                  {admin && (
                    <td>
                      <button type="button" onClick={() => setEditing(p)}>
                        Edit
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {editing && (
        <EditPolicy
          policy={editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            list.reload();
          }}
        />
      )}
    </section>
  );
}

function EditPolicy({ policy, onClose, onSaved }) {
  const isNew = !policy.name;
  const [v, bind] = useForm({
    name: policy.name || '',
    total: slotsText(policy.total_resource_slots),
    other: policy.default_for_unspecified || 'unlimited',
    sessions: String(policy.max_concurrent_sessions || 0),
    pending: String(policy.max_pending_session_count || 0),
    containers: String(policy.max_containers_per_session || 0),
    idle: String(policy.idle_timeout || 0),
    lifetime: String(policy.max_session_lifetime || 0),
  });
  const { error, busy, submit } = useSubmit(async () => {
    const spec = {
      total_resource_slots: parseSlots(v.total),
      default_for_unspecified: v.other,
      max_concurrent_sessions: Number(v.sessions),
      max_pending_session_count: Number(v.pending),
      max_containers_per_session: Number(v.containers),
      idle_timeout: Number(v.idle),
      max_session_lifetime: Number(v.lifetime),
    };
    if (isNew) await post('/v1/keypair-policies', { name: v.name, ...spec });
    else await patch(`/v1/keypair-policies/${encodeURIComponent(policy.name)}`, spec);
    onSaved();
  });
  return (
    <Dialog title={isNew ? 'New policy' : `Edit ${policy.name}`} onClose={onClose}>
      <form class="form" onSubmit={submit}>
        <ErrorBox error={error} />
        {isNew && (
          <Field label="Name" name="name" error={error}>
            <input {...bind('name')} required />
          </Field>
        )}
        <Field label="Total resources" name="total_resource_slots" error={error} hint="e.g. cpu=16, mem=64g, cuda.device=4">
          <input {...bind('total')} />
        </Field>
        <Field label="Slots not named above" name="default_for_unspecified" error={error}>
          <select {...bind('other')} onChange={bind('other').onInput}>
            <option value="unlimited">unlimited</option>
            <option value="limited">none allowed</option>
          </select>
        </Field>
        <div class="row">
          <Field label="Sessions at once" name="max_concurrent_sessions" error={error} hint="0: no limit">
            <input {...bind('sessions')} type="number" min="0" />
          </Field>
          <Field label="Pending at most" name="max_pending_session_count" error={error} hint="0: no limit">
            <input {...bind('pending')} type="number" min="0" />
          </Field>
          <Field label="Containers per session" name="max_containers_per_session" error={error} hint="0: no limit">
            <input {...bind('containers')} type="number" min="0" />
          </Field>
        </div>
        <div class="row">
          <Field label="Idle timeout (s)" name="idle_timeout" error={error} hint="0: none">
            <input {...bind('idle')} type="number" min="0" />
          </Field>
          <Field label="Lifetime (s)" name="max_session_lifetime" error={error} hint="0: none">
            <input {...bind('lifetime')} type="number" min="0" />
          </Field>
        </div>
        <div class="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Saving…' : 'Save'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
