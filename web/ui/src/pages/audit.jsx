// audit.jsx — Audit (superadmins and auditors; a domain auditor reads its
// domain's records, and its NDJSON export shows the others elided, their
// place in the chain only, so that it still verifies): the hash-chained access log, filtered by
// actor, action, entity, outcome and time, a page at a time in log order,
// exported as NDJSON exactly as stored (so the export verifies offline) or
// as CSV, and the chain's last verified head with a Verify now button.
import { useState } from 'preact/hooks';
import { get } from '../api.js';
import { Empty, ErrorBox, Loading, Pager, Time, useApi, useForm } from '../ui.jsx';
import { VerificationResult, VerifyButton, useAuditVerification } from '../jobs.jsx';

const PAGE = 100;
const filterNames = ['actor', 'action', 'entity_type', 'entity_id', 'outcome', 'from', 'to'];

/** toRFC3339 turns a datetime-local value (the viewer's zone) into RFC 3339. */
const toRFC3339 = (v) => (v ? new Date(v).toISOString() : '');

export function AuditPage({ me }) {
  const [v, bind] = useForm({ actor: '', action: '', entity_type: '', entity_id: '', outcome: '', from: '', to: '' });
  const [filters, setFilters] = useState({});
  const [cursors, setCursors] = useState([]);
  const cursor = cursors[cursors.length - 1] || '';
  const list = useApi((signal) => get('/v1/audit', { ...filters, limit: PAGE, cursor }, { signal }), [filters, cursor]);
  const apply = (e) => {
    e.preventDefault();
    const f = {};
    for (const n of filterNames) {
      const x = n === 'from' || n === 'to' ? toRFC3339(v[n]) : v[n].trim();
      if (x) f[n] = x;
    }
    setFilters(f);
    setCursors([]);
  };
  const exportURL = `/v1/audit/stream?${new URLSearchParams(filters)}`;
  const csvURL = `/v1/audit/stream?${new URLSearchParams({ format: 'csv', ...filters })}`;
  return (
    <section>
      <div class="page-head">
        <h1>Audit</h1>
        <span class="buttons exports">
          <a class="button" href={exportURL} download="audit.ndjson">
            Export NDJSON
          </a>
          <a class="button" href={csvURL} download="audit.csv">
            Export CSV
          </a>
        </span>
      </div>
      {me?.role === 'domain-auditor' && (
        <p class="muted domain-scope">
          The records of the domain {me.domain}: its users' and those done to its objects. In the NDJSON export every other record
          is elided (its seq and hashes only), so the export still verifies as a chain.
        </p>
      )}
      <LastVerified />
      <form class="filters audit-filters" onSubmit={apply}>
        <label>
          Actor <input {...bind('actor')} placeholder="user id, e-mail or access key" />
        </label>
        <label>
          Action <input {...bind('action')} placeholder="e.g. POST /v1/sessions" />
        </label>
        <label>
          Entity type <input {...bind('entity_type')} placeholder="e.g. session" />
        </label>
        <label>
          Entity id <input {...bind('entity_id')} />
        </label>
        <label>
          Outcome{' '}
          <select {...bind('outcome')} onChange={bind('outcome').onInput}>
            <option value="">any</option>
            <option value="success">success</option>
            <option value="denied">denied</option>
            <option value="error">error</option>
          </select>
        </label>
        <label>
          From <input type="datetime-local" {...bind('from')} />
        </label>
        <label>
          To <input type="datetime-local" {...bind('to')} />
        </label>
        <button type="submit" class="primary">
          Filter
        </button>
      </form>
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && !list.data.items.length && <Empty>No record matches.</Empty>}
      {list.data && list.data.items.length > 0 && (
        <div class="table-wrap">
          <table class="list">
            <thead>
              <tr>
                <th>#</th>
                <th>Time</th>
                <th>Actor</th>
                <th>Action</th>
                <th>Entity</th>
                <th>Outcome</th>
                <th>Status</th>
                <th>Client</th>
                <th>Hash</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((r) => (
                <tr key={r.seq}>
                  <td>{r.seq}</td>
                  <td>
                    <Time at={r.time} />
                  </td>
                  <td>{r.user_id || r.access_key || <span class="muted">anonymous</span>}</td>
                  <td>{r.action}</td>
                  <td>{r.entity_type ? `${r.entity_type} ${r.entity_id || ''}` : '—'}</td>
                  <td>{r.outcome}</td>
                  <td>{r.status}</td>
                  <td>{r.client_ip || '—'}</td>
                  <td>
                    <code title={r.hash}>{String(r.hash).slice(0, 12)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.data && <Pager cursors={cursors} next={list.data.next_cursor} onPage={setCursors} />}
    </section>
  );
}

/**
 * LastVerified shows the chain's last verified head (the newest done
 * verification the server remembers) and verifies the chain again on demand.
 */
function LastVerified() {
  const v = useAuditVerification();
  const last = v.lastDone;
  const running = v.job && v.job.state === 'running';
  const ended = v.job && !running && !(v.job.state === 'done' && last && last.id === v.job.id);
  return (
    <div class="verified" aria-label="last verified head" role="region">
      <div class="verified-line">
        <strong>Last verified head</strong>
        {v.list.loading && !v.list.data && <span class="muted">loading…</span>}
        {v.list.data && !last && <span class="muted">The chain has not been verified since the server started.</span>}
        {last && (
          <span class="verified-facts">
            seq <span class="head-seq">{last.head.seq}</span> · hash{' '}
            <code class="hash" title={last.head.hash}>
              {last.head.hash}
            </code>{' '}
            · verified <Time at={last.finished_at} /> · {last.head.records} records
          </span>
        )}
        <VerifyButton v={v} label="Verify now" />
      </div>
      <ErrorBox error={v.list.error} />
      <ErrorBox error={v.error} />
      {(running || ended) && <VerificationResult job={v.job} />}
    </div>
  );
}
