// jobs.jsx — the server's long-running maintenance jobs (read model
// rebuilds, audit chain verifications): a job is polled every second while
// it runs, and shown as a progress bar, then as its result. The Maintenance
// and Audit pages share the verification flow from here.
import { useEffect, useState } from 'preact/hooks';
import { get, post } from './api.js';
import { ErrorBox, Time, useApi } from './ui.jsx';

/**
 * usePolledJob keeps a job (initially `initial`) and, while its state is
 * running, reads `${path}/${id}` a second after each answer until it is done
 * or failed; onEnd(job) is called once when a job it polled ends. A failed
 * read is shown and tried again a second later, except a 404 (the server
 * restarted and forgot the job), which ends the polling.
 */
export function usePolledJob(path, initial, onEnd) {
  const [job, setJob] = useState(initial);
  const [error, setError] = useState(null);
  const [retry, setRetry] = useState(0);
  useEffect(() => setJob(initial), [initial]);
  useEffect(() => {
    if (!job || job.state !== 'running' || (error && error.status === 404)) return undefined;
    const ctl = new AbortController();
    const t = setTimeout(() => {
      get(`${path}/${encodeURIComponent(job.id)}`, undefined, { signal: ctl.signal }).then(
        (j) => {
          if (ctl.signal.aborted) return;
          setError(null);
          setJob(j);
          if (j.state !== 'running' && onEnd) onEnd(j);
        },
        (e) => {
          if (ctl.signal.aborted || e.name === 'AbortError') return;
          setError(e);
          setRetry((r) => r + 1);
        },
      );
    }, 1000);
    return () => {
      clearTimeout(t);
      ctl.abort();
    };
  }, [job, retry]);
  return [job, error];
}

/** Progress is a labelled progress bar: done of total, and the percentage. */
export function Progress({ done, total, label, unit = '' }) {
  const d = Number(done) || 0;
  const t = Number(total) || 0;
  const pct = t > 0 ? Math.min(100, Math.floor((d / t) * 100)) : 0;
  return (
    <span class="progress">
      <progress max={t || 1} value={t ? Math.min(d, t) : 0} aria-label={label} />
      <span>
        {d.toLocaleString()} / {t.toLocaleString()}
        {unit && ` ${unit}`} ({pct}%)
      </span>
    </span>
  );
}

/** JobState is a job's state (or phase) as a badge. */
export function JobState({ state }) {
  return <span class={`status job-${state}`}>{state}</span>;
}

/** VerifiedHead shows the head a verification reached: seq, hash, the record's time and how many records. */
export function VerifiedHead({ head, verifiedAt }) {
  return (
    <dl class="facts verified-head">
      <dt>Head seq</dt>
      <dd>{head.seq}</dd>
      <dt>Head hash</dt>
      <dd>
        <code class="hash">{head.hash}</code>
      </dd>
      <dt>Head record's time</dt>
      <dd>
        <Time at={head.at} />
      </dd>
      <dt>Records verified</dt>
      <dd>{head.records}</dd>
      {verifiedAt && <dt>Verified at</dt>}
      {verifiedAt && (
        <dd>
          <Time at={verifiedAt} />
        </dd>
      )}
    </dl>
  );
}

/** Broken shows the first bad record a verification found. */
export function Broken({ broken }) {
  return (
    <div class="error broken" role="alert">
      <strong>The chain is broken: {broken.problem}</strong>
      <span class="detail">
        record seq {broken.seq} (expected seq {broken.expected}, place {broken.index} in the trail)
      </span>
      <span class="detail">{broken.detail}</span>
    </div>
  );
}

/** VerificationResult shows a verification: its progress while it runs, then the head, the broken record or its error. */
export function VerificationResult({ job }) {
  if (!job) return null;
  if (job.state === 'running') {
    return (
      <div class="job-running" aria-live="polite">
        <p>
          Verifying the audit chain… <JobState state={job.state} />
        </p>
        <Progress done={job.records} total={job.total} label="records verified" unit="records" />
      </div>
    );
  }
  if (job.state === 'done' && job.head) {
    return (
      <div class="job-result" aria-live="polite">
        <p class="ok">The audit chain is intact up to this head.</p>
        <VerifiedHead head={job.head} verifiedAt={job.finished_at} />
      </div>
    );
  }
  return (
    <div class="job-result" aria-live="polite">
      {job.broken && <Broken broken={job.broken} />}
      {job.error && <ErrorBox error={{ message: job.error }} />}
      {!job.broken && !job.error && <p>The verification ended {job.state}.</p>}
    </div>
  );
}

/**
 * useAuditVerification is the verification flow both pages use: the
 * remembered verifications (newest first), start() (POST /v1/audit/verify,
 * which answers the running job when one runs), the current job polled
 * until it ends (a job found running in the list is followed too), and the
 * last verified head (the first done job).
 */
export function useAuditVerification() {
  const list = useApi((signal) => get('/v1/audit/verify', undefined, { signal }), []);
  const [started, setStarted] = useState(null);
  const [startError, setStartError] = useState(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!started && list.data) {
      const running = list.data.items.find((j) => j.state === 'running');
      if (running) setStarted(running);
    }
  }, [list.data]);
  const [job, pollError] = usePolledJob('/v1/audit/verify', started, () => list.reload());
  const start = async () => {
    setBusy(true);
    setStartError(null);
    try {
      const j = await post('/v1/audit/verify');
      setStarted(j);
      if (j.state !== 'running') list.reload();
    } catch (e) {
      setStartError(e);
    } finally {
      setBusy(false);
    }
  };
  const lastDone = list.data ? list.data.items.find((j) => j.state === 'done' && j.head) : undefined;
  return { list, job, start, busy: busy || (job && job.state === 'running'), error: startError || pollError, lastDone };
}

/** VerifyButton starts a verification (disabled while one runs). */
export function VerifyButton({ v, label = 'Verify the audit chain' }) {
  return (
    <button type="button" class="primary" disabled={v.busy} onClick={v.start}>
      {label}
    </button>
  );
}
