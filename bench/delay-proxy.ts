import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

/** What a DelayProxy saw, for the WAN drain's report. */
export interface DelayProxyStats {
  /** TCP connections clients opened through the proxy */
  connections: number;
  /** exchanges per connection, in the order the connections were opened */
  exchangesPerConnection: number[];
  /** request/response exchanges seen (a request's first byte after the previous answer starts one) */
  exchanges: number;
  /**
   * per exchange, ms from the request's first byte reaching the upstream to the last byte of its answer
   * leaving it: the operator's own time (server work plus loopback transfer), with no added latency in it
   */
  upstreamMs: number[];
  /**
   * per exchange, ms from the request's first byte arriving from the client to the last byte of its answer
   * handed back to it: the network and the operator together, as this proxy actually delivered them (it
   * should be the round trip plus upstreamMs; the client's own time is not in it)
   */
  wireMs: number[];
  /**
   * per exchange after the first on a connection, ms from the previous answer's last byte handed to the
   * client to this request's first byte arriving: the client's own turnaround between two requests
   */
  turnaroundMs: number[];
}

export interface DelayProxy {
  /** the port clients connect to on 127.0.0.1 */
  port: number;
  stats(): DelayProxyStats;
  close(): Promise<void>;
}

/**
 * One direction of a connection: each chunk is delivered `delayMs()` after it arrived, in arrival order, never
 * early. One queue per direction (separate timers could fire out of order within a millisecond), a timer for
 * whole milliseconds and setImmediate for the rest: timers fire on whole milliseconds, so a timer per chunk
 * would deliver the chunks of one 175 KB answer (loopback hands it over in several) a millisecond apart each.
 */
function delayedPipe(from: Socket, delayMs: () => number, deliver: (chunk: Buffer) => void, finish: () => void): void {
  const queue: Array<{ dueAt: number; chunk: Buffer | null }> = [];
  let waiting: { cancel(): void } | undefined;
  const drain = () => {
    waiting = undefined;
    while (queue.length > 0 && (queue[0]?.dueAt ?? 0) <= performance.now()) {
      const { chunk } = queue.shift()!;
      if (chunk) deliver(chunk);
      else finish();
    }
    const next = queue[0];
    if (!next) return;
    const wait = next.dueAt - performance.now();
    if (wait >= 1) {
      const timer = setTimeout(drain, Math.floor(wait));
      waiting = { cancel: () => clearTimeout(timer) };
    } else {
      const immediate = setImmediate(drain);
      waiting = { cancel: () => clearImmediate(immediate) };
    }
  };
  const push = (chunk: Buffer | null) => {
    const last = queue[queue.length - 1];
    queue.push({ dueAt: Math.max(performance.now() + delayMs(), last?.dueAt ?? 0), chunk });
    if (waiting === undefined) drain();
  };
  from.on('data', (chunk: Buffer) => push(chunk));
  from.on('end', () => push(null));
  from.on('close', () => waiting?.cancel());
}

/**
 * A TCP proxy on loopback that adds `rttMs` of round trip to everything between a client and `upstreamPort`:
 * half of it on each direction, chunk by chunk and in order (latency, no bandwidth cap), plus one whole
 * round trip before a new connection's first byte goes through (the TCP handshake a real network charges
 * for every new connection). It counts connections and times each request/response exchange at the upstream
 * side, which assumes one request at a time per connection (HTTP/1.1 without pipelining).
 */
export async function startDelayProxy(
  upstreamPort: number,
  rttMs: number,
  /** a fresh observer per connection, handed every client->upstream chunk as it arrives */
  observeClient?: () => (chunk: Buffer) => void,
): Promise<DelayProxy> {
  const stats: DelayProxyStats = { connections: 0, exchangesPerConnection: [], exchanges: 0, upstreamMs: [], wireMs: [], turnaroundMs: [] };
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const connection = stats.connections++;
    stats.exchangesPerConnection.push(0);
    const acceptedAt = performance.now();
    const observe = observeClient?.();
    if (observe) client.on('data', observe);
    const upstream = connect({ host: '127.0.0.1', port: upstreamPort });
    for (const socket of [client, upstream]) {
      socket.setNoDelay(true);
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    // the exchange in progress: when its request arrived and reached the upstream, the last answer byte so far
    // from the upstream and the last one handed to the client
    let arrivedAt: number | undefined;
    let requestAt: number | undefined;
    let answeredAt: number | undefined;
    let deliveredAt: number | undefined;
    const closeExchange = () => {
      if (arrivedAt !== undefined && requestAt !== undefined && answeredAt !== undefined && deliveredAt !== undefined) {
        stats.exchanges++;
        stats.exchangesPerConnection[connection] = (stats.exchangesPerConnection[connection] ?? 0) + 1;
        stats.upstreamMs.push(answeredAt - requestAt);
        stats.wireMs.push(deliveredAt - arrivedAt);
      }
      arrivedAt = requestAt = answeredAt = deliveredAt = undefined;
    };
    let previousDeliveredAt: number | undefined;
    client.on('data', () => {
      // a request byte after an answer was handed back: the previous exchange is complete
      if (deliveredAt !== undefined) {
        previousDeliveredAt = deliveredAt;
        closeExchange();
      }
      if (arrivedAt === undefined) {
        arrivedAt = performance.now();
        if (previousDeliveredAt !== undefined) stats.turnaroundMs.push(arrivedAt - previousDeliveredAt);
      }
    });
    // the first byte waits out the handshake's round trip, then every byte pays half the round trip each way
    const handshakeLeft = () => Math.max(0, rttMs - (performance.now() - acceptedAt));
    delayedPipe(
      client,
      () => handshakeLeft() + rttMs / 2,
      (chunk) => {
        if (upstream.destroyed) return;
        requestAt ??= performance.now();
        upstream.write(chunk);
      },
      () => upstream.end(),
    );
    upstream.on('data', () => {
      if (requestAt !== undefined) answeredAt = performance.now();
    });
    delayedPipe(
      upstream,
      () => rttMs / 2,
      (chunk) => {
        if (client.destroyed) return;
        if (requestAt !== undefined) deliveredAt = performance.now();
        client.write(chunk);
      },
      () => client.end(),
    );
    client.on('close', () => {
      closeExchange();
      upstream.destroy();
    });
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    stats: () => ({
      ...stats,
      exchangesPerConnection: [...stats.exchangesPerConnection],
      upstreamMs: [...stats.upstreamMs],
      wireMs: [...stats.wireMs],
      turnaroundMs: [...stats.turnaroundMs],
    }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
