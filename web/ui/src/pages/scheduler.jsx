// scheduler.jsx — Scheduler (superadmins and domain admins): the PENDING
// sessions in the order the scheduler considers them (GET
// /v1/scheduler/queue), each with its position, whether it could be placed
// now and the checks it fails, in the scheduler's words; cursor pages;
// read again when a session or an agent changes (live updates).
import { useEffect, useState } from 'preact/hooks';
import { get } from '../api.js';
import { useLiveReload } from '../live.js';
import { Link } from '../router.jsx';
import { Empty, ErrorBox, Loading, Pager, Slots, Time, useApi } from '../ui.jsx';

const PAGE = 50;

/**
 * useOwnerEmails reads the e-mail address of each owner on the page (GET
 * /v1/users/{id}, once per user). An owner the caller may not read keeps
 * showing as its id: the queue itself is the page's data, and its error
 * is the one shown.
 */
function useOwnerEmails(queue) {
  const [emails, setEmails] = useState({});
  useEffect(() => {
    if (!queue) return undefined;
    const ctl = new AbortController();
    const ids = [...new Set(queue.items.map((it) => it.owner && it.owner.user_id).filter((id) => id && !(id in emails)))];
    Promise.allSettled(ids.map((id) => get(`/v1/users/${encodeURIComponent(id)}`, {}, { signal: ctl.signal }))).then((res) => {
      if (ctl.signal.aborted) return;
      const found = {};
      res.forEach((r, i) => r.status === 'fulfilled' && r.value && r.value.email && (found[ids[i]] = r.value.email));
      if (Object.keys(found).length) setEmails((e) => ({ ...e, ...found }));
    });
    return () => ctl.abort();
  }, [queue]);
  return emails;
}

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
  // A session or an agent that changes changes the queue: read it again (a burst is one read).
  useLiveReload(['session', 'agent'], q.reload);
  const x = q.data;
  const emails = useOwnerEmails(x);
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
        <p class="muted queue-summary">
          {x.length} pending in the whole queue · order {x.order} · evaluated <Time at={x.evaluated_at} />
        </p>
      )}
      {x && !x.items.length && <Empty>No session is waiting{filter ? ` in resource group ${filter}` : ''}.</Empty>}
      {x && x.items.length > 0 && (
        <ol class="queue">
          {x.items.map((it) => (
            <li key={it.session_id} class="queue-item">
              <div class="queue-head">
                <span class="position" title="position in the queue">
                  {it.position}
                </span>
                <Link href={`/sessions/${encodeURIComponent(it.session_id)}`}>{it.name || it.session_id}</Link>
                <span class={it.placeable_now ? 'placeable yes' : 'placeable no'}>{it.placeable_now ? 'placeable now' : 'not placeable now'}</span>
              </div>
              <dl class="queue-facts">
                <dt>Owner</dt>
                <dd>
                  {(it.owner && emails[it.owner.user_id]) || (it.owner && it.owner.user_id) || '—'} <span class="muted">keypair</span> <code>{(it.owner && it.owner.access_key) || '—'}</code>
                </dd>
                <dt>Domain / project</dt>
                <dd>
                  {it.domain} / {it.project}
                </dd>
                <dt>Resource group</dt>
                <dd>{it.resource_group}</dd>
                <dt>Requested per kernel</dt>
                <dd>
                  <Slots slots={it.requested_slots} />
                </dd>
                <dt>Waiting since</dt>
                <dd>
                  <Time at={it.created_at} />
                </dd>
                {it.estimate && (
                  <>
                    <dt>Estimated start</dt>
                    <dd>{it.estimated_start ? <Time at={it.estimated_start} /> : null} {it.estimate}</dd>
                  </>
                )}
              </dl>
              {it.checks && it.checks.length > 0 ? (
                <div class="checks">
                  <strong>Why it is not placed</strong>
                  <ul>
                    {it.checks.map((c, i) => (
                      <li key={i}>{c.message}</li>
                    ))}
                  </ul>
                </div>
              ) : (
                it.reason && <p class="muted">{it.reason}</p>
              )}
            </li>
          ))}
        </ol>
      )}
      {x && <Pager cursors={cursors} next={x.next_cursor} onPage={setCursors} labels={['← Earlier', 'Later →']} />}
    </section>
  );
}
