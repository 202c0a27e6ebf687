// Loaded (--import) into the peer gateway's process by bench/ai-gateway/run.ts --peer: Portkey's
// Node server listens on every interface with no host option, so its listen is kept on loopback;
// the port it got (run.ts passes --port=0) is told to the parent over the IPC channel, and the
// process ends with its parent.
import { Server } from 'node:net';

const listen = Server.prototype.listen;
Server.prototype.listen = function (this: Server, ...args: unknown[]) {
  if (typeof args[0] === 'number' && typeof args[1] !== 'string') {
    if (args[1] === undefined) args[1] = '127.0.0.1';
    else args.splice(1, 0, '127.0.0.1');
  }
  this.once('listening', () => process.send?.({ port: (this.address() as { port: number }).port }));
  return listen.apply(this, args as Parameters<typeof listen>);
} as typeof listen;
process.on('disconnect', () => process.exit(0));
