// login.jsx — log in with e-mail address and password; the login token goes
// into an HttpOnly cookie (POST /v1/auth/session).
import { useState } from 'preact/hooks';
import { post } from '../api.js';
import { ErrorBox } from '../ui.jsx';

export function LoginPage({ notice, onLoggedIn }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onLoggedIn(await post('/v1/auth/session', { email, password }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login" id="main">
      <form onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">Cairn</h1>
        <p class="muted">Log in to your GPU cluster.</p>
        {notice && (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
        <ErrorBox error={error} />
        <label class="field">
          <span>E-mail address</span>
          <input type="email" name="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} autofocus />
        </label>
        <label class="field">
          <span>Password</span>
          <input type="password" name="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </label>
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Logging in…' : 'Log in'}
        </button>
      </form>
    </main>
  );
}
