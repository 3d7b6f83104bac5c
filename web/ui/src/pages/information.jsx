// information.jsx — Information (superadmins): the running server as
// GET /v1/system describes it: version, start time, the event store and its
// head, the bus, the leases this process holds, every read model's position
// and lag behind the head, and the data directory's free space.
import { get } from '../api.js';
import { ErrorBox, Loading, Time, bytes, useApi } from '../ui.jsx';

export function InformationPage() {
  const sys = useApi((signal) => get('/v1/system', undefined, { signal }), []);
  const s = sys.data;
  return (
    <section>
      <div class="page-head">
        <h1>Information</h1>
        <button type="button" onClick={sys.reload} disabled={sys.loading}>
          Refresh
        </button>
      </div>
      <ErrorBox error={sys.error} />
      {sys.loading && !s && <Loading />}
      {s && (
        <>
          <h2>Server</h2>
          <dl class="facts">
            <dt>Version</dt>
            <dd>{s.version}</dd>
            <dt>Go version</dt>
            <dd>{s.go_version}</dd>
            <dt>Started at</dt>
            <dd>
              <Time at={s.started_at} />
            </dd>
            <dt>Data directory free</dt>
            <dd>{s.data_dir_free_bytes < 0 ? <span class="muted">unknown</span> : bytes(s.data_dir_free_bytes)}</dd>
          </dl>
          <h2>Event store</h2>
          <dl class="facts">
            <dt>Backend</dt>
            <dd>{s.store?.backend}</dd>
            <dt>DSN</dt>
            <dd>
              <code>{s.store?.dsn || '—'}</code>
            </dd>
            <dt>Head position</dt>
            <dd>{s.store?.head}</dd>
          </dl>
          <h2>Bus</h2>
          <dl class="facts">
            <dt>Mode</dt>
            <dd>{s.bus?.mode}</dd>
            <dt>URL</dt>
            <dd>
              <code>{s.bus?.url || '—'}</code>
            </dd>
            <dt>Connected</dt>
            <dd class={s.bus?.connected ? 'good' : 'bad'}>{s.bus?.connected ? 'yes' : 'no'}</dd>
          </dl>
          <h2>Leases</h2>
          {!s.leases?.length ? (
            <p class="empty">No singleton leases.</p>
          ) : (
            <div class="table-wrap">
              <table class="list leases">
                <thead>
                  <tr>
                    <th>Name</th>
                    <th>Mechanism</th>
                    <th>Held here</th>
                    <th>Since</th>
                  </tr>
                </thead>
                <tbody>
                  {s.leases.map((l) => (
                    <tr key={l.name}>
                      <td>{l.name}</td>
                      <td>{l.mechanism}</td>
                      <td class={l.held_here ? 'good' : 'muted'}>{l.held_here ? 'yes' : 'no'}</td>
                      <td>
                        <Time at={l.since} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <h2>Read models</h2>
          {!s.read_models?.length ? (
            <p class="empty">No read models.</p>
          ) : (
            <div class="table-wrap">
              <table class="list read-models">
                <thead>
                  <tr>
                    <th>Read model</th>
                    <th>Position</th>
                    <th>Lag</th>
                    <th>State</th>
                  </tr>
                </thead>
                <tbody>
                  {s.read_models.map((m) => (
                    <tr key={m.name} class={m.lag > 0 ? 'lagging' : undefined}>
                      <td>{m.name}</td>
                      <td>{m.position}</td>
                      <td class={m.lag > 0 ? 'bad' : undefined}>{m.lag > 0 ? `${m.lag} behind` : '0'}</td>
                      <td>
                        {m.rebuilding && <span class="status job-running">rebuilding</span>}
                        {m.paused && <span class="bad">paused: {m.paused}</span>}
                        {!m.rebuilding && !m.paused && <span class="muted">live</span>}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}
