// live.js — live updates: one EventSource on GET /v1/events (the changes
// the caller may see, each sent once the read models show it) shared by
// every page that listens. A page refetches what it shows when a change of
// a kind it shows arrives. The browser reconnects by itself, resuming after
// the last event id it saw (nothing missed); after a "reset" (too far
// behind) or a reconnection that failed, every listener refetches.
import { useEffect, useRef } from 'preact/hooks';

const listeners = new Set(); // {kinds: Set|null, id: string|null, f}
let source = null;
let retry = null;

function dispatch(change) {
  for (const l of listeners) {
    if (change.kind === '*' || ((!l.kinds || l.kinds.has(change.kind)) && (!l.id || l.id === change.id))) l.f(change);
  }
}

function open() {
  if (source || !listeners.size) return;
  source = new EventSource('/v1/events', { withCredentials: true });
  const kinds = ['session', 'vfolder', 'agent', 'user', 'image', 'resource_group', 'keypair_policy', 'domain', 'project', 'keypair', 'user_policy', 'project_policy'];
  for (const k of kinds) {
    source.addEventListener(k, (e) => {
      try {
        dispatch(JSON.parse(e.data));
      } catch {
        /* a malformed event changes nothing */
      }
    });
  }
  source.addEventListener('reset', () => dispatch({ kind: '*', id: null }));
  source.addEventListener('error', () => {
    // A closed source (the server refused it: logged out, or gone) is
    // reopened after a while, and the pages refetch what they may have
    // missed; an open one reconnects by itself.
    if (source && source.readyState === EventSource.CLOSED) {
      source = null;
      clearTimeout(retry);
      retry = setTimeout(() => {
        open();
        dispatch({ kind: '*', id: null });
      }, 5000);
    }
  });
}

/** closeLive ends the stream (at log out). */
export function closeLive() {
  clearTimeout(retry);
  if (source) source.close();
  source = null;
}

/**
 * useLive calls onChange(change) for every change of the given kinds (and
 * of one object when id is given), and for a reset (kind '*').
 */
export function useLive(kinds, onChange, id = null) {
  const f = useRef(onChange);
  f.current = onChange;
  useEffect(() => {
    const l = { kinds: kinds ? new Set(kinds) : null, id, f: (c) => f.current(c) };
    listeners.add(l);
    open();
    return () => listeners.delete(l);
  }, [String(kinds), id]);
}

/**
 * useLiveReload calls reload() after changes of the given kinds (of one
 * object when id is given): at once for the first change, then at most
 * once per 200 ms, so a burst of changes is one more refetch at the end of
 * the window, and a lone change shows without waiting.
 */
export function useLiveReload(kinds, reload, id = null) {
  const t = useRef(null); // the window's timer, null when no window is open
  const again = useRef(false); // a change arrived during the window
  const f = useRef(reload);
  f.current = reload;
  useEffect(() => () => clearTimeout(t.current), []);
  const close = () => {
    t.current = null;
    if (!again.current) return;
    again.current = false;
    f.current();
    t.current = setTimeout(close, 200);
  };
  useLive(
    kinds,
    () => {
      if (t.current) {
        again.current = true;
        return;
      }
      f.current();
      t.current = setTimeout(close, 200);
    },
    id,
  );
}
