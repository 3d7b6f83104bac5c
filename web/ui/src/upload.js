// upload.js — uploads into a virtual folder: what to send (files picked,
// a folder picked, files and folders dropped, each with its path relative
// to where it lands), and a batch that makes the directories and then
// sends the files a few at a time, reporting progress. Sending one file is
// one function (sendFile), the only part that knows the transport, so a
// resumable protocol can replace it without touching the rest.
import { DefaultHttpStack, Upload } from 'tus-js-client';
import { ApiError, currentCSRFToken, noteAnswer, post } from './api.js';

/** CONCURRENCY is how many files a batch sends at once. */
export const CONCURRENCY = 4;

/** joinPath joins slash-separated path parts, skipping empty ones. */
export const joinPath = (...parts) => parts.filter(Boolean).join('/');

/** filesFromInput answers [{file, rel}] for an <input type=file>'s files (a folder picker keeps the relative paths). */
export function filesFromInput(list) {
  return [...list].map((file) => ({ file, rel: file.webkitRelativePath || file.name }));
}

/**
 * dropSource reads a drop's entries at once (a DataTransfer is only
 * readable during its event) and answers a function that walks them into
 * {files: [{file, rel}], dirs: [rel]}. Directories are read to the end:
 * readEntries answers at most about a hundred entries a call.
 */
export function dropSource(dataTransfer) {
  const entries = [...dataTransfer.items]
    .filter((i) => i.kind === 'file')
    .map((i) => (i.webkitGetAsEntry ? i.webkitGetAsEntry() : null));
  const plain = [...dataTransfer.files];
  return async () => {
    if (!entries.length || entries.some((e) => !e)) return { files: plain.map((file) => ({ file, rel: file.name })), dirs: [] };
    const files = [];
    const dirs = [];
    const walk = async (entry, prefix) => {
      const rel = joinPath(prefix, entry.name);
      if (entry.isFile) {
        files.push({ file: await new Promise((res, rej) => entry.file(res, rej)), rel });
      } else if (entry.isDirectory) {
        dirs.push(rel);
        const reader = entry.createReader();
        for (;;) {
          const batch = await new Promise((res, rej) => reader.readEntries(res, rej));
          if (!batch.length) break;
          for (const e of batch) await walk(e, rel);
        }
      }
    };
    for (const e of entries) await walk(e, '');
    return { files, dirs };
  };
}

/** problemOf decodes a problem+json answer (or makes one of the status). */
function problemOf(xhr) {
  try {
    const p = JSON.parse(xhr.responseText);
    if (p && typeof p === 'object') return p;
  } catch {
    // not JSON: below
  }
  return { detail: `${xhr.status} ${xhr.statusText || 'upload failed'}` };
}

/**
 * sendFilePut stores file at path in the folder in one request (PUT
 * .../files/content, the body streamed; XHR reports its progress through
 * onProgress(loaded)), answering the API's JSON or throwing an ApiError.
 * sendFile (resumable) is what the page uses.
 */
export function sendFilePut(folderId, path, file, { onProgress, signal } = {}) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', `/v1/vfolders/${encodeURIComponent(folderId)}/files/content?${new URLSearchParams({ path })}`);
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    const token = currentCSRFToken();
    if (token) xhr.setRequestHeader('X-CSRF-Token', token);
    xhr.upload.onprogress = (e) => onProgress && onProgress(e.loaded);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        noteAnswer(xhr.status, xhr.getResponseHeader('X-CSRF-Token'));
        onProgress && onProgress(file.size);
        try {
          resolve(JSON.parse(xhr.responseText));
        } catch {
          resolve(null);
        }
        return;
      }
      const err = new ApiError(xhr.status, problemOf(xhr));
      noteAnswer(xhr.status, xhr.getResponseHeader('X-CSRF-Token'), err);
      reject(err);
    };
    xhr.onerror = () => reject(new ApiError(0, { detail: 'the upload was cut off (Cairn cannot be reached, or it closed the connection)' }));
    xhr.onabort = () => reject(new ApiError(0, { detail: 'cancelled' }));
    if (signal) {
      if (signal.aborted) return xhr.abort();
      signal.addEventListener('abort', () => xhr.abort(), { once: true });
    }
    xhr.send(file);
  });
}

/**
 * leafDirs answers the directories to make for the given ones and the
 * files' parents: only those no other one lies under (mkdir with parents
 * makes the rest), in order.
 */
export function leafDirs(dirs, rels) {
  const all = new Set(dirs);
  for (const r of rels) {
    const i = r.lastIndexOf('/');
    if (i > 0) all.add(r.slice(0, i));
  }
  const sorted = [...all].sort();
  return sorted.filter((d) => !sorted.some((o) => o.startsWith(d + '/')));
}

/**
 * uploadBatch sends files ([{file, rel}]) under dir of the folder: first
 * the directories they need (and the empty ones dropped, dirs), then the
 * files CONCURRENCY at a time. onUpdate(items, running) gets the
 * per-file state ({rel, size, loaded, state: queued|sending|done|failed,
 * error}) as it changes (at most once a frame), the last time with
 * running false; it answers the final items. A failed file does not stop
 * the others.
 */
