import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, NavLink, Outlet, useLocation, useNavigate } from 'react-router';
import { post } from './api.ts';
import { useSession } from './session.ts';
import { ErrorNote, Loading } from './ui.tsx';

const NAV = [
  ['/dashboard', 'Dashboard'],
  ['/agents/new', 'New agent'],
  ['/mission-control', 'Mission control'],
  ['/swarms', 'Swarms'],
  ['/installations', 'Installations'],
  ['/usage', 'Usage'],
  ['/config', 'Configuration'],
  ['/schedules', 'Schedules'],
  ['/billing', 'Billing'],
  ['/wallet', 'Wallet'],
  ['/keys', 'API keys'],
  ['/settings', 'Settings'],
] as const;

/** The signed-in frame: navigation, sign-out, and the page. Signed-out visitors go to the sign-in page. */
export function SignedInLayout() {
  const session = useSession();
  const navigate = useNavigate();
  const location = useLocation();
  const queries = useQueryClient();
  const [menuOpen, setMenuOpen] = useState(false);
  const signOut = useMutation({
    mutationFn: () => post('/api/auth/signout'),
    onSuccess: () => {
      queries.clear();
      navigate('/login', { replace: true });
    },
  });
  const user = session.data?.user;
  // The menu closes when the page changes.
  const [menuPath, setMenuPath] = useState(location.pathname);
  if (menuPath !== location.pathname) {
    setMenuPath(location.pathname);
    setMenuOpen(false);
  }
  useEffect(() => {
    if (session.isSuccess && !user)
      navigate(`/login?next=${encodeURIComponent(location.pathname + location.search)}`, { replace: true });
  }, [session.isSuccess, user, navigate, location.pathname, location.search]);
  if (session.isPending)
    return (
      <main className="page">
        <Loading what="your session" />
      </main>
    );
  if (session.isError)
    return (
      <main className="page">
        <ErrorNote error={session.error} />
      </main>
    );
  if (!user) return null;
  return (
    <div className="shell">
      <a className="skip" href="#content">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/dashboard" className="brand">
          Agentyard
        </Link>
        <button
          type="button"
          className="menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <nav id="main-nav" aria-label="Main" className={menuOpen ? 'open' : undefined}>
          <ul>
            {NAV.map(([to, label]) => (
              <li key={to}>
                <NavLink to={to} end={to === '/agents/new'}>
                  {label}
                </NavLink>
              </li>
            ))}
            {user.isAdmin && (
              <li>
                <NavLink to="/admin/invites">Invites</NavLink>
              </li>
            )}
            <li>
              <a href="/api/docs">API docs</a>
            </li>
          </ul>
        </nav>
        <div className="who">
          <span className="who-name" title={user.email}>
            {user.name || user.email}
          </span>
          <button
            type="button"
            className="button secondary"
            onClick={() => signOut.mutate()}
            disabled={signOut.isPending}
          >
            {signOut.isPending ? 'Signing out…' : 'Sign out'}
          </button>
        </div>
      </header>
      {!user.emailVerified && (
        <p className="banner" role="status">
          Your email address is not verified yet: open the link we mailed to {user.email}.{' '}
          <Link to="/settings">Send it again</Link>
        </p>
      )}
      <ErrorNote error={signOut.error} />
      <main id="content" className="page" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  );
}

/** The signed-out frame (sign-in, registration, password reset, email links). */
export function PublicLayout() {
  return (
    <div className="public">
      <header className="public-head">
        <Link to="/" className="brand">
          Agentyard
        </Link>
      </header>
      <main id="content" className="page narrow">
        <Outlet />
      </main>
    </div>
  );
}
