import { SMTPServer } from 'smtp-server';

// A real SMTP server standing in for the mail provider in tests.
export interface DeliveredMail {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP server on loopback; each delivered message is pushed to `inbox`. */
export async function startMailServer(t: { teardown(fn: () => Promise<void>): void }, host = '127.0.0.1') {
  const inbox: DeliveredMail[] = [];
  const waiting: { wants: (mail: DeliveredMail) => boolean; resolve: (mail: DeliveredMail) => void }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const mail = {
          from: (session.envelope.mailFrom || { address: '' }).address,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        };
        inbox.push(mail);
        const waiter = waiting.findIndex((w) => w.wants(mail));
        if (waiter >= 0) waiting.splice(waiter, 1)[0]!.resolve(mail);
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.server.address() as { port: number };
  /** The next message delivered (that `wants`, when given). */
  const nextMail = (wants: (mail: DeliveredMail) => boolean = () => true) =>
    new Promise<DeliveredMail>((resolve) => waiting.push({ wants, resolve }));
  return { url: `smtp://${host}:${port}`, inbox, nextMail };
}

/** A delivered message's text with quoted-printable soft breaks and `=3D` undone. */
export const unfold = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');

/** The reset token in a delivered mail (quoted-printable unfolded). */
export const tokenIn = (raw: string) => /reset-password\?token=([A-Za-z0-9_-]+)/.exec(unfold(raw))?.[1];

/** The verification token in a delivered mail. */
export const verificationTokenIn = (raw: string) => /verify-email\?token=([A-Za-z0-9_-]+)/.exec(unfold(raw))?.[1];

export const isResetMail = (mail: DeliveredMail) => tokenIn(mail.raw) !== undefined;
export const isVerificationMail = (mail: DeliveredMail) => verificationTokenIn(mail.raw) !== undefined;
