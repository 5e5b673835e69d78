import { z } from 'zod';
import { BenchProcessError } from './bench-process-error.js';
import { parseSandboxHandshake, sandboxArgs, type SandboxHandshake } from '../test/support/sandbox-handshake.js';
import { spawnTsx, type BenchChild } from './processes.js';

const seededSchema = z.object({ prescriptions: z.number(), events: z.number() });

/** The simulator running in its own process (its memory and CPU are not the worker's). */
export interface SandboxProcess {
  baseUrl: string;
  key: string;
  secret: string;
  /**
   * POST /_sandbox/seed: `count` prescriptions (external_id `${prefix}-${i}`) whose histories are all due now,
   * in the feed of credential `key` (default: the sandbox's first credential).
   */
  seed(count: number, prefix: string, key?: string): Promise<{ prescriptions: number; events: number }>;
  /** POST /_sandbox/credentials: one more account (tenant), with a feed of its own and event ids of its own. */
  addCredential(key: string, secret: string): Promise<void>;
  /** POST /_sandbox/clock: moves the sandbox clock forward; events falling due become visible at once. */
  advanceClock(ms: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts `intake-sync sandbox --port 0 --json` and waits for its address line. */
export async function startSandboxProcess(label: string): Promise<SandboxProcess> {
  const key = `bench-${label}`;
  const secret = `bench-secret-${label}`;
  const child: BenchChild = spawnTsx(`sandbox (${label})`, 'src/cli/main.ts', sandboxArgs({ key, secret }), {
    ...process.env,
    LOG_LEVEL: 'warn',
  });
  let announced: SandboxHandshake;
  try {
    announced = parseSandboxHandshake(await child.firstJsonLine);
  } catch (error) {
    await child.stop();
    throw error;
  }
  const admin = async (path: string, body: unknown): Promise<unknown> => {
    const response = await fetch(new URL(path, announced.adminUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new BenchProcessError(`sandbox (${label}) ${path} answered ${response.status}: ${text.slice(0, 200)}`);
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  };
  return {
    baseUrl: announced.baseUrl,
    key: announced.key,
    secret: announced.secret,
    seed: async (count, prefix, key = announced.key) => seededSchema.parse(await admin('/_sandbox/seed', { key, count, prefix })),
    addCredential: async (key, secret) => {
      await admin('/_sandbox/credentials', { add: { key, secret } });
    },
    advanceClock: async (ms) => {
      await admin('/_sandbox/clock', { advance_ms: ms });
    },
    stop: () => child.stop(),
  };
}