export async function uploadBatch(folderId, dir, files, { dirs = [], onUpdate, signal, send = sendFile } = {}) {
  const items = files.map(({ file, rel }) => ({ rel, file, size: file.size, loaded: 0, state: 'queued', error: null }));
  let queued = false;
  let running = true;
  const report = () => onUpdate && onUpdate(items.map((i) => ({ ...i })), running);
  const changed = () => {
    if (queued || !running) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      // The last report (running false) is never followed by an older one.
      if (running) report();
    });
  };
  report();
  for (const d of leafDirs(dirs, files.map((f) => f.rel))) {
    try {
      await post(`/v1/vfolders/${encodeURIComponent(folderId)}/files/mkdir`, { path: joinPath(dir, d), parents: true }, { signal });
    } catch (err) {
      // The files under it fail with this error; the others go on.
      for (const i of items) if (i.rel.startsWith(d + '/')) Object.assign(i, { state: 'failed', error: err });
    }
  }
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++];
      if (item.state !== 'queued') continue;
      item.state = 'sending';
      changed();
      try {
        await send(folderId, joinPath(dir, item.rel), item.file, {
          signal,
          onProgress: (n) => {
            item.loaded = n;
            changed();
          },
        });
        item.state = 'done';
        item.loaded = item.size;
      } catch (err) {
        item.state = 'failed';
        item.error = err;
      }
      changed();
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  running = false;
  report();
  return items;
}

// CHUNK is the size of one resumable upload request: what a cut
// connection can cost to send again.
const CHUNK = 8 * 1024 * 1024;

const base64 = (buf) => {
  let s = '';
  const b = new Uint8Array(buf);
  for (let i = 0; i < b.length; i++) s += String.fromCharCode(b[i]);
  return btoa(s);
};

/**
 * ChecksumHttpStack is tus-js-client's own HTTP stack with one addition:
 * every chunk (PATCH) carries Upload-Checksum: sha256 of its bytes, so the
 * server refuses a chunk corrupted on the way (460) and the offset does not
 * move; and every request carries the CSRF token the cookie login needs.
 */
class ChecksumHttpStack {
  constructor() {
    this.inner = new DefaultHttpStack();
  }
  createRequest(method, url) {
    const req = this.inner.createRequest(method, url);
    const send = req.send.bind(req);
    req.send = async (body) => {
      const token = currentCSRFToken();
      if (token) req.setHeader('X-CSRF-Token', token);
      req.setHeader('Accept', 'application/json');
      if (method === 'PATCH' && body) {
        const digest = await crypto.subtle.digest('SHA-256', await body.arrayBuffer());
        req.setHeader('Upload-Checksum', `sha256 ${base64(digest)}`);
      }
      const res = await send(body);
      noteAnswer(res.getStatus(), res.getHeader('X-CSRF-Token'));
      return res;
    };
    return req;
  }
  getName() {
    return 'cairn-checksum';
  }
}

/** tusError turns tus-js-client's error into an ApiError with the server's problem. */
function tusError(err) {
  const res = err && err.originalResponse;
  if (!res) return new ApiError(0, { detail: `the upload was cut off: ${err && err.message}` });
  let problem;
  try {
    problem = JSON.parse(res.getBody());
  } catch {
    problem = { detail: `${res.getStatus()} ${res.getBody() || 'upload failed'}` };
  }
  const e = new ApiError(res.getStatus(), problem);
  noteAnswer(res.getStatus(), null, res.getStatus() === 401 ? e : null);
  return e;
}

/**
 * sendFile is the transport: a resumable upload (the tus protocol on
 * /v1/vfolders/{id}/uploads, through tus-js-client) in chunks of 8 MiB, each
 * with its sha256. A cut connection resumes from the offset the server
 * holds (HEAD), sending only the rest; so does the same file picked again
 * after a reload (the upload's URL is kept in the browser's storage until
 * it is done). Errors that retrying cannot fix (4xx) are not retried.
 */
export function sendFile(folderId, path, file, { onProgress, signal } = {}) {
  return new Promise((resolve, reject) => {
    const up = new Upload(file, {
      endpoint: `/v1/vfolders/${encodeURIComponent(folderId)}/uploads`,
      metadata: { path, filename: file.name },
      chunkSize: CHUNK,
      retryDelays: [0, 1000, 3000, 5000, 10000],
      httpStack: new ChecksumHttpStack(),
      storeFingerprintForResuming: true,
      removeFingerprintOnSuccess: true,
      fingerprint: async (f) => `cairn-${folderId}-${path}-${f.size}-${f.lastModified}`,
      onShouldRetry: (err) => {
        const status = err.originalResponse ? err.originalResponse.getStatus() : 0;
        return status === 0 || status === 409 || status === 423 || status === 460 || status >= 500;
      },
      onProgress: (sent) => onProgress && onProgress(sent),
      onSuccess: () => {
        onProgress && onProgress(file.size);
        resolve(null);
      },
      onError: (err) => reject(tusError(err)),
    });
    if (signal) {
      if (signal.aborted) return reject(new ApiError(0, { detail: 'cancelled' }));
      signal.addEventListener(
        'abort',
        () => {
          up.abort(true).catch(() => {});
          reject(new ApiError(0, { detail: 'cancelled' }));
        },
        { once: true },
      );
    }
    up.findPreviousUploads().then(
      (previous) => {
        if (previous.length) up.resumeFromPreviousUpload(previous[0]);
        up.start();
      },
      () => up.start(),
    );
  });
}
