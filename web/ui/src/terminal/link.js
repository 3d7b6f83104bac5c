// link.js — the terminal page's pure parts (tested without a browser in
// test/terminal-link.test.mjs): which session the page is of, the
// terminal's id, the socket's URL and the reconnection delays.

/** sessionOf answers the session id in the page's path (/v1/sessions/{id}/apps/terminal/), or '' if none. */
export function sessionOf(pathname) {
  const m = /\/sessions\/([^/]+)\/apps\/terminal(\/|$)/.exec(pathname);
  return m ? decodeURIComponent(m[1]) : '';
}

/**
 * newTerminalId answers a random UUID (version 4): the client names its
 * terminal, and the same name reattaches to the same shell. It uses
 * getRandomValues, which, unlike randomUUID, pages served over plain HTTP
 * on a host other than localhost have too.
 */
export function newTerminalId(random = (a) => crypto.getRandomValues(a)) {
  const b = random(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** socketURL answers the WebSocket URL of terminal at cols x rows: "socket" beside the page, ws: or wss: as the page's scheme. */
export function socketURL(pageURL, terminal, cols, rows) {
  const u = new URL('socket', pageURL);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  u.search = new URLSearchParams({ terminal, cols: String(cols), rows: String(rows) }).toString();
  u.hash = '';
  return u.toString();
}

/** Delays between reconnections: 0.5 s, doubling, at most 5 s. */
export const firstDelay = 500;
export const maxDelay = 5000;
export const nextDelay = (d) => Math.min(maxDelay, d * 2);
