// environments.jsx — the image registry: what sessions may run, the apps
// each image serves (service ports) and the least and most a session of it
// may request. Superadmins register, edit and forget images.
import { useState } from 'preact/hooks';
import { del, get, patch, post } from '../api.js';
import { Confirm, Dialog, Empty, ErrorBox, Field, Loading, Slots, Time, parseSlots, slotsText, useApi, useForm, useSubmit } from '../ui.jsx';

/** portsText writes service ports as "jupyter:http:8888, ttyd:http:7681". */
const portsText = (ports) => (ports || []).map((p) => `${p.name}:${p.protocol}:${p.port}`).join(', ');

/** parsePorts reads "name:protocol:port, ..." (the server checks them). */
function parsePorts(text) {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const [name, protocol, port] = s.split(':');
      return { name, protocol, port: Number(port) };
    });
}

export function EnvironmentsPage({ me }) {
  const list = useApi((signal) => get('/v1/images', {}, { signal }), []);
  const [editing, setEditing] = useState(null); // an image, or {} to register one
  const [forgetting, setForgetting] = useState(null);
  const admin = me.role === 'superadmin';
  return (
    <section>
      <div class="page-head">
        <h1>Environments</h1>
        {admin && (
          <button type="button" class="primary" onClick={() => setEditing({})}>
            Register image
          </button>
        )}
      </div>
      <p class="muted">The images sessions may run, the apps each one serves, and the resources a session of it may request.</p>
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading />}
      {list.data && !list.data.items.length && <Empty>No image is registered.</Empty>}
      {list.data && list.data.items.length > 0 && (
        <div class="table-wrap">
          <table class="list">
            <thead>
              <tr>
                <th>Image</th>
                <th>Architecture</th>
                <th>Apps (service ports)</th>
                <th>Minimum per kernel</th>
                <th>Maximum per kernel</th>
                <th>Registered</th>
                {admin && <th>Actions</th>}
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((i) => (
                <tr key={i.id}>
                  <td>{i.reference}</td>
                  <td>{i.architecture}</td>
                  <td>{(i.service_ports || []).length ? (i.service_ports || []).map((p) => `${p.name} (${p.protocol} ${p.port})`).join(', ') : <span class="muted">none</span>}</td>
                  <td>
                    <Slots slots={i.min_resource_slots} />
                  </td>
                  <td>
                    <Slots slots={i.max_resource_slots} />
                  </td>
                  <td>
                    <Time at={i.registered_at} />
                  </td>
                  {admin && (
                    <td class="actions-cell">
                      <button type="button" onClick={() => setEditing(i)}>
                        Edit
                      </button>{' '}
                      <button type="button" class="danger" onClick={() => setForgetting(i)}>
                        Forget
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {forgetting && (
        <Confirm
          title="Forget image"
          action="Forget"
          act={() => del(`/v1/images/${encodeURIComponent(forgetting.id)}`)}
          onClose={(done) => {
            setForgetting(null);
            if (done) list.reload();
          }}
        >
          <p>
            Forget {forgetting.reference} ({forgetting.architecture})? New sessions can no longer request it; running ones are not touched.
          </p>
        </Confirm>
      )}
      {editing && (
        <EditImage
          image={editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            list.reload();
          }}
        />
      )}
    </section>
  );
}

function EditImage({ image, onClose, onSaved }) {
  const isNew = !image.id;
  const [v, bind] = useForm({
    reference: image.reference || '',
    architecture: image.architecture || 'x86_64',
    ports: portsText(image.service_ports),
    min: slotsText(image.min_resource_slots),
    max: slotsText(image.max_resource_slots),
  });
  const { error, busy, submit } = useSubmit(async () => {
    const spec = { service_ports: parsePorts(v.ports), min_resource_slots: parseSlots(v.min), max_resource_slots: parseSlots(v.max) };
    if (isNew) await post('/v1/images', { reference: v.reference, architecture: v.architecture, ...spec });
    else await patch(`/v1/images/${encodeURIComponent(image.id)}`, spec);
    onSaved();
  });
  return (
    <Dialog title={isNew ? 'Register image' : `Edit ${image.reference}`} onClose={onClose}>
      <form onSubmit={submit} class="form">
        <ErrorBox error={error} />
        {isNew && (
          <>
            <Field label="Reference" name="reference" error={error} hint="e.g. localhost/cairn/python:latest">
              <input {...bind('reference')} required />
            </Field>
            <Field label="Architecture" name="architecture" error={error}>
              <input {...bind('architecture')} />
            </Field>
          </>
        )}
        <Field label="Apps" name="service_ports" error={error} hint="name:protocol:port, separated by commas (protocol http or tcp)">
          <input {...bind('ports')} />
        </Field>
        <Field label="Minimum per kernel" name="min_resource_slots" error={error} hint="e.g. cpu=1, mem=512m">
          <input {...bind('min')} />
        </Field>
        <Field label="Maximum per kernel" name="max_resource_slots" error={error} hint="empty: no maximum">
          <input {...bind('max')} />
        </Field>
        <div class="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Saving…' : 'Save'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
