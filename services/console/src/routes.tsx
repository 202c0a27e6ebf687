import { createBrowserRouter, Link, Navigate } from 'react-router';
import { PublicLayout, SignedInLayout } from './layout.tsx';
import { ForgotPasswordPage, LoginPage, RegisterPage, ResetPasswordPage, VerifyEmailPage } from './pages/auth.tsx';
import { AgentLayout, AgentOverviewPage, NewAgentPage } from './pages/agents.tsx';
import { ChatPage } from './pages/agent-chat.tsx';
import { AgentConfigPage } from './pages/agent-config.tsx';
import { DevicesPage } from './pages/agent-devices.tsx';
import { FilesPage } from './pages/agent-files.tsx';
import { LogsPage } from './pages/agent-logs.tsx';
import { MemoryPage } from './pages/agent-memory.tsx';
import { MetricsPage } from './pages/agent-metrics.tsx';
import { SkillsPage } from './pages/agent-skills.tsx';
import { SnapshotsPage } from './pages/agent-snapshots.tsx';
import { ChannelsPage } from './pages/agent-channels.tsx';
import { BillingPage } from './pages/billing.tsx';
import { DashboardPage } from './pages/dashboard.tsx';
import { KeysPage } from './pages/keys.tsx';
import { SchedulesPage } from './pages/schedules.tsx';
import { AdminInvitesPage } from './pages/admin-invites.tsx';
import { ConfigPage } from './pages/config.tsx';
import { SettingsPage } from './pages/settings.tsx';
import { UsagePage } from './pages/usage.tsx';
import { MissionControlPage } from './pages/mission-control.tsx';
import { SwarmsPage } from './pages/swarms.tsx';
import { InstallationsPage } from './pages/installations.tsx';
import { WalletPage } from './pages/wallet.tsx';

function NotFoundPage() {
  return (
    <>
      <h1>Page not found</h1>
      <p>
        There is no page at this address. <Link to="/dashboard">Go to your dashboard</Link>.
      </p>
    </>
  );
}

export const router = createBrowserRouter([
  {
    element: <PublicLayout />,
    children: [
      { path: '/login', element: <LoginPage /> },
      { path: '/register', element: <RegisterPage /> },
      { path: '/verify-email', element: <VerifyEmailPage /> },
      { path: '/forgot-password', element: <ForgotPasswordPage /> },
      { path: '/reset-password', element: <ResetPasswordPage /> },
    ],
  },
  {
    element: <SignedInLayout />,
    children: [
      { path: '/', element: <Navigate to="/dashboard" replace /> },
      { path: '/dashboard', element: <DashboardPage /> },
      { path: '/agents/new', element: <NewAgentPage /> },
      {
        path: '/agents/:id',
        element: <AgentLayout />,
        children: [
          { index: true, element: <AgentOverviewPage /> },
          { path: 'chat', element: <ChatPage /> },
          { path: 'logs', element: <LogsPage /> },
          { path: 'files', element: <FilesPage /> },
          { path: 'memory', element: <MemoryPage /> },
          { path: 'skills', element: <SkillsPage /> },
          { path: 'metrics', element: <MetricsPage /> },
          { path: 'devices', element: <DevicesPage /> },
          { path: 'channels', element: <ChannelsPage /> },
          { path: 'snapshots', element: <SnapshotsPage /> },
          { path: 'config', element: <AgentConfigPage /> },
        ],
      },
      { path: '/mission-control', element: <MissionControlPage /> },
      { path: '/swarms', element: <SwarmsPage /> },
      { path: '/installations', element: <InstallationsPage /> },
      { path: '/usage', element: <UsagePage /> },
      { path: '/config', element: <ConfigPage /> },
      { path: '/schedules', element: <SchedulesPage /> },
      { path: '/billing', element: <BillingPage /> },
      { path: '/wallet', element: <WalletPage /> },
      { path: '/keys', element: <KeysPage /> },
      { path: '/settings', element: <SettingsPage /> },
      { path: '/admin/invites', element: <AdminInvitesPage /> },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
]);
