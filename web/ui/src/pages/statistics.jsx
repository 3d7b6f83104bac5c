// statistics.jsx — Statistics (everyone; the API decides whose usage each
// role sees): usage per UTC day from GET /v1/usage, grouped by user, project
// or domain, as charts over time (uPlot, one series per subject, days
// without use as 0), a table of totals per subject and a CSV export of the
// same filter.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { get } from '../api.js';
import { Empty, ErrorBox, Loading, useApi } from '../ui.jsx';
import { chartSeries, charted, dayOf, daysBetween, figures, lastDays, num, palette, series, subjects, tick } from '../usage.js';

/** Chart draws one figure per day, a line per subject. */
function Chart({ title, days, subjectSeries, field }) {
  const box = useRef(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return undefined;
    const xs = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const data = [xs, ...subjectSeries.map((s) => s.daily[field])];
    const width = () => Math.max(240, el.clientWidth);
    // The canvas draws in the stylesheet's muted colour (light or dark).
    const ink = getComputedStyle(el).color;
    const plot = new uPlot(
      {
        width: width(),
        height: 220,
        // The API's days are UTC days: label them as such, whatever the viewer's zone.
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { x: { time: true }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1] } },
        axes: [{ stroke: ink, grid: { stroke: 'rgba(128,128,128,0.2)' } }, { stroke: ink, grid: { stroke: 'rgba(128,128,128,0.2)' }, size: 60, values: (u, splits) => splits.map(tick) }],
        series: [
          { label: 'Day (UTC)', value: (u, v) => (v == null ? '--' : dayOf(new Date(v * 1000))) },
          ...subjectSeries.map((s, i) => ({
            label: s.label,
            stroke: palette[i % palette.length],
            width: 2,
            points: { show: days.length <= 62 },
            value: (u, v) => (v == null ? '--' : num(v)),
          })),
        ],
      },
      data,
      el,
    );
    const ro = new ResizeObserver(() => plot.setSize({ width: width(), height: 220 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.destroy();
    };
  }, [days, subjectSeries, field]);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} class="chart-box" role="img" aria-label={`${title} per day, one line per subject`} />
    </figure>
  );
}

export function StatisticsPage() {
  const [range, setRange] = useState(() => lastDays(30));
  const [groupBy, setGroupBy] = useState('user');
  const [filter, setFilter] = useState(() => ({ ...lastDays(30), group_by: 'user' }));
  const usage = useApi((signal) => get('/v1/usage', filter, { signal }), [filter.from, filter.to, filter.group_by]);
  const apply = (e) => {
    e.preventDefault();
    setFilter({ from: range.from, to: range.to, group_by: groupBy });
  };
  const data = usage.data;
  // Memoised by the answer, so the charts are drawn again only when it changes.
  const view = useRef({ data: null });
  if (data && view.current.data !== data) {
    const days = daysBetween(data.from, data.to);
    const all = series(data.items, data.group_by, days);
    view.current = { data, days, subjects: all, lines: chartSeries(all) };
  }
  const { days, subjects: subjectSeries, lines } = data ? view.current : {};
  const csvURL = `/v1/usage?${new URLSearchParams({ ...filter, format: 'csv' })}`;
  const head = (subjects[filter.group_by] || subjects.user).head;
  return (
    <section>
      <div class="page-head">
        <h1>Statistics</h1>
        <a class="button" href={csvURL} download={`usage-${filter.group_by}-${filter.from}-${filter.to}.csv`}>
          Export CSV
        </a>
      </div>
      <form class="filters stats-filters" onSubmit={apply}>
        <label>
          From (UTC day) <input type="date" name="from" value={range.from} required onInput={(e) => setRange((r) => ({ ...r, from: e.currentTarget.value }))} />
        </label>
        <label>
          To (UTC day) <input type="date" name="to" value={range.to} required onInput={(e) => setRange((r) => ({ ...r, to: e.currentTarget.value }))} />
        </label>
        <label>
          Group by{' '}
          <select name="group_by" value={groupBy} onChange={(e) => setGroupBy(e.currentTarget.value)}>
            <option value="user">user</option>
            <option value="project">project</option>
            <option value="domain">domain</option>
          </select>
        </label>
        <button type="submit" class="primary">
          Show
        </button>
      </form>
      <ErrorBox error={usage.error} />
      {usage.loading && <Loading />}
      {data && !usage.loading && (
        <p class="muted">
          {data.from} to {data.to} (UTC days), by {data.group_by}; running kernels counted up to the time of this answer.
        </p>
      )}
      {data && !subjectSeries.length && <Empty>No usage in this range.</Empty>}
      {data && subjectSeries.length > 0 && (
        <>
          <h2>Totals</h2>
          <div class="table-wrap">
            <table class="list totals">
              <thead>
                <tr>
                  <th>{head}</th>
                  <th>Sessions</th>
                  <th>Running hours</th>
                  <th>CPU hours</th>
                  <th>Memory GiB-hours</th>
                  <th>GPU hours</th>
                  <th>GPU share hours</th>
                </tr>
              </thead>
              <tbody>
                {subjectSeries.map((s, i) => (
                  <tr key={s.key}>
                    <th scope="row">
                      {i < lines.length - (lines.length < subjectSeries.length ? 1 : 0) && <span class="swatch" data-i={i} aria-hidden="true" />}
                      {s.label}
                    </th>
                    <td>{s.total.sessions}</td>
                    <td title={String(s.total.running_seconds / 3600)}>{num(s.total.running_seconds / 3600)}</td>
                    <td class="cpu-hours" title={String(s.total.cpu_hours)}>
                      {num(s.total.cpu_hours)}
                    </td>
                    <td title={String(s.total.mem_gib_hours)}>{num(s.total.mem_gib_hours)}</td>
                    <td title={String(s.total.gpu_hours)}>{num(s.total.gpu_hours)}</td>
                    <td title={String(s.total.gpu_share_hours)}>{num(s.total.gpu_share_hours)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <h2>Per day</h2>
          {lines.length < subjectSeries.length && (
            <p class="muted">
              The charts draw the {charted - 1} subjects with the most CPU hours and sum the other {subjectSeries.length - charted + 1} into one line; the table has them all.
            </p>
          )}
          <div class="charts">
            {figures.map((f) => (
              <Chart key={f.field} title={f.title} field={f.field} days={days} subjectSeries={lines} />
            ))}
          </div>
        </>
      )}
    </section>
  );
}
