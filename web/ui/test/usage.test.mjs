// The Statistics page's arithmetic (src/usage.js), without a browser: the
// days of a range, missing days filled with 0, one series per subject with
// its totals, the subjects past the charted ones summed into one line, and
// the number formats.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chartSeries, charted, daysBetween, lastDays, num, series, tick } from '../src/usage.js';

test('daysBetween lists every UTC day of the range, both ends included', () => {
  assert.deepEqual(daysBetween('2026-02-27', '2026-03-02'), ['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02']);
  assert.deepEqual(daysBetween('2026-03-02', '2026-03-01'), []);
  const r = lastDays(30);
  assert.equal(daysBetween(r.from, r.to).length, 30);
  assert.equal(r.to, new Date().toISOString().slice(0, 10));
});

const row = (day, user_id, cpu_hours, sessions = 0) => ({
  day, user_id, user_email: `${user_id}@example.com`, domain: 'default', sessions, running_seconds: cpu_hours * 3600,
  cpu_hours, mem_gib_hours: cpu_hours / 2, gpu_hours: 0, gpu_share_hours: 0, slots: {},
});

test('series fills the days without a row with 0 and totals each subject, the most CPU hours first', () => {
  const days = daysBetween('2026-01-01', '2026-01-04');
  const s = series([row('2026-01-02', 'a', 1, 1), row('2026-01-04', 'a', 2), row('2026-01-03', 'b', 5, 2)], 'user', days);
  assert.deepEqual(s.map((x) => x.label), ['b@example.com', 'a@example.com']);
  assert.deepEqual(s[1].daily.cpu_hours, [0, 1, 0, 2]);
  assert.deepEqual(s[1].daily.sessions, [0, 1, 0, 0]);
  assert.deepEqual(s[0].daily.mem_gib_hours, [0, 0, 2.5, 0]);
  assert.equal(s[1].total.cpu_hours, 3);
  assert.equal(s[1].total.running_seconds, 3 * 3600);
  assert.equal(s[0].total.sessions, 2);
  // By project and by domain the subject is the project (in its domain) and the domain.
  const p = series([{ ...row('2026-01-01', 'a', 1), project: 'p1' }, { ...row('2026-01-01', 'b', 1), project: 'p1', domain: 'd2' }], 'project', days);
  assert.deepEqual(p.map((x) => x.label).sort(), ['p1 (d2)', 'p1 (default)']);
  assert.equal(series([row('2026-01-01', 'a', 1), row('2026-01-01', 'b', 1)], 'domain', days).length, 1);
});

test('past the charted subjects, the rest are summed into one line', () => {
  const days = daysBetween('2026-01-01', '2026-01-02');
  const rows = [];
  for (let i = 0; i < charted + 5; i++) rows.push(row('2026-01-02', `u${String(i).padStart(2, '0')}`, i + 1));
  const all = series(rows, 'user', days);
  const lines = chartSeries(all);
  assert.equal(lines.length, charted);
  const others = lines.at(-1);
  assert.equal(others.label, '6 others');
  assert.deepEqual(others.daily.cpu_hours, [0, 1 + 2 + 3 + 4 + 5 + 6]);
  assert.equal(chartSeries(all.slice(0, charted)).length, charted);
});

test('small amounts stay visible', () => {
  assert.equal(num(0), '0');
  assert.equal(num(0.000683), '0.00068');
  assert.equal(num(1.234), '1.23');
  assert.equal(num(1234.5), '1235');
  assert.equal(tick(0.00030000000000000003), '0.0003');
});
