import { createServer } from 'node:net';

/**
 * A TCP port that was free a moment ago on 127.0.0.1. The caller binds it soon
 * after; on a busy shared machine another process could take it first, which
 * shows up as the child failing to listen (a loud failure, not a wrong result).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('could not read the ephemeral port'))));
    });
  });
}
