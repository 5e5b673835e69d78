import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { type PgMessageCounts, pgMessageCounter } from '../../../bench/pg-message-counter.js';

/** A TCP pass-through to Postgres counting the statements its clients send (bench/pg-message-counter.ts). */
export interface CountingProxy {
  port: number;
  /** statements sent so far by every client of the proxy */
  counts: PgMessageCounts;
  /** `url` with its port pointed at the proxy */
  urlVia(url: string): string;
  close(): Promise<void>;
}

export async function startCountingProxy(target: { host: string; port: number }): Promise<CountingProxy> {
  const counts: PgMessageCounts = { simpleQueries: 0, executes: 0 };
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    sockets.add(client).add(upstream);
    const count = pgMessageCounter(counts);
    client.on('data', (chunk) => {
      count(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', closeBoth).on('close', closeBoth);
    upstream.on('error', closeBoth).on('close', closeBoth);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    counts,
    urlVia(url) {
      const via = new URL(url);
      via.hostname = '127.0.0.1';
      via.port = String(port);
      return via.toString();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
