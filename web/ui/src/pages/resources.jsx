// resources.jsx — Resources (admins): the resource groups, how each one
// schedules, and who may use it; superadmins grant and revoke access.
import { useState } from 'preact/hooks';
import { del, get, post } from '../api.js';
import { Dialog, Empty, ErrorBox, Field, Loading, Time, useApi, useForm } from '../ui.jsx';

export function ResourcesPage({ me }) {
  const list = useApi((signal) => get('/v1/resource-groups', {}, { signal }), []);
  const [granting, setGranting] = useState(null);
  const [error, setError] = useState(null);
  const admin = me.role === 'superadmin';
  const revoke = async (group, g) => {
    setError(null);
    try {
      await del(`/v1/resource-groups/${encodeURIComponent(group)}/access?kind=${encodeURIComponent(g.kind)}&name=${encodeURIComponent(g.name)}`);
      list.reload();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section>
      <h1>Resources</h1>
      <ErrorBox error={error || list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && !list.data.items.length && <Empty>No resource group.</Empty>}
      {list.data &&
        list.data.items.map((rg) => (
          <article class="agent" key={rg.name}>
            <h2>
              {rg.name} {!rg.is_active && <span class="status status-error">inactive</span>}
            </h2>
            {rg.description && <p>{rg.description}</p>}
            <dl class="facts">
              <dt>Scheduling order</dt>
              <dd>{rg.scheduler}</dd>
              <dt>Agent selection</dt>
              <dd>{rg.agent_selector}</dd>
              <dt>Session types</dt>
              <dd>{(rg.allowed_session_types || []).join(', ')}</dd>
              <dt>Pending timeout</dt>
              <dd>{rg.pending_timeout ? `${rg.pending_timeout} s` : 'never'}</dd>
              <dt>Listed to its users</dt>
              <dd>{rg.is_public ? 'yes' : 'no (used when named)'}</dd>
              <dt>Modified</dt>
              <dd>
                <Time at={rg.modified_at} />
              </dd>
            </dl>
            <h3>Who may use it</h3>
            {!(rg.access || []).length && <p class="muted">Nobody has been granted access.</p>}
            <ul class="grants">
              {(rg.access || []).map((g) => (
                <li key={`${g.kind}:${g.name}`}>
                  {g.kind} <strong>{g.name}</strong>{' '}
                  {admin && (
                    <button type="button" class="danger" onClick={() => revoke(rg.name, g)}>
                      Revoke
                    </button>
                  )}
                </li>
              ))}
            </ul>
            {admin && (
              <button type="button" onClick={() => setGranting(rg.name)}>
                Grant access
              </button>
            )}
          </article>
        ))}
      {granting && (
        <Grant
          group={granting}
          onClose={() => setGranting(null)}
          onDone={() => {
            setGranting(null);
            list.reload();
          }}
        />
      )}
    </section>
  );
}

function Grant({ group, onClose, onDone }) {
  const [v, bind] = useForm({ kind: 'domain', name: '' });
  const [error, setError] = useState(null);
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    try {
      await post(`/v1/resource-groups/${encodeURIComponent(group)}/access`, v);
      onDone();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <Dialog title={`Grant access to ${group}`} onClose={onClose}>
      <form class="form" onSubmit={submit}>
        <ErrorBox error={error} />
        <Field label="Kind" name="kind" error={error}>
          <select {...bind('kind')} onChange={bind('kind').onInput}>
            <option value="domain">domain</option>
            <option value="project">project (domain/name)</option>
            <option value="keypair">keypair (access key)</option>
          </select>
        </Field>
        <Field label="Grantee" name="name" error={error}>
          <input {...bind('name')} required />
        </Field>
        <div class="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary">
            Grant
          </button>
        </div>
      </form>
    </Dialog>
  );
}
