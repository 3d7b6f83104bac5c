// dashboard.jsx — Dashboard: my sessions that run or wait, my use against
// each level of limits (keypair, user, project, domain), what the agents
// have free, and my recent sessions.
import { get } from '../api.js';
import { useLiveReload } from '../live.js';
import { Link } from '../router.jsx';
import { ACTIVE_STATUSES } from '../statuses.js';
import { Empty, ErrorBox, Loading, Meter, Status, Time, bytes, useApi } from '../ui.jsx';

const amount = (slot, v) => (slot === 'mem' || slot.endsWith('.mem') ? bytes(v) : v);

const scopeNames = { keypair: 'Keypair', user: 'User', project: 'Project', domain: 'Domain' };

/** sumSlots adds slot maps (amounts are decimal strings). */
function sumSlots(maps) {
  const out = {};
  for (const m of maps) for (const [k, v] of Object.entries(m || {})) out[k] = (out[k] || 0) + Number(v);
  return out;
}

export function DashboardPage() {
  const active = useApi((signal) => get('/v1/sessions', { status: ACTIVE_STATUSES, limit: 100 }, { signal }), []);
  const recent = useApi((signal) => get('/v1/sessions', { limit: 5 }, { signal }), []);
  const quotas = useApi((signal) => get('/v1/quotas/mine', {}, { signal }), []);
  const agents = useApi((signal) => get('/v1/agents', { status: 'alive' }, { signal }), []);
  useLiveReload(['session'], () => {
    active.reload();
    recent.reload();
    quotas.reload();
  });
  useLiveReload(['agent'], agents.reload);
  const running = active.data ? active.data.items.filter((s) => s.status === 'RUNNING').length : 0;
  const waiting = active.data ? active.data.items.filter((s) => s.status === 'PENDING').length : 0;
  const capacity = agents.data ? sumSlots(agents.data.items.map((a) => a.capacity)) : {};
  const free = agents.data ? sumSlots(agents.data.items.map((a) => a.free)) : {};
  return (
    <section>
      <h1>Dashboard</h1>
      <div class="tiles">
        <div class="tile">
          <span class="big">{active.data ? running : '…'}</span> running
        </div>
        <div class="tile">
          <span class="big">{active.data ? waiting : '…'}</span> waiting
        </div>
        <div class="tile">
          <span class="big">{agents.data ? agents.data.items.length : '…'}</span> agents alive
        </div>
      </div>
      <ErrorBox error={active.error} />

      <h2>My use against my limits</h2>
      <ErrorBox error={quotas.error} />
      {quotas.loading && !quotas.data && <Loading />}
      {quotas.data && (
        <div class="table-wrap">
          <table class="list">
            <thead>
              <tr>
                <th>Level</th>
                <th>Of</th>
                <th>Slot</th>
                <th>In use</th>
                <th>Limit</th>
                <th>Use</th>
                <th>Sessions</th>
              </tr>
            </thead>
            <tbody>
              {quotas.data.levels.flatMap((l) => {
                const slots = [...new Set([...Object.keys(l.limits), ...Object.keys(l.occupied)])].sort();
                const sessions = `${l.concurrent_sessions}${l.max_concurrent_sessions ? ` of ${l.max_concurrent_sessions}` : ''} running, ${l.pending_sessions}${l.max_pending_sessions ? ` of ${l.max_pending_sessions}` : ''} waiting`;
                if (!slots.length) {
                  return [
                    <tr key={l.scope}>
                      <td>{scopeNames[l.scope]}</td>
                      <td>{l.subject}</td>
                      <td colSpan={4} class="muted">
                        {l.others_limited ? 'nothing allowed' : 'no limit, nothing in use'}
                      </td>
                      <td>{sessions}</td>
                    </tr>,
                  ];
                }
                return slots.map((slot, i) => {
                  const limited = slot in l.limits || l.others_limited;
                  const lim = l.limits[slot] || 0;
                  const used = l.occupied[slot] || 0;
                  return (
                    <tr key={`${l.scope}-${slot}`}>
                      <td>{i === 0 ? scopeNames[l.scope] : ''}</td>
                      <td>{i === 0 ? l.subject : ''}</td>
                      <td>{slot}</td>
                      <td>{amount(slot, used)}</td>
                      <td>{limited ? amount(slot, lim) : <span class="muted">no limit</span>}</td>
                      <td>{limited ? <Meter used={used} total={lim} label={`${slot} of the ${l.scope} limit`} /> : ''}</td>
                      <td>{i === 0 ? sessions : ''}</td>
                    </tr>
                  );
                });
              })}
            </tbody>
          </table>
        </div>
      )}

      <h2>Free in the cluster</h2>
      <ErrorBox error={agents.error} />
      {agents.data && !agents.data.items.length && <Empty>No agent is alive: sessions wait until one joins.</Empty>}
      {agents.data && agents.data.items.length > 0 && (
        <div class="table-wrap">
          <table class="list">
            <thead>
              <tr>
                <th>Slot</th>
                <th>Free</th>
                <th>Capacity</th>
                <th>In use</th>
              </tr>
            </thead>
            <tbody>
              {Object.keys(capacity)
                .sort()
                .map((slot) => (
                  <tr key={slot}>
                    <td>{slot}</td>
                    <td>{amount(slot, free[slot] || 0)}</td>
                    <td>{amount(slot, capacity[slot])}</td>
                    <td>
                      <Meter used={capacity[slot] - (free[slot] || 0)} total={capacity[slot]} label={`${slot} in use`} />
                    </td>
                  </tr>
                ))}
            </tbody>
          </table>
        </div>
      )}
      <p class="muted">
        <Link href="/agents">Each agent's capacity and largest free block</Link>
      </p>

      <h2>Recent sessions</h2>
      <ErrorBox error={recent.error} />
      {recent.data && !recent.data.items.length && <Empty>No session yet.</Empty>}
      {recent.data && recent.data.items.length > 0 && (
        <ul class="cards">
          {recent.data.items.map((s) => (
            <li key={s.id}>
              <Link href={`/sessions/${s.id}`}>{s.name || s.id}</Link> <Status status={s.status} />
              <span class="muted">
                {' '}
                {s.image} · <Time at={s.created_at} />
                {s.status_reason ? ` · ${s.status_reason}` : ''}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
