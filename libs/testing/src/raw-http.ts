import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/** The first answer to a request sent byte for byte: its status, headers (lower-case names) and body (by its content-length). */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends `head` (a request's lines, without the blank line ending them) over a TCP connection of its
 * own exactly as written (no client library normalizes its target) and reads the first answer.
 */
export async function sendRaw(host: string, port: number, head: string[], timeoutMs = 15_000): Promise<RawAnswer> {
  const socket = connect(port, host);
  socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no answer within ${timeoutMs} ms`)));
  await once(socket, 'connect');
  socket.write(`${head.join('\r\n')}\r\n\r\n`);
  try {
    return await readAnswer(socket);
  } finally {
    socket.destroy();
  }
}

function readAnswer(socket: Socket): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end === -1) return;
      const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [
          line.slice(0, line.indexOf(':')).trim().toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
      );
      const length = Number(headers['content-length'] ?? 0);
      if (received.length < end + 4 + length) return;
      socket.off('data', onData);
      resolve({
        status: Number(statusLine!.split(' ')[1]),
        headers,
        body: received.subarray(end + 4, end + 4 + length).toString('utf8'),
      });
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.once('close', () =>
      reject(new Error(`connection closed before a whole answer: ${received.toString('latin1').slice(0, 200)}`)),
    );
  });
}

/**
 * A listener on loopback that must hear nothing: it records every connection (and what arrived on
 * it) and answers 418, so a request that reached it shows in the answer too.
 */
export async function startTrapListener(): Promise<{ port: number; heard: string[]; close(): Promise<void> }> {
  const heard: string[] = [];
  const server = createServer((socket) => {
    const index = heard.push('') - 1;
    socket.on('data', (chunk) => {
      heard[index] += chunk.toString('latin1');
      socket.end(
        'HTTP/1.1 418 I am a trap\r\ncontent-type: application/json\r\ncontent-length: 16\r\nconnection: close\r\n\r\n{"trapped":true}',
      );
    });
    socket.on('error', () => {});
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    heard,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
