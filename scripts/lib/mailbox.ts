import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/**
 * The development mailbox `npm start` runs when SMTP_URL is unset: an SMTP server on loopback that
 * keeps what it is sent in memory, and a web inbox listing it (newest first), so reset and
 * verification mails can be read without a mail provider. Nothing leaves the machine.
 */

interface Mail {
  id: number;
  at: Date;
  from: string;
  to: string[];
  subject: string;
  text: string;
}

const KEPT = 200;
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Headers and the readable text of a message: quoted-printable and base64 text parts decoded, other parts named. */
export function readableMail(raw: string): { subject: string; text: string } {
  const [head = '', ...rest] = raw.split(/\r?\n\r?\n/);
  const headers = head.replace(/\r?\n[ \t]+/g, ' ');
  const subject = decodeWords(/^subject:\s*(.*)$/im.exec(headers)?.[1] ?? '(no subject)');
  const body = rest.join('\n\n');
  const boundary = /boundary="?([^";\s]+)"?/i.exec(raw)?.[1];
  const parts = boundary ? body.split(`--${boundary}`).slice(1, -1) : [`${head}\n\n${body}`];
  const texts = parts.flatMap((part) => {
    const [partHead = '', ...partBody] = part.replace(/^\r?\n/, '').split(/\r?\n\r?\n/);
    const type = /content-type:\s*([^;\s]+)/i.exec(partHead)?.[1]?.toLowerCase() ?? 'text/plain';
    if (!type.startsWith('text/')) return [];
    const encoding = /content-transfer-encoding:\s*(\S+)/i.exec(partHead)?.[1]?.toLowerCase();
    const content = partBody.join('\n\n');
    const decoded =
      encoding === 'base64'
        ? Buffer.from(content.replace(/\s+/g, ''), 'base64').toString('utf8')
        : encoding === 'quoted-printable'
          ? Buffer.from(
              content
                .replace(/=\r?\n/g, '')
                .replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
              'latin1',
            ).toString('utf8')
          : content;
    return [type === 'text/html' ? decoded.replace(/<[^>]+>/g, ' ').replace(/[ \t]+/g, ' ') : decoded];
  });
  return { subject, text: texts[0] ?? '(no text part)' };
}

/** RFC 2047 encoded words (=?utf-8?B?…?= / Q) in a header. */
function decodeWords(value: string): string {
  return value.replace(/=\?([^?]+)\?([BQ])\?([^?]*)\?=/gi, (_, _charset: string, kind: string, text: string) =>
    kind.toUpperCase() === 'B'
      ? Buffer.from(text, 'base64').toString('utf8')
      : Buffer.from(
          text
            .replace(/_/g, ' ')
            .replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
          'latin1',
        ).toString('utf8'),
  );
}

function inboxPage(mails: readonly Mail[]): string {
  const linked = (text: string) =>
    escapeHtml(text).replace(/https?:\/\/[^\s<>"']+/g, (url) => `<a href="${url}">${url}</a>`);
  const items = mails
    .map(
      (m) => `<article><h2>${escapeHtml(m.subject)}</h2>
<p class="meta">${escapeHtml(m.at.toISOString())} · from ${escapeHtml(m.from)} · to ${escapeHtml(m.to.join(', '))}</p>
<pre>${linked(m.text)}</pre></article>`,
    )
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Development mailbox</title>
<style>body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem}article{border-top:1px solid #ccc;padding:.5rem 0}
.meta{color:#555;font-size:.9rem}pre{white-space:pre-wrap;word-break:break-all}</style></head>
<body><h1>Development mailbox</h1><p>Every mail the platform sent since <code>npm start</code> (newest first; reload to see new ones). Nothing was delivered anywhere else.</p>
${items || '<p>No mail yet.</p>'}</body></html>`;
}

export interface Mailbox {
  smtpUrl: string;
  inboxUrl: string;
  close(): Promise<void>;
}

/** Starts the SMTP server and the inbox page on loopback (ports 1025 and 1080 by default; 0 picks free ones). */
export async function startMailbox(options: { smtpPort?: number; webPort?: number } = {}): Promise<Mailbox> {
  const mails: Mail[] = [];
  let next = 1;
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    size: 5 * 1024 * 1024,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const { subject, text } = readableMail(Buffer.concat(chunks).toString('utf8'));
        mails.unshift({
          id: next++,
          at: new Date(),
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          subject,
          text,
        });
        mails.length = Math.min(mails.length, KEPT);
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    smtp.server.once('error', reject);
    smtp.listen(options.smtpPort ?? 1025, '127.0.0.1', resolve);
  });
  const web: Server = createServer((req, res) => {
    if (req.method !== 'GET') {
      res.writeHead(405).end();
      return;
    }
    const path = new URL(req.url ?? '/', 'http://mailbox.local').pathname;
    if (path === '/messages.json') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(mails));
      return;
    }
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
      .end(inboxPage(mails));
  });
  web.listen(options.webPort ?? 1080, '127.0.0.1');
  await once(web, 'listening');
  const smtpPort = (smtp.server.address() as AddressInfo).port;
  const webPort = (web.address() as AddressInfo).port;
  return {
    smtpUrl: `smtp://127.0.0.1:${smtpPort}`,
    inboxUrl: `http://127.0.0.1:${webPort}/`,
    async close() {
      web.closeAllConnections();
      await Promise.all([
        new Promise<void>((resolve) => smtp.close(() => resolve())),
        new Promise<void>((resolve) => web.close(() => resolve())),
      ]);
    },
  };
}
