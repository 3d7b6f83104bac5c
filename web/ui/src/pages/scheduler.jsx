// scheduler.jsx — Scheduler (superadmins and domain admins): the PENDING
// sessions in the order the scheduler considers them (GET
// /v1/scheduler/queue), each with its position, whether it could be placed
// now and the checks it fails, in the scheduler's words; cursor pages.
import { useState } from 'preact/hooks';
import { get } from '../api.js';
import { Link } from '../router.jsx';
import { Empty, ErrorBox, Loading, Pager, Slots, Time, useApi } from '../ui.jsx';

const PAGE = 50;

export function SchedulerPage() {
  const [group, setGroup] = useState('');
  const [filter, setFilter] = useState('');
  const [cursors, setCursors] = useState([]);
  const cursor = cursors[cursors.length - 1] || '';
  const q = useApi((signal) => get('/v1/scheduler/queue', { resource_group: filter, limit: PAGE, cursor }, { signal }), [filter, cursor]);
  const apply = (e) => {
    e.preventDefault();
    setFilter(group.trim());
    setCursors([]);
  };
  const x = q.data;
  return (
    <section>
      <div class="page-head">
        <h1>Scheduler</h1>
        <button type="button" onClick={q.reload} disabled={q.loading}>
          Refresh
        </button>
      </div>
      <form class="filters queue-filters" onSubmit={apply}>
        <label>
          Resource group <input name="resource_group" value={group} placeholder="all" onInput={(e) => setGroup(e.currentTarget.value)} />
        </label>
        <button type="submit" class="primary">
          Filter
        </button>
      </form>
      <ErrorBox error={q.error} />
      {q.loading && !x && <Loading />}
      {x && (
        <p class="muted queue-facts">
          {x.length} pending in the whole queue · order {x.order} · evaluated <Time at={x.evaluated_at} />
        </p>
      )}
      {x && !x.items.length && <Empty>No session is waiting{filter ? ` in resource group ${filter}` : ''}.</Empty>}
      {x && x.items.length > 0 && (
        <div class="table-wrap">
          <table class="list queue">
            <thead>
              <tr>
                <th>#</th>
                <th>Session</th>
                <th>Owner</th>
                <th>Domain / project</th>
                <th>Resource group</th>
                <th>Requested</th>
                <th>Waiting since</th>
                <th>Placeable now</th>
                <th>Why not</th>
              </tr>
            </thead>
            <tbody>
              {x.items.map((it) => (
                <tr key={it.session_id}>
                  <td>{it.position}</td>
                  <td>
                    <Link href={`/sessions/${encodeURIComponent(it.session_id)}`}>{it.name || it.session_id}</Link>
                  </td>
                  <td>
                    <code title={it.owner && it.owner.user_id}>{(it.owner && (it.owner.access_key || it.owner.user_id)) || '—'}</code>
                  </td>
                  <td>
                    {it.domain} / {it.project}
                  </td>
                  <td>{it.resource_group}</td>
                  <td>
                    <Slots slots={it.requested_slots} />
                  </td>
                  <td>
                    <Time at={it.created_at} />
                  </td>
                  <td class={it.placeable_now ? 'placeable yes' : 'placeable no'}>{it.placeable_now ? 'yes' : 'no'}</td>
                  <td class="checks">
                    {it.checks && it.checks.length > 0 ? (
                      <ul>
                        {it.checks.map((c, i) => (
                          <li key={i}>{c.message}</li>
                        ))}
                      </ul>
                    ) : (
                      <span class="muted">{it.reason || '—'}</span>
                    )}
                    {it.estimate && <div class="muted">{it.estimate}</div>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {x && <Pager cursors={cursors} next={x.next_cursor} onPage={setCursors} labels={['← Earlier', 'Later →']} />}
    </section>
  );
}
