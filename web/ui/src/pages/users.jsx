// users.jsx — Users (admins): the users an admin may see (a domain admin:
// the domain's), and the dialog that creates one.
import { useState } from 'preact/hooks';
import { get, post } from '../api.js';
import { Dialog, Empty, ErrorBox, Field, Loading, Time, useApi, useForm, useSubmit } from '../ui.jsx';

export function UsersPage({ me }) {
  const [creating, setCreating] = useState(false);
  const list = useApi((signal) => get('/v1/users', {}, { signal }), []);
  return (
    <section>
      <div class="page-head">
        <h1>Users</h1>
        {list.data && (
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            New user
          </button>
        )}
      </div>
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && !list.data.items.length && <Empty>No users.</Empty>}
      {list.data && list.data.items.length > 0 && (
        <div class="table-wrap">
          <table class="list">
            <thead>
              <tr>
                <th>E-mail</th>
                <th>Name</th>
                <th>Role</th>
                <th>Domain</th>
                <th>Status</th>
                <th>Created</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((u) => (
                <tr key={u.id}>
                  <td>{u.email}</td>
                  <td>{u.full_name || u.username}</td>
                  <td>{u.role}</td>
                  <td>{u.domain}</td>
                  <td>{u.status}</td>
                  <td>
                    <Time at={u.created_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {creating && (
        <CreateUser
          me={me}
          onClose={() => setCreating(false)}
          onCreated={() => {
            setCreating(false);
            list.reload();
          }}
        />
      )}
    </section>
  );
}

function CreateUser({ me, onClose, onCreated }) {
  const [v, bind] = useForm({ email: '', password: '', full_name: '', role: 'user', domain: me.domain });
  const { error, busy, submit } = useSubmit(async () => {
    await post('/v1/users', v);
    onCreated();
  });
  return (
    <Dialog title="New user" onClose={onClose}>
      <form onSubmit={submit} class="form">
        <ErrorBox error={error} />
        <Field label="E-mail address" name="email" error={error}>
          <input {...bind('email')} type="email" required />
        </Field>
        <Field label="Password" name="password" error={error}>
          <input {...bind('password')} type="password" autocomplete="new-password" required />
        </Field>
        <Field label="Full name" name="full_name" error={error}>
          <input {...bind('full_name')} />
        </Field>
        <Field label="Role" name="role" error={error}>
          <select {...bind('role')} onChange={bind('role').onInput}>
            <option value="user">user</option>
            <option value="monitor">monitor</option>
            <option value="domain-auditor">domain-auditor (reads the domain's audit records)</option>
            <option value="admin">admin (of the domain)</option>
            {me.role === 'superadmin' && <option value="auditor">auditor (reads every domain's audit trail)</option>}
            {me.role === 'superadmin' && <option value="superadmin">superadmin</option>}
          </select>
        </Field>
        <Field label="Domain" name="domain" error={error}>
          <input {...bind('domain')} readOnly={me.role !== 'superadmin'} />
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
