// files.jsx — the Folder page (/data/{id}?path=dir): one directory of a
// virtual folder a page at a time (breadcrumbs, sizes, times in the
// viewer's zone), download links (the login cookie authenticates them),
// mkdir, move or rename, delete; and uploads of files and whole folders,
// picked or dropped, a few at a time with one progress bar for the batch
// and each file's state and error (upload.js sends them).
import { useRef, useState } from 'preact/hooks';
import { del, get, post } from '../api.js';
import { Link, queryParam } from '../router.jsx';
import { dropSource, filesFromInput, joinPath, uploadBatch } from '../upload.js';
import { Dialog, Empty, ErrorBox, Field, Loading, Pager, Time, bytes, useApi, useSubmit } from '../ui.jsx';
import { folderPath } from './data.jsx';

const PAGE = 500;

/** dirHref is the page of a directory of the folder. */
const dirHref = (id, dir) => (dir ? `${folderPath(id)}?${new URLSearchParams({ path: dir })}` : folderPath(id));

/** contentHref is a file's download route. */
const contentHref = (id, p) => `/v1/vfolders/${encodeURIComponent(id)}/files/content?${new URLSearchParams({ path: p })}`;

export function FilesPage({ params, loc }) {
  const id = params.id;
  const dir = queryParam(loc, 'path').replace(/^\/+|\/+$/g, '');
  const [cursorsOf, setCursorsOf] = useState({ dir: '', list: [] });
  const cursors = cursorsOf.dir === dir ? cursorsOf.list : [];
  const cursor = cursors[cursors.length - 1] || '';
  const [dialog, setDialog] = useState(null); // [kind, entry]
  const [batch, setBatch] = useState(null); // {items, running}
  const [dragging, setDragging] = useState(false);
  const folder = useApi((signal) => get(`/v1/vfolders/${encodeURIComponent(id)}`, {}, { signal }), [id]);
  const list = useApi((signal) => get(`/v1/vfolders/${encodeURIComponent(id)}/files`, { path: dir, limit: PAGE, cursor }, { signal }), [id, dir, cursor]);
  const filesInput = useRef(null);
  const dirInput = useRef(null);

  const upload = async (files, dirs = []) => {
    if (!files.length && !dirs.length) return;
    setBatch({ items: [], running: true });
    await uploadBatch(id, dir, files, { dirs, onUpdate: (items, running) => setBatch({ items, running }) });
    list.reload();
    folder.reload();
  };
  const picked = (e) => {
    const files = filesFromInput(e.currentTarget.files);
    e.currentTarget.value = '';
    upload(files);
  };
  const drop = async (e) => {
    e.preventDefault();
    setDragging(false);
    if (!e.dataTransfer) return;
    const walk = dropSource(e.dataTransfer);
    const { files, dirs } = await walk();
    upload(files, dirs);
  };
  const close = () => setDialog(null);
  const done = () => {
    setDialog(null);
    list.reload();
    folder.reload();
  };
  const f = folder.data;
  const [kind, entry] = dialog || [];
  const crumbs = dir ? dir.split('/') : [];
  const writable = f && f.effective_permission !== 'ro';
  return (
    <section>
      <div class="page-head">
        <h1>{f ? f.name : 'Folder'}</h1>
        {f && (
          <span class="muted">
            {f.effective_permission} · {f.usage ? `${bytes(f.usage.bytes)} in ${f.usage.files} files` : 'no data yet'}
            {f.quota ? ` of ${bytes(f.quota)}` : ''}
          </span>
        )}
      </div>
      <ErrorBox error={folder.error} />
      <nav class="crumbs" aria-label="path">
        <Link href="/data">Data</Link>
        <span aria-hidden="true">/</span>
        {crumbs.length ? <Link href={dirHref(id, '')}>{f ? f.name : 'folder'}</Link> : <span aria-current="page">{f ? f.name : 'folder'}</span>}
        {crumbs.map((c, i) => (
          <span key={i}>
            <span aria-hidden="true">/</span>{' '}
            {i === crumbs.length - 1 ? <span aria-current="page">{c}</span> : <Link href={dirHref(id, crumbs.slice(0, i + 1).join('/'))}>{c}</Link>}
          </span>
        ))}
      </nav>
      <div class="filters">
        <button type="button" onClick={() => setDialog(['mkdir'])} disabled={!writable}>
          New directory
        </button>
        <button type="button" onClick={() => filesInput.current.click()} disabled={!writable || (batch && batch.running)}>
          Upload files
        </button>
        <button type="button" onClick={() => dirInput.current.click()} disabled={!writable || (batch && batch.running)}>
          Upload a folder
        </button>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
        <input ref={filesInput} type="file" multiple class="hidden" aria-label="files to upload" onChange={picked} tabIndex={-1} />
        <input ref={dirInput} type="file" webkitdirectory class="hidden" aria-label="folder to upload" onChange={picked} tabIndex={-1} />
      </div>
      {batch && <UploadProgress batch={batch} onDismiss={() => setBatch(null)} />}
      <div
        class={dragging ? 'dropzone dragging' : 'dropzone'}
        onDragOver={(e) => {
          if (!writable) return;
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={drop}
      >
        <ErrorBox error={list.error} />
        {list.loading && !list.data && <Loading />}
        {list.data && !list.data.items.length && <Empty>This directory is empty. Drop files or folders here to upload them.</Empty>}
        {list.data && list.data.items.length > 0 && (
          <div class="table-wrap">
            <table class="list files">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Size</th>
                  <th>Modified</th>
                  <th>Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.data.items.map((e) => {
                  const p = joinPath(dir, e.name);
                  return (
                    <tr key={e.name}>
                      <td class="name">
                        {e.type === 'dir' ? (
                          <Link href={dirHref(id, p)} class="dir">
                            {e.name}/
                          </Link>
                        ) : (
                          <span>{e.name}</span>
                        )}
                      </td>
                      <td>{e.type === 'dir' ? '—' : bytes(e.size)}</td>
                      <td>
                        <Time at={e.modified_at} />
                      </td>
                      <td class="row-actions">
                        <span class="buttons">
                          {e.type === 'file' && (
                            <a class="button" href={contentHref(id, p)} download={e.name} aria-label={`Download ${e.name}`}>
                              Download
                            </a>
                          )}
                          {writable && (
                            <button type="button" onClick={() => setDialog(['move', { ...e, path: p }])} aria-label={`Move ${e.name}`}>
                              Move
                            </button>
                          )}
                          {f && f.effective_permission === 'wd' && (
                            <button type="button" class="danger" onClick={() => setDialog(['delete', { ...e, path: p }])} aria-label={`Delete ${e.name}`}>
                              Delete
                            </button>
                          )}
                        </span>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </div>
      {list.data && <Pager cursors={cursors} next={list.data.next_cursor} onPage={(l) => setCursorsOf({ dir, list: l })} labels={['← Previous', 'Next →']} />}
      {kind === 'mkdir' && <MakeDir id={id} dir={dir} onClose={close} onDone={done} />}
      {kind === 'move' && <MoveEntry id={id} entry={entry} onClose={close} onDone={done} />}
      {kind === 'delete' && <DeleteEntry id={id} entry={entry} onClose={close} onDone={done} />}
    </section>
  );
}

/** UploadProgress shows a batch: one bar for its bytes, the counts, and each file's state and error. */
function UploadProgress({ batch, onDismiss }) {
  const { items, running } = batch;
  const total = items.reduce((n, i) => n + i.size, 0);
  const sent = items.reduce((n, i) => n + Math.min(i.loaded, i.size), 0);
  const done = items.filter((i) => i.state === 'done').length;
  const failed = items.filter((i) => i.state === 'failed');
  const left = items.length - done - failed.length;
  // Failed files first: they are what the user must look at.
  const shown = [...failed, ...items.filter((i) => i.state === 'sending'), ...items.filter((i) => i.state === 'queued' || i.state === 'done')];
  return (
    <div class="upload" role="region" aria-label="upload">
      <div class="upload-head">
        <progress max={total || 1} value={running ? sent : total || 1} aria-label="upload progress" />
        <span class="upload-summary" role="status">
          {running ? 'Uploading: ' : 'Upload finished: '}
          {done} of {items.length} uploaded{failed.length ? `, ${failed.length} failed` : ''}
          {running && left ? `, ${left} to go` : ''} · {bytes(sent)} of {bytes(total)}
        </span>
        {!running && (
          <button type="button" onClick={onDismiss}>
            Dismiss
          </button>
        )}
      </div>
      <ul class="upload-files">
        {shown.map((i) => (
          <li key={i.rel} class={`upload-${i.state}`}>
            <span class="upload-name">{i.rel}</span>
            <span class="upload-state">{i.state === 'sending' ? `${Math.floor((100 * i.loaded) / (i.size || 1))}%` : i.state}</span>
            {i.error && (
              <span class="upload-error">
                {i.error.status ? `${i.error.status}: ` : ''}
                {i.error.message}
              </span>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

function MakeDir({ id, dir, onClose, onDone }) {
  const [name, setName] = useState('');
  const s = useSubmit(async () => {
    await post(`/v1/vfolders/${encodeURIComponent(id)}/files/mkdir`, { path: joinPath(dir, name) });
    onDone();
  });
  return (
    <Dialog title="New directory" onClose={onClose}>
      <form onSubmit={s.submit} class="form">
        <ErrorBox error={s.error} />
        <Field label="Name" name="path" error={s.error} hint={dir ? `in ${dir}` : 'in the folder’s root'}>
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} required />
        </Field>
        <div class="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={s.busy}>
            Create
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function MoveEntry({ id, entry, onClose, onDone }) {
  const [to, setTo] = useState(entry.path);
  const s = useSubmit(async () => {
    await post(`/v1/vfolders/${encodeURIComponent(id)}/files/move`, { from: entry.path, to: to.replace(/^\/+/, '') });
    onDone();
  });
  return (
    <Dialog title={`Move or rename “${entry.name}”`} onClose={onClose}>
      <form onSubmit={s.submit} class="form">
        <ErrorBox error={s.error} />
        <Field label="New path" name="to" error={s.error} hint="from the folder’s root; its directory must exist">
          <input value={to} onInput={(e) => setTo(e.currentTarget.value)} required />
        </Field>
        <div class="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={s.busy}>
            Move
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function DeleteEntry({ id, entry, onClose, onDone }) {
  const dir = entry.type === 'dir';
  const s = useSubmit(async () => {
    await del(`/v1/vfolders/${encodeURIComponent(id)}/files?${new URLSearchParams({ path: entry.path, recursive: dir ? 'true' : 'false' })}`);
    onDone();
  });
  return (
    <Dialog title={`Delete “${entry.name}”`} onClose={onClose}>
      <form onSubmit={s.submit} class="form">
        <ErrorBox error={s.error} />
        <p>
          {dir ? 'The directory ' : 'The file '}
          <strong>{entry.path}</strong>
          {dir ? ' and everything in it' : ''} will be deleted. This cannot be undone.
        </p>
        <div class="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="danger" disabled={s.busy}>
            Delete
          </button>
        </div>
      </form>
    </Dialog>
  );
}
