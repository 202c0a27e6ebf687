import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { get, post } from '../api.ts';
import { loginErrorWords } from '../format.ts';
import { SESSION_KEY, useSession } from '../session.ts';
import { injectedWallet, siweMessage } from '../siwe.ts';
import type { SignInOptions } from '../types.ts';
import { Button, ErrorNote, Field, Notice } from '../ui.tsx';

/** Where to go after signing in: the page that sent the person here when it is one of ours, else the dashboard. */
function nextPage(params: URLSearchParams): string {
  const next = params.get('next');
  return next?.startsWith('/') && !next.startsWith('//') ? next : '/dashboard';
}

function useSignInOptions() {
  return useQuery({
    queryKey: ['sign-in-options'],
    queryFn: () => get<SignInOptions>('/api/auth/options'),
    staleTime: 300_000,
  });
}

export function LoginPage() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const queries = useQueryClient();
  const session = useSession();
  const options = useSignInOptions();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const login = useMutation({
    mutationFn: () => post('/api/auth/login', { email, password }),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: SESSION_KEY });
      navigate(nextPage(params), { replace: true });
    },
  });
  useEffect(() => {
    if (session.data?.user && !login.isPending) navigate(nextPage(params), { replace: true });
  }, [session.data, navigate, params, login.isPending]);
  const problem = loginErrorWords(params.get('error'));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    login.mutate();
  };
  return (
    <>
      <h1>Sign in</h1>
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      <form onSubmit={submit} className="card stack">
        <Field
          label="Email"
          type="email"
          autoComplete="email"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <Field
          label="Password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        <ErrorNote error={login.error} />
        <Button type="submit" busy={login.isPending} busyLabel="Signing in…">
          Sign in
        </Button>
        <p>
          <Link to="/forgot-password">Forgot your password?</Link>
        </p>
      </form>
      <OtherSignIns invite={undefined} />
      <p>
        New here? <Link to="/register">Create an account</Link>
      </p>
      {options.isError && <ErrorNote error={options.error} />}
    </>
  );
}

/** Google, GitHub (when this server has them set up) and an injected wallet (when the browser has one). */
function OtherSignIns({ invite }: { invite: string | undefined }) {
  const options = useSignInOptions();
  const wallet = injectedWallet();
  const inviteQuery = invite ? `?inviteToken=${encodeURIComponent(invite)}` : '';
  const google = options.data?.google;
  const github = options.data?.github;
  if (!google && !github && !wallet) return null;
  return (
    <section className="card stack" aria-labelledby="other-sign-in">
      <h2 id="other-sign-in">Or sign in with</h2>
      {google && (
        <a className="button secondary" href={`/api/auth/google${inviteQuery}`}>
          Sign in with Google
        </a>
      )}
      {github && (
        <a className="button secondary" href={`/api/auth/github${inviteQuery}`}>
          Sign in with GitHub
        </a>
      )}
      {wallet && <WalletSignIn invite={invite} />}
    </section>
  );
}

function WalletSignIn({ invite }: { invite: string | undefined }) {
  const navigate = useNavigate();
  const queries = useQueryClient();
  const signIn = useMutation({
    mutationFn: async () => {
      const wallet = injectedWallet();
      if (!wallet) throw new Error('No wallet in this browser');
      const [address] = (await wallet.request({ method: 'eth_requestAccounts' })) as string[];
      if (!address) throw new Error('The wallet shared no account');
      const chainId = Number.parseInt(String(await wallet.request({ method: 'eth_chainId' })), 16);
      const { nonce } = await post<{ nonce: string }>('/api/auth/nonce');
      const message = siweMessage({
        domain: location.host,
        origin: location.origin,
        address,
        chainId,
        nonce,
        issuedAt: new Date(),
      });
      const signature = (await wallet.request({ method: 'personal_sign', params: [message, address] })) as string;
      await post('/api/wallet-auth', { address, message, signature, ...(invite ? { inviteToken: invite } : {}) });
    },
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: SESSION_KEY });
      navigate('/dashboard', { replace: true });
    },
  });
  return (
    <>
      <Button
        className="button secondary"
        busy={signIn.isPending}
        busyLabel="Waiting for your wallet…"
        onClick={() => signIn.mutate()}
      >
        Sign in with your wallet
      </Button>
      <ErrorNote error={signIn.error} />
    </>
  );
}

