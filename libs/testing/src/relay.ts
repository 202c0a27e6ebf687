import { once } from 'node:events';
import { createServer, connect, type Socket } from 'node:net';

export interface Relay {
  /** The relay's address in the target's URL scheme, e.g. `redis://127.0.0.1:40123`. */
  url: string;
  /** The target stops answering: connections stay open, and what clients send is dropped. */
  stall(): void;
  /** The target goes away: every relayed connection is cut and no new one is taken. */
  goDown(): Promise<void>;
}

/**
 * A TCP relay on loopback to a real server (the run's Redis, say; its URL names the port), which a
 * test can stall or take down to see what its clients do when their server stops answering or
 * disappears mid-life.
 */
export async function startRelay(targetUrl: string): Promise<Relay> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  let stalled = false;
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk) => {
      if (!stalled) upstream.write(chunk);
    });
    client.on('end', () => upstream.end());
    upstream.pipe(client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `${target.protocol}//${target.username ? `${target.username}:${target.password}@` : ''}127.0.0.1:${port}${target.pathname}`,
    stall() {
      stalled = true;
    },
    async goDown() {
      const closed = new Promise((resolve) => server.close(resolve));
      const cut = [...sockets].map((socket) => {
        socket.destroy();
        return socket.closed ? undefined : once(socket, 'close');
      });
      await Promise.all([closed, ...cut]);
    },
  };
}
