// app.jsx — the shell: who is logged in, the menu for their role, the page
// for the location.
import { useEffect, useState } from 'preact/hooks';
import { del, get, onUnauthorized, setCSRFToken } from './api.js';
import { adminRoles, auditRoles, visibleMenu } from './menu.js';
import { closeLive } from './live.js';
import { Link, match, navigate, useLocation } from './router.jsx';
import { ErrorBox, Loading } from './ui.jsx';
import { LoginPage } from './pages/login.jsx';
import { StartPage } from './pages/start.jsx';
import { DashboardPage } from './pages/dashboard.jsx';
import { SessionsPage } from './pages/sessions.jsx';
import { SessionPage } from './pages/session.jsx';
import { UsersPage } from './pages/users.jsx';
import { EnvironmentsPage } from './pages/environments.jsx';
import { AgentsPage } from './pages/agents.jsx';
import { ResourcesPage } from './pages/resources.jsx';
import { PoliciesPage } from './pages/policies.jsx';
import { AuditPage } from './pages/audit.jsx';
import { SettingsPage } from './pages/settings.jsx';
import { DataPage } from './pages/data.jsx';
import { FilesPage } from './pages/files.jsx';
import { InformationPage } from './pages/information.jsx';
import { MaintenancePage } from './pages/maintenance.jsx';
import { StatisticsPage } from './pages/statistics.jsx';
import { SchedulerPage } from './pages/scheduler.jsx';

/**
 * routes map page paths to [pattern, page, title, roles]; the first match
 * wins. A page with roles is shown only to them; the others get a 403 and
 * no request is made (the API refuses them too).
 */
const routes = [
  ['/', StartPage, 'Start'],
  ['/dashboard', DashboardPage, 'Dashboard'],
  ['/sessions', SessionsPage, 'Sessions'],
  ['/sessions/:id', SessionPage, 'Session'],
  ['/environments', EnvironmentsPage, 'Environments'],
  ['/agents', AgentsPage, 'Agent Summary'],
  ['/data', DataPage, 'Data'],
  ['/data/:id', FilesPage, 'Folder'],
  ['/statistics', StatisticsPage, 'Statistics'],
  ['/admin/users', UsersPage, 'Users', adminRoles],
  ['/admin/resources', ResourcesPage, 'Resources', adminRoles],
  ['/admin/policies', PoliciesPage, 'Resource Policy', adminRoles],
  ['/admin/audit', AuditPage, 'Audit', auditRoles],
  ['/admin/settings', SettingsPage, 'Configurations', ['superadmin']],
  ['/admin/maintenance', MaintenancePage, 'Maintenance', ['superadmin']],
  ['/admin/information', InformationPage, 'Information', ['superadmin']],
  ['/admin/scheduler', SchedulerPage, 'Scheduler', adminRoles],
];

function ForbiddenPage({ title }) {
  return (
    <section>
      <h1>{title}</h1>
      <ErrorBox error={{ status: 403, message: 'This page is for administrators; your role may not see it.' }} />
    </section>
  );
}

function NotFoundPage() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        There is no page here. <Link href="/">Go to the start page.</Link>
      </p>
    </section>
  );
}

// The principal of the last whoami, kept for this tab (sessionStorage): a
// page loaded again renders at once with it and asks for its data while
// whoami confirms it (a 401 from either ends in the login page; a changed
// role re-renders). It holds what whoami answers, nothing secret.
const ME_KEY = 'cairn.me';

function rememberedMe() {
  try {
    return JSON.parse(sessionStorage.getItem(ME_KEY) || 'null') || undefined;
  } catch {
    return undefined;
  }
}

function remember(p) {
  try {
    if (p) sessionStorage.setItem(ME_KEY, JSON.stringify(p));
    else sessionStorage.removeItem(ME_KEY);
  } catch {
    // Storage may be unavailable (private modes): the page only loads slower.
  }
}

export function App() {
  // me: undefined while unknown, null when logged out, else the principal.
  const [me, setMeState] = useState(rememberedMe);
  const setMe = (p) => {
    remember(p);
    // The same principal as remembered keeps its object: no re-render.
    setMeState((cur) => (cur && p && JSON.stringify(cur) === JSON.stringify(p) ? cur : p));
  };
  const [notice, setNotice] = useState('');
  const [error, setError] = useState(null);
  const loc = useLocation();

  useEffect(() => {
    get('/v1/auth/whoami').then(
      (p) => setMe(p),
      (e) => (e.status === 401 ? setMe(null) : setError(e)),
    );
    return onUnauthorized(() => {
      closeLive();
      setNotice('Your login has expired or was ended. Log in again.');
      setMe(null);
    });
  }, []);

  useEffect(() => {
    const found = routes.find(([p]) => match(p, loc));
    document.title = found ? `${found[2]} · Cairn` : 'Cairn';
  }, [loc]);

  if (error) return <ErrorBox error={error} />;
  if (me === undefined) return <Loading what="Starting" />;
  if (me === null) {
    return (
      <LoginPage
        notice={notice}
        onLoggedIn={(s) => {
          setCSRFToken(s.csrf_token);
          setNotice('');
          get('/v1/auth/whoami').then(setMe, setError);
        }}
      />
    );
  }

  const logout = async () => {
    try {
      await del('/v1/auth/session');
    } catch (e) {
      if (e.status !== 401) {
        setError(e);
        return;
      }
    }
    closeLive();
    setCSRFToken('');
    setNotice('You have logged out.');
    setMe(null);
    navigate('/', { replace: true });
  };

  let page = <NotFoundPage />;
  for (const [pattern, Page, title, roles] of routes) {
    const params = match(pattern, loc);
    if (params) {
      page = roles && !roles.includes(me.role) ? <ForbiddenPage title={title} /> : <Page me={me} params={params} loc={loc} />;
      break;
    }
  }
  const path = loc.split('?')[0];
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link href="/" class="brand">
          Cairn
        </Link>
        <span class="who">
          <span class="email">{me.email}</span> <span class="role">{me.role}</span> · {me.domain}
        </span>
        <button type="button" class="logout" onClick={logout}>
          Log out
        </button>
      </header>
      <nav class="menu" aria-label="menu">
        {visibleMenu(me.role).map((s) => (
          <div class="menu-section" key={s.title}>
            <h2>{s.title}</h2>
            <ul>
              {s.items.map((i) => (
                <li key={i.href}>
                  <Link href={i.href} aria-current={path === i.href ? 'page' : undefined}>
                    {i.label}
                  </Link>
                </li>
              ))}
            </ul>
          </div>
        ))}
      </nav>
      <main id="main" tabIndex={-1}>
        {page}
      </main>
    </div>
  );
}
