// router.js — client-side routing over the History API: the server answers
// index.html for every page path, the page is chosen here.
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set();

function notify() {
  for (const f of listeners) f(location.pathname + location.search);
}
addEventListener('popstate', notify);

/** navigate goes to a page path without reloading. */
export function navigate(to, { replace = false } = {}) {
  if (to === location.pathname + location.search) return;
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  scrollTo(0, 0);
  notify();
}

/** useLocation answers the current path and query, and re-renders on change. */
export function useLocation() {
  const [loc, setLoc] = useState(location.pathname + location.search);
  useEffect(() => {
    listeners.add(setLoc);
    return () => listeners.delete(setLoc);
  }, []);
  return loc;
}

/** match tries a pattern like "/sessions/:id" on a path, answering the params or null. */
export function match(pattern, path) {
  const p = pattern.split('/').filter(Boolean);
  const s = path.split('?')[0].split('/').filter(Boolean);
  if (p.length !== s.length) return null;
  const params = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(':')) params[p[i].slice(1)] = decodeURIComponent(s[i]);
    else if (p[i] !== s[i]) return null;
  }
  return params;
}

/** Link is an <a> that navigates in place (a modified click opens a tab as usual). */
export function Link({ href, children, ...rest }) {
  const onClick = (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={onClick} {...rest}>
      {children}
    </a>
  );
}

/** queryParam reads one parameter of the current location's query. */
export function queryParam(loc, name) {
  const i = loc.indexOf('?');
  return i < 0 ? '' : new URLSearchParams(loc.slice(i + 1)).get(name) || '';
}
