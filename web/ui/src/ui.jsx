// ui.jsx — the small parts every page uses: loading and error states, times
// in the viewer's zone, status badges, a cursor pager, dialogs and forms.
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

/**
 * useApi runs load(signal) when deps change and answers {data, error,
 * loading, reload}. A newer load aborts an older one. The load starts as
 * soon as the component is in the DOM (a layout effect), not after the
 * browser has painted the page around it: a page's data is asked for a
 * frame earlier. With ready false it waits (loading) until ready is true:
 * a page asks for what it shows first (its list) before the rest, which
 * would otherwise compete with it for the server.
 */
export function useApi(load, deps, ready = true) {
  const [state, setState] = useState({ data: undefined, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useLayoutEffect(() => {
    if (!ready) return undefined;
    const ctl = new AbortController();
    setState((s) => ({ ...s, loading: true, error: null }));
    load(ctl.signal).then(
      (data) => !ctl.signal.aborted && setState({ data, error: null, loading: false }),
      (error) => !ctl.signal.aborted && error.name !== 'AbortError' && setState({ data: undefined, error, loading: false }),
    );
    return () => ctl.abort();
  }, [...deps, tick, ready]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** ErrorBox shows an API error with its detail (and the field it names). */
export function ErrorBox({ error }) {
  if (!error) return null;
  const status = error.status ? `${error.status} ` : '';
  let title = 'Something went wrong';
  if (error.status === 403) title = 'Not allowed';
  else if (error.status === 404) title = 'Not found';
  else if (error.status === 400) title = 'Invalid input';
  else if (error.status === 409) title = 'Conflict';
  else if (error.status === 0) title = 'Cairn cannot be reached';
  return (
    <div class="error" role="alert">
      <strong>
        {status}
        {title}
      </strong>
      <span class="detail">{error.message}</span>
      {error.field && <span class="field">field: {error.field}</span>}
    </div>
  );
}

export function Loading({ what = 'Loading' }) {
  return (
    <p class="loading" aria-busy="true">
      {what}…
    </p>
  );
}

export function Empty({ children }) {
  return <p class="empty">{children}</p>;
}

const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** Time shows an RFC 3339 time in the viewer's zone, the exact UTC time as its title. */
export function Time({ at }) {
  if (!at) return <span class="muted">—</span>;
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return <span>{at}</span>;
  return (
    <time datetime={d.toISOString()} title={d.toISOString()}>
      {timeFormat.format(d)}
    </time>
  );
}

/** Status is a session status as a coloured badge. */
export function Status({ status }) {
  return <span class={`status status-${String(status || '').toLowerCase()}`}>{status}</span>;
}

/**
 * Pager walks cursor pages: Next with the page's next_cursor, Back through
 * the cursors seen; labels name the two directions (newer and older by default).
 */
export function Pager({ cursors, next, onPage, labels = ['← Newer', 'Older →'] }) {
  const page = cursors.length;
  return (
    <nav class="pager" aria-label="pages">
      <button type="button" disabled={page === 0} onClick={() => onPage(cursors.slice(0, -1))}>
        {labels[0]}
      </button>
      <span>page {page + 1}</span>
      <button type="button" disabled={!next} onClick={() => onPage([...cursors, next])}>
        {labels[1]}
      </button>
    </nav>
  );
}

/** Dialog is a modal <dialog>, open while rendered; Escape or Cancel closes it. */
export function Dialog({ title, onClose, children }) {
  const ref = useRef(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    const cancel = (e) => {
      e.preventDefault();
      onClose();
    };
    d.addEventListener('cancel', cancel);
    return () => d.removeEventListener('cancel', cancel);
  }, []);
  return (
    <dialog ref={ref} aria-labelledby="dialog-title">
      <h2 id="dialog-title">{title}</h2>
      {children}
    </dialog>
  );
}

/**
 * Field is a labelled form control (the hint outside the label, so the
 * control's accessible name is the label alone); the field is marked when
 * the server's error names it.
 */
export function Field({ label, name, error, children, hint }) {
  const bad = error && error.field === name;
  return (
    <div class={bad ? 'field invalid' : 'field'}>
      <label>
        <span>{label}</span>
        {children}
      </label>
      {hint && <small>{hint}</small>}
    </div>
  );
}

/** useSubmit runs an async submit (a form's event, if given, is not sent), keeping its busy flag and error. */
export function useSubmit(f) {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    if (e) e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await f();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { error, setError, busy, submit };
}

/** useForm keeps a form's values. */
export function useForm(initial) {
  const [values, setValues] = useState(initial);
  const bind = (name) => ({
    name,
    value: values[name],
    onInput: (e) => setValues((v) => ({ ...v, [name]: e.currentTarget.value })),
  });
  return [values, bind, setValues];
}

/** Bytes formats a byte count. */
export function bytes(n) {
  if (n === undefined || n === null) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = Number(n);
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i ? v.toFixed(1) : v} ${units[i]}`;
}

/** Slots shows a resource slot map (cpu, mem, GPUs...) as "cpu 2 · mem 1 GiB". */
export function Slots({ slots }) {
  if (!slots || !Object.keys(slots).length) return <span class="muted">—</span>;
  return (
    <span class="slots">
      {Object.entries(slots)
        .map(([k, v]) => `${k} ${k === 'mem' ? bytes(v) : v}`)
        .join(' · ')}
    </span>
  );
}

/** slotsText writes a slot map as the form's text: "cpu=2, mem=4g". */
export function slotsText(slots) {
  return Object.entries(slots || {})
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
}

/** parseSlots reads "cpu=2, mem=4g" into a slot map (the server checks the amounts). */
export function parseSlots(text) {
  const out = {};
  for (const part of text.split(',')) {
    const i = part.indexOf('=');
    if (i > 0) out[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  return out;
}

/** Meter shows how much of a capacity is used, as a bar and as text. */
export function Meter({ used, total, label }) {
  const u = Number(used) || 0;
  const t = Number(total) || 0;
  const pct = t > 0 ? Math.min(100, Math.round((u / t) * 100)) : 0;
  return (
    <span class="meter" title={label}>
      <meter min="0" max={t || 1} value={u} aria-label={label} />
      <span>{pct}%</span>
    </span>
  );
}

/**
 * Confirm asks before an action that cannot be undone: it names what will
 * happen, runs act() on confirmation and shows its error if it fails.
 */
export function Confirm({ title, children, action = 'Confirm', act, onClose }) {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const go = async () => {
    setBusy(true);
    setError(null);
    try {
      await act();
      onClose(true);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return (
    <Dialog title={title} onClose={() => onClose(false)}>
      <div class="form">
        {children}
        <ErrorBox error={error} />
        <div class="actions">
          <button type="button" onClick={() => onClose(false)}>
            Cancel
          </button>
          <button type="button" class="danger" disabled={busy} onClick={go}>
            {action}
          </button>
        </div>
      </div>
    </Dialog>
  );
}
