// main.js — the terminal page the app proxy serves at
// /v1/sessions/{id}/apps/terminal/: xterm.js over the terminal's WebSocket
// ("socket" beside the page; the app cookie authenticates it).
//
// Frames: binary both ways carry the terminal's bytes (UTF-8); text frames
// are JSON control. The page sends {"type":"resize","cols","rows"}; the
// agent sends {"type":"attached","terminal","new"} first, then (when it
// reattaches) the scrollback, then live output, and {"type":"exit","code"}
// when the shell ends.
//
// The terminal's id is kept in sessionStorage per session: a reload, or a
// reconnection after the network dropped, reattaches to the same shell,
// which the agent keeps while no client is attached. "New terminal" starts
// another shell. One client at a time: when another window attaches the
// same terminal, the agent closes this one with status 4001 and the page
// waits for Reconnect (which takes it back) instead of fighting for it.
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import '@xterm/xterm/css/xterm.css';
import './terminal.css';
import { firstDelay, newTerminalId, nextDelay, sessionOf, socketURL } from './link.js';

const session = sessionOf(location.pathname);
const storageKey = `cairn.terminal.${session}`;
const statusLine = document.getElementById('status');
const reconnectButton = document.getElementById('reconnect');

/** The agent's close status for a client whose terminal another client attached. */
const takenOver = 4001;
if (session) document.title = `Terminal · ${session.slice(0, 8)} · Cairn`;

const term = new Terminal({
  cursorBlink: true,
  fontFamily: "ui-monospace, 'SFMono-Regular', Menlo, Consolas, 'DejaVu Sans Mono', monospace",
  fontSize: 14,
  scrollback: 5000,
  theme: {
    background: '#101317',
    foreground: '#d8dde6',
    cursor: '#d8dde6',
    selectionBackground: '#3a4456',
  },
});
const fit = new FitAddon();
term.loadAddon(fit);
term.open(document.getElementById('terminal'));
fit.fit();
term.focus();

const encoder = new TextEncoder();
let id = storedId();
let ws = null; // the socket in use; null while waiting to reconnect
let timer = 0;
let delay = firstDelay;
let exited = false;

/** storedId answers this session's terminal id, made and kept on first use. */
function storedId(fresh = false) {
  let v = '';
  try {
    v = fresh ? '' : sessionStorage.getItem(storageKey) || '';
    if (!v) {
      v = newTerminalId();
      sessionStorage.setItem(storageKey, v);
    }
  } catch {
    v = v || newTerminalId(); // storage refused (private mode): the id lives as long as the page
  }
  return v;
}

function status(text, kind = '') {
  statusLine.textContent = text;
  statusLine.className = kind;
}

function send(data) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(data);
}

function connect() {
  clearTimeout(timer);
  timer = 0;
  reconnectButton.hidden = true;
  const sock = new WebSocket(socketURL(location.href, id, term.cols, term.rows));
  sock.binaryType = 'arraybuffer';
  ws = sock;
  let attached = false;
  sock.onmessage = (e) => {
    if (ws !== sock) return;
    if (typeof e.data !== 'string') {
      term.write(new Uint8Array(e.data));
      return;
    }
    let msg;
    try {
      msg = JSON.parse(e.data);
    } catch {
      return;
    }
    if (msg.type === 'attached') {
      attached = true;
      delay = firstDelay;
      // A reattached shell's scrollback follows and redraws the screen.
      if (!msg.new) term.reset();
      status(msg.new ? 'connected (a new shell)' : 'connected', 'ok');
    } else if (msg.type === 'exit') {
      exited = true;
      status(`the shell exited (code ${msg.code})`, 'bad');
    }
  };
  sock.onclose = (e) => {
    if (ws !== sock) return; // replaced by New terminal
    ws = null;
    if (exited) return;
    if (e.code === takenOver) {
      status('opened in another window: Reconnect takes it back here', 'bad');
      reconnectButton.hidden = false;
      return;
    }
    retry(attached);
  };
}

// retry reconnects after an unexpected close, waiting 0.5 s, doubling to
// 5 s. A browser does not tell a page why an upgrade was refused, so when
// a socket closed before it attached, the page asks for itself (same
// origin, the same cookie): a 404 means the link no longer opens this
// session's terminal (the cookie expired, the session ended), and
// reconnecting cannot help. Anything else (the proxy restarting, the
// network gone) is worth another try.
async function retry(wasAttached) {
  if (!wasAttached && (await linkGone())) {
    status('this link has expired: open the terminal again from Cairn', 'bad');
    return;
  }
  status('reconnecting…');
  timer = setTimeout(connect, delay);
  delay = nextDelay(delay);
}

async function linkGone() {
  try {
    const res = await fetch(location.href, { method: 'HEAD', cache: 'no-store', credentials: 'same-origin' });
    return res.status === 404 || res.status === 401 || res.status === 403;
  } catch {
    return false; // the proxy cannot be reached now
  }
}

term.onData((d) => send(encoder.encode(d)));
// Some mouse reports are bytes, not UTF-8 text.
term.onBinary((d) => send(Uint8Array.from(d, (c) => c.charCodeAt(0) & 0xff)));
term.onResize(({ cols, rows }) => send(JSON.stringify({ type: 'resize', cols, rows })));

let fitFrame = 0;
window.addEventListener('resize', () => {
  if (!fitFrame) {
    fitFrame = requestAnimationFrame(() => {
      fitFrame = 0;
      fit.fit();
    });
  }
});
// Back online: do not wait out the backoff.
window.addEventListener('online', () => {
  if (timer) {
    delay = firstDelay;
    connect();
  }
});

reconnectButton.addEventListener('click', () => {
  delay = firstDelay;
  status('connecting…');
  connect();
  term.focus();
});

document.getElementById('new').addEventListener('click', () => {
  // The old shell is left to the agent, which ends it after its time
  // without a client.
  id = storedId(true);
  exited = false;
  delay = firstDelay;
  const old = ws;
  ws = null;
  old?.close(1000);
  term.reset();
  status('connecting…');
  connect();
  term.focus();
});

connect();
