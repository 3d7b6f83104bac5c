// The terminal page's pure parts (src/terminal/link.js), without a
// browser: the session of the page's path, terminal ids, the socket's URL
// beside the page and the reconnection delays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstDelay, maxDelay, newTerminalId, nextDelay, sessionOf, socketURL } from '../src/terminal/link.js';

const sid = '0190d7a2-0000-7000-8000-000000000000';

test('sessionOf reads the session of the terminal path', () => {
  assert.equal(sessionOf(`/v1/sessions/${sid}/apps/terminal/`), sid);
  assert.equal(sessionOf(`/v1/sessions/${sid}/apps/terminal`), sid);
  assert.equal(sessionOf(`/v1/sessions/${sid}/apps/jupyter/`), '');
  assert.equal(sessionOf('/'), '');
});

test('newTerminalId makes version 4 UUIDs, a new one each time', () => {
  const a = newTerminalId();
  assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.notEqual(newTerminalId(), a);
  // The version and variant bits are set whatever the random bytes.
  assert.equal(newTerminalId((b) => b.fill(0xff)), 'ffffffff-ffff-4fff-bfff-ffffffffffff');
  assert.equal(newTerminalId((b) => b.fill(0)), '00000000-0000-4000-8000-000000000000');
});

test('socketURL is "socket" beside the page, ws: or wss: as the page, without the page query', () => {
  const page = `http://127.0.0.1:8081/v1/sessions/${sid}/apps/terminal/`;
  assert.equal(socketURL(page, 'T', 80, 24), `ws://127.0.0.1:8081/v1/sessions/${sid}/apps/terminal/socket?terminal=T&cols=80&rows=24`);
  assert.equal(
    socketURL(`https://apps.example.com/v1/sessions/${sid}/apps/terminal/?x=1#y`, 'T', 120, 40),
    `wss://apps.example.com/v1/sessions/${sid}/apps/terminal/socket?terminal=T&cols=120&rows=40`,
  );
});

test('reconnection waits 0.5 s, doubling, at most 5 s', () => {
  const seen = [];
  for (let d = firstDelay, i = 0; i < 7; i++, d = nextDelay(d)) seen.push(d);
  assert.deepEqual(seen, [500, 1000, 2000, 4000, 5000, 5000, 5000]);
  assert.equal(maxDelay, 5000);
});
