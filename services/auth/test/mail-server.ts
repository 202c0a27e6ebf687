import type { Test } from 'tap';
import { SMTPServer } from 'smtp-server';

// A real SMTP server standing in for the mail provider in tests.
export interface Delivered { from: string; to: string[]; raw: string }

/** A real SMTP server on loopback; each delivered message is pushed to `inbox`. */
export async function startMailServer(t: Test) {
  const inbox: Delivered[] = [];
  const waiting: ((mail: Delivered) => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const mail = { from: (session.envelope.mailFrom || { address: '' }).address, to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') };
        inbox.push(mail);
        waiting.shift()?.(mail);
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.server.address() as { port: number };
  return { url: `smtp://127.0.0.1:${port}`, inbox, nextMail: () => new Promise<Delivered>((resolve) => waiting.push(resolve)) };
}

/** The reset token in a delivered mail (quoted-printable unfolded). */
export const tokenIn = (raw: string) => {
  const unfolded = raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
  return /reset-password\?token=([A-Za-z0-9_-]+)/.exec(unfolded)?.[1];
};
