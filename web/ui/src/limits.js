// limits.js — what a session's limits mean to its user: how long it has
// been unused and when it ends (GET /v1/sessions/{id}: idle, lifetime).

// minutes shows a duration in whole minutes (hours past two hours).
export function minutes(ms) {
  const m = Math.max(0, Math.round(ms / 60000));
  if (m >= 120) return `${Math.round(m / 60)} h`;
  return `${m} min`;
}

// limitsText says "idle for 12 min, ends in 48 min if unused" (and the
// lifetime's end, if any), or '' when no limit applies.
export function limitsText(idle, lifetime, now = Date.now()) {
  const parts = [];
  if (idle) {
    const since = Date.parse(idle.since);
    const ends = Date.parse(idle.ends_at);
    parts.push(`idle for ${minutes(now - since)}, ends in ${minutes(ends - now)} if unused`);
  }
  if (lifetime) {
    parts.push(`ends in ${minutes(Date.parse(lifetime.ends_at) - now)} at the latest (maximum lifetime)`);
  }
  return parts.join('; ');
}
