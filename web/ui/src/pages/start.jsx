// start.jsx — the start page: who you are, your running and pending sessions.
import { get } from '../api.js';
import { useLiveReload } from '../live.js';
import { Link } from '../router.jsx';
import { ACTIVE_STATUSES } from '../statuses.js';
import { Empty, ErrorBox, Loading, Status, Time, useApi } from '../ui.jsx';

export function StartPage({ me }) {
  const active = useApi((signal) => get('/v1/sessions', { status: ACTIVE_STATUSES, limit: 10 }, { signal }), []);
  useLiveReload(['session'], active.reload);
  return (
    <section>
      <h1>Welcome, {me.email}</h1>
      <p class="muted">
        Role {me.role} in domain {me.domain}
        {me.projects && me.projects.length ? `, projects ${me.projects.join(', ')}` : ''}.
      </p>
      <h2>My active sessions</h2>
      {active.loading && <Loading />}
      <ErrorBox error={active.error} />
      {active.data && !active.data.items.length && (
        <Empty>
          No session is running or waiting. <Link href="/sessions?new=1">Start one.</Link>
        </Empty>
      )}
      {active.data && active.data.items.length > 0 && (
        <ul class="cards">
          {active.data.items.map((s) => (
            <li key={s.id}>
              <Link href={`/sessions/${s.id}`}>{s.name || s.id}</Link> <Status status={s.status} />
              <span class="muted">
                {' '}
                {s.image} · since <Time at={s.created_at} />
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
