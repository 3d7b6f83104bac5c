// api.js — the one way the pages talk to Cairn: fetch with the login cookie,
// the CSRF token on writes, and every error as an ApiError carrying the
// server's problem+json (status, detail, field).

let csrfToken = '';
// lastWritten is the highest log position a write of this page answered:
// every read waits until the read models have reached it (wait_for_position),
// so the page always sees its own writes.
let lastWritten = 0;
const unauthorizedListeners = new Set();

/** setCSRFToken keeps the token the login answered. */
export function setCSRFToken(t) {
  csrfToken = t || '';
}

/** currentCSRFToken is the token a write must carry (for requests not made by request, e.g. an upload's XHR). */
export function currentCSRFToken() {
  return csrfToken;
}

/** noteAnswer learns a rotated CSRF token from an answer's header and reports a 401 to the listeners. */
export function noteAnswer(status, token, err) {
  if (token) csrfToken = token;
  if (status === 401 && err) for (const f of unauthorizedListeners) f(err);
}

/** onUnauthorized registers f, called when any request answers 401 (an expired or revoked login). */
export function onUnauthorized(f) {
  unauthorizedListeners.add(f);
  return () => unauthorizedListeners.delete(f);
}

/** ApiError is a failed request: the HTTP status and the problem's fields. */
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
    this.field = problem.field || '';
  }
}

function withQuery(path, query) {
  if (!query) return path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/**
 * request sends one API request and answers the decoded JSON (null for 204;
 * the Response itself with {raw: true}).
 */
export async function request(method, path, { body, query, signal, raw, headers: extra } = {}) {
  const headers = { Accept: 'application/json', ...extra };
  if (method === 'GET' && lastWritten > 0) query = { wait_for_position: lastWritten, ...query };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  let res;
  try {
    res = await fetch(withQuery(path, query), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      signal,
    });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, { detail: `Cairn cannot be reached: ${e.message}` });
  }
  const t = res.headers.get('X-CSRF-Token');
  if (t) csrfToken = t;
  if (!res.ok) {
    let problem;
    try {
      problem = await res.json();
    } catch {
      problem = { detail: `${res.status} ${res.statusText}` };
    }
    const err = new ApiError(res.status, problem);
    if (res.status === 401 && path !== '/v1/auth/session') for (const f of unauthorizedListeners) f(err);
    throw err;
  }
  if (raw) return res;
  if (res.status === 204) return null;
  const type = res.headers.get('Content-Type') || '';
  if (!type.includes('json')) return res.text();
  const data = await res.json();
  if (method !== 'GET' && data && typeof data.position === 'number' && data.position > lastWritten) lastWritten = data.position;
  return data;
}

export const get = (path, query, opts) => request('GET', path, { ...opts, query });
export const post = (path, body, opts) => request('POST', path, { ...opts, body });
export const patch = (path, body, opts) => request('PATCH', path, { ...opts, body });
export const put = (path, body, opts) => request('PUT', path, { ...opts, body });
export const del = (path, opts) => request('DELETE', path, opts);
