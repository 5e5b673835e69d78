import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Below this the ports of well-known services sit; the range picked from starts here. */
const LOWEST = 10_000;

/**
 * The first port of the kernel's ephemeral range: every outgoing connection on the machine (each
 * test file's database pool, npm, psql) takes its local port from that range, so a port found free
 * there is free only until the next connect. Ports are picked below it instead.
 */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST + 1_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** Resolves with the port when it could be bound on 0.0.0.0 (and so on 127.0.0.1) just now, else undefined. */
function bindable(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(undefined));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(port)));
  });
}

/**
 * A TCP port that was free a moment ago, picked at random below the ephemeral range so that no
 * outgoing connection takes it before the caller binds it. Another process picking the same port in
 * the same moment is still possible (1 in about 22,000 per pair); it shows up as the child failing
 * to listen (a loud failure, not a wrong result).
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow() - 1;
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = await bindable(LOWEST + Math.floor(Math.random() * (high - LOWEST)));
    if (port) return port;
  }
  throw new Error(`no free port between ${LOWEST} and ${high} after 200 tries`);
}
