// agents.jsx — Agent Summary: every agent, its state, and per resource slot
// what it has, what is in use, what is free and the largest block one
// kernel could get (a fragmented agent has free GPU shares spread over
// devices: its largest block is smaller than what is free); its devices.
import { get } from '../api.js';
import { useLiveReload } from '../live.js';
import { Empty, ErrorBox, Loading, Meter, Slots, Time, bytes, useApi } from '../ui.jsx';

const amount = (slot, v) => (slot === 'mem' || slot.endsWith('.mem') ? bytes(v) : v);

export function AgentsPage() {
  const list = useApi((signal) => get('/v1/agents', {}, { signal }), []);
  useLiveReload(['agent'], list.reload);
  return (
    <section>
      <div class="page-head">
        <h1>Agent Summary</h1>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && !list.data.items.length && <Empty>No agent has registered yet.</Empty>}
      {list.data &&
        list.data.items.map((a) => (
          <article class="agent" key={a.id}>
            <h2>
              {a.id} <span class={`status status-${a.status === 'alive' ? 'running' : 'error'}`}>{a.status}</span>
            </h2>
            <p class="muted">
              {a.architecture} · {a.allocations} allocation(s) · last seen <Time at={a.last_seen_at} />
              {a.lost_at && (
                <>
                  {' '}
                  · lost <Time at={a.lost_at} />
                </>
              )}
            </p>
            <div class="table-wrap">
              <table class="list">
                <thead>
                  <tr>
                    <th>Slot</th>
                    <th>Capacity</th>
                    <th>In use</th>
                    <th>Free</th>
                    <th>Largest block</th>
                    <th>Use</th>
                  </tr>
                </thead>
                <tbody>
                  {Object.keys(a.capacity || {})
                    .sort()
                    .map((slot) => (
                      <tr key={slot}>
                        <td>{slot}</td>
                        <td>{amount(slot, a.capacity[slot])}</td>
                        <td>{amount(slot, (a.occupied || {})[slot] || 0)}</td>
                        <td>{amount(slot, (a.free || {})[slot] || 0)}</td>
                        <td title="the most one kernel could get on this agent now">{amount(slot, (a.largest_free_block || {})[slot] || 0)}</td>
                        <td>
                          <Meter used={(a.occupied || {})[slot] || 0} total={a.capacity[slot]} label={`${slot} in use`} />
                        </td>
                      </tr>
                    ))}
                </tbody>
              </table>
            </div>
            {a.devices && a.devices.length > 0 && (
              <div class="table-wrap">
                <table class="list">
                  <thead>
                    <tr>
                      <th>Device</th>
                      <th>Kind</th>
                      <th>Model</th>
                      <th>Memory</th>
                      <th>In use</th>
                    </tr>
                  </thead>
                  <tbody>
                    {a.devices.map((d) => (
                      <tr key={d.id}>
                        <td>{d.id}</td>
                        <td>{d.kind}</td>
                        <td>{d.model || '—'}</td>
                        <td>{d.memory ? bytes(d.memory) : '—'}</td>
                        <td>{d.occupied}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            {a.free && (
              <p class="muted">
                Free: <Slots slots={a.free} />
              </p>
            )}
          </article>
        ))}
    </section>
  );
}
