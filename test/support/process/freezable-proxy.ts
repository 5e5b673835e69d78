import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP pass-through to Postgres that can play a client process frozen by
 * SIGSTOP: after `freezeAfterNextClientWrite()`, the next chunk a client
 * writes is delivered and then nothing more flows either way on that
 * connection, while its sockets stay open (a frozen process's sockets are not
 * closed). Connections opened later flow normally.
 */
export interface FreezableProxy {
  port: number;
  freezeAfterNextClientWrite(): void;
  close(): Promise<void>;
}

export async function startFreezableProxy(target: { host: string; port: number }): Promise<FreezableProxy> {
  const sockets = new Set<Socket>();
  let armed = false;
  const server: Server = createServer((client) => {
    let frozen = false;
    const upstream = connect(target.port, target.host);
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => {
      if (frozen) return;
      upstream.write(chunk);
      if (armed) {
        armed = false;
        frozen = true;
      }
    });
    upstream.on('data', (chunk) => {
      if (!frozen) client.write(chunk);
    });
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', closeBoth).on('close', () => !frozen && closeBoth());
    upstream.on('error', closeBoth).on('close', () => !frozen && closeBoth());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    freezeAfterNextClientWrite: () => {
      armed = true;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
