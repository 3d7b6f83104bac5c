// usage.js — the Statistics page's arithmetic over GET /v1/usage's rows
// (kept apart from the page so Node's test runner can check it alone):
// every UTC day of the range, one series per subject with 0 on the days
// the API has no row for, totals, and the number formats.

const DAY = 86400; // seconds

/** dayOf is a time's UTC day, YYYY-MM-DD. */
export const dayOf = (d) => d.toISOString().slice(0, 10);

/** lastDays is the range of the last n UTC days, today included. */
export function lastDays(n) {
  const to = new Date();
  const from = new Date(to.getTime() - (n - 1) * DAY * 1000);
  return { from: dayOf(from), to: dayOf(to) };
}

/** daysBetween lists the UTC days from..to (YYYY-MM-DD), both included. */
export function daysBetween(from, to) {
  const out = [];
  const end = Date.parse(`${to}T00:00:00Z`);
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= end && out.length <= 366; t += DAY * 1000) out.push(dayOf(new Date(t)));
  return out;
}

/** subjects: per grouping, a row's key and its label. */
export const subjects = {
  user: { key: (r) => r.user_id, label: (r) => r.user_email || r.user_name || r.user_id, head: 'User' },
  project: { key: (r) => `${r.domain}/${r.project}`, label: (r) => `${r.project} (${r.domain})`, head: 'Project' },
  domain: { key: (r) => r.domain, label: (r) => r.domain, head: 'Domain' },
};

/** figures are the charts and the totals' columns. */
export const figures = [
  { field: 'cpu_hours', title: 'CPU hours' },
  { field: 'mem_gib_hours', title: 'Memory GiB-hours' },
  { field: 'gpu_hours', title: 'GPU hours (whole devices)' },
  { field: 'gpu_share_hours', title: 'GPU share hours' },
  { field: 'sessions', title: 'Sessions started' },
];

export const palette = ['#2457c5', '#d1495b', '#18794e', '#9a6700', '#7b3fbf', '#00798c', '#c45a00', '#5d6778', '#b8336a', '#3a7d44'];

/** num formats a figure: small amounts keep two significant digits, so a few seconds of use is not shown as 0. */
export function num(v) {
  if (!v) return '0';
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 1) return v.toFixed(2);
  return v.toPrecision(2);
}

/** tick labels an axis value with three significant digits at most (small amounts stay distinct). */
export const tick = (v) => (v == null ? '' : String(Number(v.toPrecision(3))));

/**
 * series turns the rows into per-subject daily figures over every day of
 * the range (0 on the days the API has no row for).
 */
export function series(rows, groupBy, days) {
  const s = subjects[groupBy] || subjects.user;
  const index = new Map(days.map((d, i) => [d, i]));
  const bySubject = new Map();
  for (const r of rows) {
    const k = s.key(r);
    let x = bySubject.get(k);
    if (!x) {
      x = { key: k, label: s.label(r), daily: {}, total: { running_seconds: 0 } };
      for (const f of figures) {
        x.daily[f.field] = new Array(days.length).fill(0);
        x.total[f.field] = 0;
      }
      bySubject.set(k, x);
    }
    const i = index.get(r.day);
    for (const f of figures) {
      const v = Number(r[f.field]) || 0;
      if (i !== undefined) x.daily[f.field][i] += v;
      x.total[f.field] += v;
    }
    x.total.running_seconds += Number(r.running_seconds) || 0;
  }
  return [...bySubject.values()].sort((a, b) => b.total.cpu_hours - a.total.cpu_hours || a.label.localeCompare(b.label));
}

/** charted is how many subjects the charts draw a line each for; the rest are summed into one line. */
export const charted = 10;

/** chartSeries are the lines of the charts: the first subjects (by CPU hours), then the others summed. */
export function chartSeries(subjectSeries) {
  if (subjectSeries.length <= charted) return subjectSeries;
  const top = subjectSeries.slice(0, charted - 1);
  const rest = subjectSeries.slice(charted - 1);
  const others = { key: '\u0000others', label: `${rest.length} others`, daily: {} };
  for (const f of figures) others.daily[f.field] = rest[0].daily[f.field].map((_, i) => rest.reduce((sum, x) => sum + x.daily[f.field][i], 0));
  return [...top, others];
}