export function RegisterPage() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const queries = useQueryClient();
  const options = useSignInOptions();
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [invite, setInvite] = useState(params.get('invite') ?? params.get('token') ?? '');
  const inviteRequired = options.data?.inviteRequired ?? false;
  const register = useMutation({
    mutationFn: async () => {
      await post('/api/register', { name, email, password, ...(invite ? { inviteToken: invite } : {}) });
      await post('/api/auth/login', { email, password });
    },
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: SESSION_KEY });
      navigate('/dashboard?welcome=1', { replace: true });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    register.mutate();
  };
  return (
    <>
      <h1>Create your account</h1>
      <form onSubmit={submit} className="card stack">
        <Field
          label="Name"
          autoComplete="name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          maxLength={200}
        />
        <Field
          label="Email"
          type="email"
          autoComplete="email"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <Field
          label="Password"
          type="password"
          autoComplete="new-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          hint="At least 8 characters."
        />
        {(inviteRequired || invite) && (
          <Field
            label="Invite code"
            required={inviteRequired}
            value={invite}
            onChange={(e) => setInvite(e.target.value.trim())}
            hint={
              inviteRequired
                ? 'This server registers people by invite: paste the code from your invite link.'
                : 'The code from your invite link.'
            }
          />
        )}
        <ErrorNote error={register.error} />
        <Button type="submit" busy={register.isPending} busyLabel="Creating your account…">
          Create account
        </Button>
      </form>
      <OtherSignIns invite={invite || undefined} />
      <p>
        Already have an account? <Link to="/login">Sign in</Link>
      </p>
    </>
  );
}

export function VerifyEmailPage() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const queries = useQueryClient();
  const verify = useMutation({
    mutationFn: () => post('/api/auth/verify-email', { token }),
    onSuccess: () => queries.invalidateQueries({ queryKey: SESSION_KEY }),
  });
  const { mutate } = verify;
  // The link is the confirmation: verify on arrival, once per token.
  const asked = useRef('');
  useEffect(() => {
    if (!token || asked.current === token) return;
    asked.current = token;
    mutate();
  }, [token, mutate]);
  return (
    <>
      <h1>Verify your email</h1>
      {!token && (
        <p className="error" role="alert">
          This link has no token. Open the link from the mail exactly as it was sent.
        </p>
      )}
      {verify.isPending && (
        <p role="status">
          <span className="spinner" aria-hidden="true" />
          Verifying your address…
        </p>
      )}
      {verify.isSuccess && <Notice>Your email address is verified.</Notice>}
      <ErrorNote error={verify.error} />
      <p>
        <Link to="/dashboard">Go to your dashboard</Link>
      </p>
    </>
  );
}

export function ForgotPasswordPage() {
  const [email, setEmail] = useState('');
  const forgot = useMutation({ mutationFn: () => post<{ message: string }>('/api/auth/forgot-password', { email }) });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    forgot.mutate();
  };
  return (
    <>
      <h1>Reset your password</h1>
      <form onSubmit={submit} className="card stack">
        <p>We mail a link to reset it to the address of your account.</p>
        <Field
          label="Email"
          type="email"
          autoComplete="email"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <ErrorNote error={forgot.error} />
        {forgot.isSuccess && <Notice>{forgot.data.message}</Notice>}
        <Button type="submit" busy={forgot.isPending} busyLabel="Sending…">
          Send the link
        </Button>
      </form>
      <p>
        <Link to="/login">Back to sign in</Link>
      </p>
    </>
  );
}

export function ResetPasswordPage() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const reset = useMutation({ mutationFn: () => post('/api/auth/reset-password', { token, password }) });
  const mismatch = again !== '' && again !== password ? 'The two passwords differ' : undefined;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!mismatch) reset.mutate();
  };
  if (!token)
    return (
      <>
        <h1>Choose a new password</h1>
        <p className="error" role="alert">
          This link has no token. <Link to="/forgot-password">Ask for a new link</Link>.
        </p>
      </>
    );
  return (
    <>
      <h1>Choose a new password</h1>
      {reset.isSuccess ? (
        <Notice>
          Your password is changed. <Link to="/login">Sign in</Link> with it.
        </Notice>
      ) : (
        <form onSubmit={submit} className="card stack">
          <Field
            label="New password"
            type="password"
            autoComplete="new-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
          <Field
            label="New password again"
            type="password"
            autoComplete="new-password"
            required
            value={again}
            onChange={(e) => setAgain(e.target.value)}
            error={mismatch}
          />
          <ErrorNote error={reset.error} />
          <Button type="submit" busy={reset.isPending} busyLabel="Saving…">
            Save the new password
          </Button>
        </form>
      )}
    </>
  );
}
