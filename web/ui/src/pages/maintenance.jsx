// maintenance.jsx — Maintenance (superadmins): rebuild a read model online
// (the jobs the server remembers, a running one polled every second until it
// is done or failed) and verify the audit trail's hash chain.
import { useState } from 'preact/hooks';
import { get, post } from '../api.js';
import { Confirm, Empty, ErrorBox, Loading, Time, useApi } from '../ui.jsx';
import { JobState, Progress, VerificationResult, VerifyButton, useAuditVerification, usePolledJob } from '../jobs.jsx';

/** readModels are the names POST /v1/maintenance/rebuilds accepts. */
export const readModels = ['sessions', 'agents', 'tenancy', 'vfolders', 'audit-runs', 'occupancy', 'usage'];

function RebuildRow({ initial, onEnd }) {
  const [job, error] = usePolledJob('/v1/maintenance/rebuilds', initial, onEnd);
  const byEvents = job.total > 0;
  return (
    <tr data-id={job.id}>
      <td>{job.read_model}</td>
      <td>
        <JobState state={job.phase || job.state} />
      </td>
      <td>
        <Progress
          done={byEvents ? job.events : job.position}
          total={byEvents ? job.total : job.head}
          label={`${job.read_model} rebuild progress`}
          unit={byEvents ? 'events' : 'positions'}
        />
      </td>
      <td>{Number(job.events_per_second || 0).toFixed(0)}</td>
      <td>{job.held_seconds ? Number(job.held_seconds).toFixed(3) : '0'}</td>
      <td>
        <Time at={job.started_at} />
      </td>
      <td>
        <Time at={job.finished_at} />
      </td>
      <td class="wrap">
        {job.error && <span class="bad">{job.error}</span>}
        {error && <ErrorBox error={error} />}
      </td>
    </tr>
  );
}

function Rebuilds() {
  const list = useApi((signal) => get('/v1/maintenance/rebuilds', undefined, { signal }), []);
  const [model, setModel] = useState(readModels[0]);
  const [confirming, setConfirming] = useState(false);
  return (
    <>
      <h2>Rebuild a read model</h2>
      <p class="muted">
        The read model is replayed from the event log into a fresh copy while the live one keeps answering, then swapped
        in one transaction.
      </p>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setConfirming(true);
        }}
      >
        <label class="inline-field" for="rebuild-model">
          Read model
        </label>
        <select id="rebuild-model" name="read_model" value={model} onChange={(e) => setModel(e.currentTarget.value)}>
          {readModels.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
        <button type="submit" class="primary">
          Rebuild
        </button>
      </form>
      {confirming && (
        <Confirm
          title={`Rebuild ${model}`}
          action="Rebuild"
          act={() => post('/v1/maintenance/rebuilds', { read_model: model })}
          onClose={(done) => {
            setConfirming(false);
            if (done) list.reload();
          }}
        >
          <p>
            Replay the whole event log into a new copy of the <strong>{model}</strong> read model and swap it in. Reads
            that wait for a newer position answer 503 for the moment the projector is held at the end.
          </p>
        </Confirm>
      )}
      <h3>Rebuilds</h3>
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && !list.data.items.length && <Empty>No rebuild since the server started.</Empty>}
      {list.data && list.data.items.length > 0 && (
        <div class="table-wrap">
          <table class="list rebuilds">
            <thead>
              <tr>
                <th>Read model</th>
                <th>Phase</th>
                <th>Progress</th>
                <th>Events/s</th>
                <th>Held (s)</th>
                <th>Started</th>
                <th>Finished</th>
                <th>Error</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((j) => (
                <RebuildRow key={j.id} initial={j} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

function Verifications() {
  const v = useAuditVerification();
  return (
    <>
      <h2>Verify the audit chain</h2>
      <p class="muted">
        Reads the audit trail from its first record and checks every record's hash, its link to the one before and the
        sequence.
      </p>
      <VerifyButton v={v} />
      <ErrorBox error={v.error} />
      <VerificationResult job={v.job} />
      <h3>Verifications</h3>
      <ErrorBox error={v.list.error} />
      {v.list.loading && !v.list.data && <Loading />}
      {v.list.data && !v.list.data.items.length && <Empty>No verification since the server started.</Empty>}
      {v.list.data && v.list.data.items.length > 0 && (
        <div class="table-wrap">
          <table class="list verifications">
            <thead>
              <tr>
                <th>Started</th>
                <th>State</th>
                <th>Records</th>
                <th>Result</th>
              </tr>
            </thead>
            <tbody>
              {v.list.data.items.map((j) => (
                <tr key={j.id}>
                  <td>
                    <Time at={j.started_at} />
                  </td>
                  <td>
                    <JobState state={j.state} />
                  </td>
                  <td>
                    {j.records} / {j.total}
                  </td>
                  <td class="wrap">
                    {j.head && (
                      <>
                        head seq {j.head.seq} <code title={j.head.hash}>{String(j.head.hash).slice(0, 16)}</code>
                      </>
                    )}
                    {j.broken && (
                      <span class="bad">
                        {j.broken.problem} at seq {j.broken.seq}: {j.broken.detail}
                      </span>
                    )}
                    {j.error && <span class="bad">{j.error}</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

export function MaintenancePage() {
  return (
    <section>
      <h1>Maintenance</h1>
      <Rebuilds />
      <Verifications />
    </section>
  );
}
