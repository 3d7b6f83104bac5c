// session.jsx — one session: its state (following it while it changes),
// why it waits, its apps (the terminal, the service ports), its kernels and
// agents, its logs; terminate.
import { useEffect, useState } from 'preact/hooks';
import { del, get, post, request } from '../api.js';
import { useLiveReload } from '../live.js';
import { limitsText } from '../limits.js';
import { STARTING_STATUSES, ended } from '../statuses.js';
import { ErrorBox, Loading, Slots, Status, Time, useApi } from '../ui.jsx';

export function SessionPage({ params }) {
  const id = params.id;
  const s = useApi((signal) => get(`/v1/sessions/${encodeURIComponent(id)}`, {}, { signal }), [id]);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  // The page follows the session: every change of it (a live event) is
  // read again, with its explanation and timeline.
  const [tick, setTick] = useState(0);
  useLiveReload(
    ['session'],
    () => {
      s.reload();
      setTick((t) => t + 1);
    },
    id,
  );

  if (s.loading && !s.data) return <Loading />;
  if (!s.data) return <ErrorBox error={s.error} />;
  const x = s.data;
  const terminate = async () => {
    setBusy(true);
    setError(null);
    try {
      await del(`/v1/sessions/${encodeURIComponent(id)}`);
      s.reload();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section>
      <div class="page-head">
        <h1>{x.name || x.id}</h1>
        <Status status={x.status} />
        {!ended(x.status) && x.status !== 'TERMINATING' && (
          <button type="button" class="danger" disabled={busy} onClick={terminate}>
            Terminate
          </button>
        )}
      </div>
      <ErrorBox error={error || s.error} />
      {x.status_reason && (
        <p>
          Reason: <code>{x.status_reason}</code> {x.status_message}
        </p>
      )}
      {x.status === 'PENDING' && <Pending id={id} tick={tick} />}
      {STARTING_STATUSES.includes(x.status) && <Startup status={x.status} kernels={x.kernels} />}
      {x.status === 'RUNNING' && <Apps id={id} kernel={x.kernels.find((k) => k.role === 'main') || x.kernels[0]} />}
      <Limits idle={x.idle} lifetime={x.lifetime} />
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <code>{x.id}</code>
        </dd>
        <dt>Image</dt>
        <dd>{x.image}</dd>
        <dt>Type</dt>
        <dd>{x.type}</dd>
        <dt>Domain / project</dt>
        <dd>
          {x.domain} / {x.project}
        </dd>
        <dt>Resource group</dt>
        <dd>{x.resource_group}</dd>
        <dt>Resources per kernel</dt>
        <dd>
          <Slots slots={x.requested_slots} />
        </dd>
        <dt>Created</dt>
        <dd>
          <Time at={x.created_at} />
        </dd>
        <dt>Started</dt>
        <dd>
          <Time at={x.started_at} />
        </dd>
        <dt>Terminated</dt>
        <dd>
          <Time at={x.terminated_at} />
        </dd>
        {x.exit_code !== undefined && (
          <>
            <dt>Exit code</dt>
            <dd>{x.exit_code}</dd>
          </>
        )}
      </dl>
      <h2>Kernels</h2>
      <div class="table-wrap">
        <table class="list">
          <thead>
            <tr>
              <th>#</th>
              <th>Role</th>
              <th>Status</th>
              <th>Agent</th>
              <th>Devices</th>
            </tr>
          </thead>
          <tbody>
            {x.kernels.map((k) => (
              <tr key={k.id}>
                <td>{k.index}</td>
                <td>{k.role}</td>
                <td>
                  <Status status={k.status} />
                </td>
                <td>{k.agent_id || '—'}</td>
                <td>{(k.devices || []).map((d) => `${d.device_id} ×${d.amount}`).join(', ') || '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Logs id={id} placed={x.kernels.some((k) => k.agent_id)} />
      <Timeline id={id} tick={tick} />
    </section>
  );
}

// Startup shows where a starting session is: its phase among the startup
// phases, and while an image is pulled, how far each pulling kernel is
// (layers and bytes of the totals its agent knows so far). The page
// follows the session, so it moves as the agent reports.
function Startup({ status, kernels }) {
  const step = STARTING_STATUSES.indexOf(status);
  const pulling = kernels.filter((k) => k.status === 'PULLING');
  return (
    <div class="startup" role="status" aria-label="Startup">
      <ol class="phases">
        {STARTING_STATUSES.map((p, i) => (
          <li key={p} class={i < step ? 'done' : i === step ? 'current' : ''} aria-current={i === step ? 'step' : undefined}>
            {phaseNames[p]}
          </li>
        ))}
      </ol>
      {pulling.map((k) => (
        <p key={k.id} class="progress pull">
          Pulling the image{kernels.length > 1 ? ` (kernel ${k.index})` : ''}:{' '}
          {k.pull_progress ? (
            <>
              <progress max="100" value={k.pull_progress.percent} aria-label="Image pull" /> {k.pull_progress.percent}%{' '}
              <span class="muted">
                {mib(k.pull_progress.bytes_done)} of {mib(k.pull_progress.bytes_total)} MiB, layers {k.pull_progress.layers_done} of{' '}
                {k.pull_progress.layers_total}
              </span>
            </>
          ) : (
            <span class="muted">waiting for the registry</span>
          )}
        </p>
      ))}
    </div>
  );
}

const phaseNames = {
  SCHEDULED: 'Placed',
  PREPARING: 'Preparing',
  PULLING: 'Pulling the image',
  PREPARED: 'Prepared',
  CREATING: 'Creating the container',
};

const mib = (bytes) => (bytes / (1 << 20)).toFixed(1);

// Apps lists what the running session offers a browser: its terminal and
// the service ports of its main kernel (an image's apps and the ports the
// session pre-opened). Opening one asks the API for a link to the app
// proxy (POST /v1/sessions/{id}/apps/{app}: a one-use ticket, a minute
// long) and opens it in a new tab. The tab is opened in the click itself,
// before the request (a popup blocker allows only that), then pointed at
// the link, without a way back to this page (opener = null). A tcp port is
// not a web app: it is listed with the host port the agent published it
// on. A web app's button is enabled once its agent found it answering
// (ready); until then it says the app is starting.
function Apps({ id, kernel }) {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState('');
  const [blocked, setBlocked] = useState(null); // {app, url} when the browser refused the tab
  const ports = (kernel && kernel.service_ports) || [];
  const open = async (app) => {
    const tab = window.open('', '_blank');
    setBusy(app);
    setError(null);
    setBlocked(null);
    try {
      const r = await post(`/v1/sessions/${encodeURIComponent(id)}/apps/${encodeURIComponent(app)}`);
      if (tab) {
        tab.opener = null;
        tab.location.href = r.url;
      } else {
        setBlocked({ app, url: r.url });
      }
    } catch (e) {
      tab?.close();
      setError(e);
    } finally {
      setBusy('');
    }
  };
  const button = (app, label, ready = true) => (
    <button type="button" disabled={busy === app || !ready} onClick={() => open(app)}>
      {label}
    </button>
  );
  return (
    <>
      <h2>Apps</h2>
      <ErrorBox error={error} />
      {blocked && (
        <p role="status">
          The browser did not open a tab:{' '}
          <a href={blocked.url} target="_blank" rel="noopener noreferrer">
            open {blocked.app}
          </a>{' '}
          <span class="muted">(the link works once, for a minute)</span>
        </p>
      )}
      <ul class="apps">
        <li>
          {button('terminal', 'Terminal')} <span class="muted">a shell in the container</span>
        </li>
        {ports.map((p) => (
          <li key={p.name}>
            {p.protocol === 'tcp' ? (
              <>
                <span class="app-name">{p.name}</span> <span class="muted">
                  tcp, not a web app: published on 127.0.0.1:{p.host_port} of agent {kernel.agent_id}
                </span>
              </>
            ) : (
              <>
                {button(p.name, p.name, p.ready)}{' '}
                <span class="muted">
                  {p.protocol}, container port {p.container_port}
                  {p.ready ? '' : ': starting, not answering yet'}
                </span>
              </>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}

// Limits says how long the session has been unused and when it ends
// (its idle and lifetime limits), updated every half minute.
function Limits({ idle, lifetime }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 30000);
    return () => clearInterval(t);
  }, []);
  const text = limitsText(idle, lifetime, now);
  return text ? <p class="limits">{text}</p> : null;
}

// Logs follows the main kernel's log live (GET .../logs?follow=true, a
// stream of its bytes as the container writes them). The page keeps the
// byte offset it has reached: when a stream ends before the log is complete
// (the server ends streams at shutdown; the network drops), it asks again
// from that offset, so no byte is missed or shown twice and the text is
// exactly the download's.
function Logs({ id, placed }) {
  const [text, setText] = useState(null);
  const [error, setError] = useState(null);
  const [done, setDone] = useState(false);
  const url = `/v1/sessions/${encodeURIComponent(id)}/logs`;
  useEffect(() => {
    if (!placed) return undefined;
    const ctl = new AbortController();
    const decoder = new TextDecoder();
    let acc = '';
    let offset = 0;
    let frame = 0;
    const show = () => {
      if (!frame) {
        frame = requestAnimationFrame(() => {
          frame = 0;
          setText(acc);
        });
      }
    };
    (async () => {
      for (let attempt = 0; !ctl.signal.aborted; attempt++) {
        const res = await request('GET', url, { query: { follow: 'true', offset }, raw: true, signal: ctl.signal, headers: { Accept: 'text/plain' } });
        const start = Number(res.headers.get('Cairn-Log-Start') || offset);
        if (start > offset) {
          acc += `[… ${start - offset} earlier bytes are no longer kept …]\n`;
          offset = start;
        }
        const reader = res.body.getReader();
        for (;;) {
          const { done: end, value } = await reader.read();
          if (end) break;
          offset += value.length;
          acc += decoder.decode(value, { stream: true });
          show();
        }
        show();
        // The stream ended: the log is complete, or it is to be resumed.
        const check = await request('GET', url, { query: { offset, limit: 1 }, raw: true, signal: ctl.signal, headers: { Accept: 'text/plain' } });
        if (check.headers.get('Cairn-Log-Complete') === 'true' && Number(check.headers.get('Cairn-Log-Offset')) === offset) {
          setDone(true);
          return;
        }
        await new Promise((r) => setTimeout(r, Math.min(5000, 500 * (attempt + 1))));
      }
    })().catch((e) => e.name !== 'AbortError' && setError(e));
    return () => {
      ctl.abort();
      cancelAnimationFrame(frame);
    };
  }, [id, placed]);
  return (
    <>
      <h2>Logs</h2>
      {!placed && <p class="muted">The session has not been placed on an agent yet: it has no logs.</p>}
      <ErrorBox error={error} />
      {placed && (
        <p>
          <a href={`${url}?download=true`} download={`session-${id}.log`}>
            Download the log
          </a>{' '}
          <span class="muted">{done ? '· complete' : '· following'}</span>
        </p>
      )}
      {text !== null && <pre class="logs">{text}</pre>}
    </>
  );
}

// Pending says why the session waits, in the scheduler's own terms
// (GET /v1/sessions/{id}/pending): each failed check in words, the queue
// position and an estimated start only when there is a basis for one.
function Pending({ id, tick }) {
  const p = useApi((signal) => get(`/v1/sessions/${encodeURIComponent(id)}/pending`, {}, { signal }), [id, tick]);
  if (!p.data) return <ErrorBox error={p.error} />;
  const x = p.data;
  if (!x.pending) return null;
  return (
    <div class="pending" role="status">
      <strong>Why it is waiting</strong>
      {x.placeable_now && <p>It fits now: the next scheduling round places it.</p>}
      {x.checks.length > 0 && (
        <ul>
          {x.checks.map((c, i) => (
            <li key={i}>
              {c.message} <code class="muted">{c.code}</code>
            </li>
          ))}
        </ul>
      )}
      <p class="muted">
        {x.queue ? `Position ${x.queue.position} of ${x.queue.length} in the queue (${x.queue.order}). ` : ''}
        {x.estimated_start ? (
          <>
            Estimated start: <Time at={x.estimated_start} />.
          </>
        ) : (
          `No estimated start: ${x.estimate}.`
        )}
      </p>
    </div>
  );
}

// Timeline is the session's history from its events: status changes with
// their reasons, the scheduler's decisions, the API requests that changed
// it (GET /v1/sessions/{id}/timeline), oldest first.
function Timeline({ id, tick }) {
  const t = useApi((signal) => get(`/v1/sessions/${encodeURIComponent(id)}/timeline`, { limit: 1000 }, { signal }), [id, tick]);
  return (
    <>
      <h2>Timeline</h2>
      <ErrorBox error={t.error} />
      {t.data && (
        <ol class="timeline">
          {t.data.items.map((e) => (
            <li key={`${e.position}-${e.revision}`}>
              <Time at={e.at} /> <span class="kind">{e.kind}</span> {e.summary}
              {e.actor && <span class="muted"> — {e.actor}</span>}
            </li>
          ))}
        </ol>
      )}
    </>
  );
}
