// settings.jsx — Configurations (superadmins): the settings an admin may
// change while Cairn runs, each change an event, shown with who made it
// and when, and the history of changes.
import { useState } from 'preact/hooks';
import { get, patch } from '../api.js';
import { Empty, ErrorBox, Loading, Pager, Time, bytes, useApi } from '../ui.jsx';

/** show writes a setting's value for people: bytes and seconds readably. */
function show(kind, v) {
  if (v === null || v === undefined || v === '') return kind === 'name' ? '(none)' : '0';
  if (kind === 'bytes') return `${bytes(v)} (${v} bytes)`;
  if (kind === 'seconds') return `${v} s`;
  return String(v);
}

export function SettingsPage() {
  const list = useApi((signal) => get('/v1/settings', {}, { signal }), []);
  const [cursors, setCursors] = useState([]);
  const cursor = cursors[cursors.length - 1] || '';
  const history = useApi((signal) => get('/v1/settings/history', { limit: 20, cursor }, { signal }), [cursor]);
  const [draft, setDraft] = useState({});
  const [error, setError] = useState(null);
  const [saved, setSaved] = useState('');
  const [busy, setBusy] = useState(false);
  const save = async (e) => {
    e.preventDefault();
    setError(null);
    setSaved('');
    const body = {};
    for (const s of list.data.items) {
      if (!(s.key in draft)) continue;
      const raw = draft[s.key].trim();
      body[s.key] = s.kind === 'name' ? raw : Number(raw);
    }
    if (!Object.keys(body).length) return;
    setBusy(true);
    try {
      await patch('/v1/settings', body);
      setDraft({});
      setSaved(`Saved ${Object.keys(body).join(', ')}.`);
      list.reload();
      setCursors([]);
      history.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section>
      <h1>Configurations</h1>
      <p class="muted">Settings that apply while Cairn runs, without a restart. A value set here wins over the flag that seeded its default.</p>
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && (
        <form onSubmit={save} class="form">
          <ErrorBox error={error} />
          {error && error.problem && Array.isArray(error.problem.errors) && (
            <ul class="error-list">
              {error.problem.errors.map((x, i) => (
                <li key={i}>
                  {x.field}: {x.detail || x.message}
                </li>
              ))}
            </ul>
          )}
          {saved && (
            <p class="notice" role="status">
              {saved}
            </p>
          )}
          <div class="table-wrap">
            <table class="list settings">
              <thead>
                <tr>
                  <th>Setting</th>
                  <th>Value</th>
                  <th>Default</th>
                  <th>Changed</th>
                  <th>New value</th>
                </tr>
              </thead>
              <tbody>
                {list.data.items.map((s) => (
                  <tr key={s.key}>
                    <td class="wrap">
                      <code>{s.key}</code>
                      <br />
                      <small class="muted">{s.description}</small>
                    </td>
                    <td>{show(s.kind, s.value)}</td>
                    <td>
                      {show(s.kind, s.default)}
                      {s.flag && <small class="muted"> ({s.flag})</small>}
                    </td>
                    <td>
                      {s.changed_at ? (
                        <>
                          <Time at={s.changed_at} /> <small class="muted">by {s.changed_by}</small>
                        </>
                      ) : (
                        <span class="muted">never</span>
                      )}
                    </td>
                    <td>
                      <input
                        aria-label={`New value of ${s.key}`}
                        inputMode={s.kind === 'name' ? 'text' : 'numeric'}
                        value={draft[s.key] ?? ''}
                        placeholder={String(s.value ?? '')}
                        onInput={(e) => {
                          const v = e.currentTarget.value;
                          setDraft((d) => ({ ...d, [s.key]: v }));
                        }}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="actions">
            <button type="submit" class="primary" disabled={busy || !Object.keys(draft).length}>
              {busy ? 'Saving…' : 'Save changes'}
            </button>
          </div>
        </form>
      )}
      <h2>History</h2>
      <ErrorBox error={history.error} />
      {history.data && !history.data.items.length && <Empty>No setting has been changed.</Empty>}
      {history.data && history.data.items.length > 0 && (
        <div class="table-wrap">
          <table class="list">
            <thead>
              <tr>
                <th>When</th>
                <th>Setting</th>
                <th>From</th>
                <th>To</th>
                <th>By</th>
              </tr>
            </thead>
            <tbody>
              {history.data.items.map((h) => (
                <tr key={h.position}>
                  <td>
                    <Time at={h.at} />
                  </td>
                  <td>
                    <code>{h.key}</code>
                  </td>
                  <td>{String(h.old ?? '')}</td>
                  <td>{String(h.new ?? '')}</td>
                  <td>{h.actor}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {history.data && <Pager cursors={cursors} next={history.data.next_cursor} onPage={setCursors} />}
    </section>
  );
}
