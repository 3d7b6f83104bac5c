// The words a session's limits are shown with (no browser needed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { limitsText } from '../src/limits.js';

test('idle and lifetime in words', () => {
  const now = Date.parse('2026-11-27T09:00:00Z');
  const idle = { timeout_seconds: 3600, since: '2026-11-27T08:48:00Z', ends_at: '2026-11-27T09:48:00Z' };
  assert.equal(limitsText(idle, null, now), 'idle for 12 min, ends in 48 min if unused');
  assert.equal(
    limitsText(idle, { ends_at: '2026-11-27T14:00:00Z' }, now),
    'idle for 12 min, ends in 48 min if unused; ends in 5 h at the latest (maximum lifetime)',
  );
  assert.equal(limitsText(null, null, now), '');
});
