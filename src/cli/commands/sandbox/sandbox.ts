import type { Command } from 'commander';
import { z } from 'zod';
import { createLogger } from '../../../log/log.js';
import { EXPIRED_ITERATOR_MODES } from '../../../sandbox/retention.js';
import { InvalidVersionError } from '../../../sandbox/invalid-version-error.js';
import { describeTimeScale } from '../../../sandbox/clock.js';
import type { Sandbox } from '../../../sandbox/server.js';
import { parseServedVersions, VERSION_LISTINGS } from '../../../sandbox/versions.js';
import { CliUsageError } from '../../context/errors.js';
import { shutdownOnSignal } from '../../../daemon/signals.js';

const SHUTDOWN_GRACE_MS = 5_000;

const intText = (name: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, { message: `${name} must be a whole number` })
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(min, { message: `${name} must be at least ${min}` })
        .max(max, { message: `${name} must be at most ${max}` }),
    );

const optionsSchema = z
  .object({
    port: intText('--port', 0, 65_535).default(0),
    host: z.string().min(1, { message: '--host must not be empty' }).default('127.0.0.1'),
    timeScale: z
      .string()
      .transform(Number)
      .pipe(z.number({ message: '--time-scale must be a number' }).positive({ message: '--time-scale must be greater than 0' }).finite())
      .default(1),
    key: z.string().min(1, { message: '--key must not be empty' }).optional(),
    secret: z.string().min(1, { message: '--secret must not be empty' }).optional(),
    seedEvents: intText('--seed-events', 0, 5_000_000).default(0),
    rejectEvery: intText('--reject-every', 1, 1_000_000).optional(),
    retentionMs: intText('--retention-ms', 1, Number.MAX_SAFE_INTEGER).optional(),
    expiredIterator: z
      .enum(EXPIRED_ITERATOR_MODES, { message: `--expired-iterator must be one of ${EXPIRED_ITERATOR_MODES.join(', ')}` })
      .optional(),
    versions: z.string().optional(),
    versionListing: z.enum(VERSION_LISTINGS, { message: `--version-listing must be one of ${VERSION_LISTINGS.join(', ')}` }).optional(),
    json: z.boolean().default(false),
  })
  .refine((o) => (o.key === undefined) === (o.secret === undefined), { message: '--key and --secret must be given together' })
  .refine((o) => o.expiredIterator === undefined || o.retentionMs !== undefined, {
    message: '--expired-iterator only applies together with --retention-ms',
  });

/** Smallest prescription count whose sandbox histories hold at least `events` events. */
export function prescriptionsForEvents(events: number, rejectEvery: number | undefined): number {
  const eventsFor = (count: number) => 4 * count - (rejectEvery ? 3 * Math.floor(count / rejectEvery) : 0);
  let count = Math.ceil(events / 4);
  while (eventsFor(count) < events) count += 1;
  return count;
}

function parseOptions(raw: unknown): z.infer<typeof optionsSchema> & { servedVersions: string[] } {
  const parsed = optionsSchema.safeParse(raw);
  if (!parsed.success) throw new CliUsageError(parsed.error.issues.map((i) => i.message).join('; '));
  return { ...parsed.data, servedVersions: parseVersionsOption(parsed.data.versions) };
}

/** `--versions 2024-12-10,2025-06-01`: each YYYY-MM-DD; the first is the default base URL's. */
export function parseVersionsOption(raw: string | undefined): string[] {
  if (raw === undefined) return parseServedVersions();
  try {
    return parseServedVersions(raw.split(',').map((v) => v.trim()));
  } catch (error) {
    if (error instanceof InvalidVersionError) throw new CliUsageError(`--versions: ${error.message}`);
    throw error;
  }
}

function serveUntilSignal(sandbox: Sandbox): Promise<void> {
  const log = createLogger().child({ component: 'sandbox' });
  return new Promise((resolve, reject) => {
    const removeHandlers = shutdownOnSignal({
      graceMs: SHUTDOWN_GRACE_MS,
      log,
      shutdown: () =>
        sandbox.close().then(() => {
          removeHandlers();
          resolve();
        }, reject),
    });
  });
}

/** `intake-sync sandbox`: runs the operator API simulator until SIGINT/SIGTERM. */
export function registerSandboxCommand(program: Command): void {
  program
    .command('sandbox')
    .description('run the operator API sandbox simulator (prints its base URL and credentials)')
    .option('--port <port>', 'port to listen on (0 = any free port)')
    .option('--host <host>', 'address to bind (default 127.0.0.1)')
    .option('--time-scale <n>', 'run sandbox time N times faster than real time')
    .option('--key <key>', 'API key to accept (default: random)')
    .option('--secret <secret>', 'API secret to accept (default: random)')
    .option('--seed-events <n>', 'pre-seed prescriptions whose already-due histories hold at least N events')
    .option('--reject-every <k>', 'with --seed-events: every k-th seeded prescription takes the rejection path')
    .option('--retention-ms <n>', 'entries published more than N ms ago (sandbox time) disappear from the feed')
    .option(
      '--expired-iterator <mode>',
      'with --retention-ms, the answer to an iterator before the oldest retained event: error (400, the default) or jump (silently from the oldest)',
    )
    .option(
      '--versions <list>',
      'comma-separated API versions to serve, each under /intake_api/<version> (default 2024-12-10; the first is the default)',
    )
    .option(
      '--version-listing <mode>',
      "separate (default: a version's GET /events lists only its own events) or shared (every version lists every event, same ids)",
    )
    .option('--json', 'print one JSON line {base_url, base_urls, key, secret, admin_url}')
    .action(async (raw: unknown) => {
      const options = parseOptions(raw);
      // loaded when the command runs: registering it must not load the simulator into every other command
      const { startSandbox } = await import('../../../sandbox/server.js');
      const sandbox = await startSandbox({
        host: options.host,
        port: options.port,
        timeScale: options.timeScale,
        versions: options.servedVersions,
        versionListing: options.versionListing ?? 'separate',
        ...(options.retentionMs === undefined
          ? {}
          : { retention: { ms: options.retentionMs, expiredIterator: options.expiredIterator ?? 'error' } }),
        ...(options.key && options.secret ? { credentials: [{ key: options.key, secret: options.secret }] } : {}),
      });
      const seeded =
        options.seedEvents > 0
          ? sandbox.store.seedBulk({
              count: prescriptionsForEvents(options.seedEvents, options.rejectEvery),
              rejectEvery: options.rejectEvery,
            })
          : undefined;
      const { key, secret } = sandbox.credentials[0] ?? { key: '', secret: '' };
      const adminUrl = `${sandbox.origin}/_sandbox`;
      if (options.json) {
        const baseUrls = Object.fromEntries(sandbox.versions.map((v) => [v, sandbox.baseUrlFor(v)]));
        process.stdout.write(`${JSON.stringify({ base_url: sandbox.baseUrl, base_urls: baseUrls, key, secret, admin_url: adminUrl })}\n`);
      } else {
        process.stdout.write(
          [
            `sandbox listening (time scale ${options.timeScale}x: ${describeTimeScale(options.timeScale)})`,
            `  base URL:  ${sandbox.baseUrl}`,
            ...sandbox.versions.slice(1).map((v) => `  base URL:  ${sandbox.baseUrlFor(v)} (${v})`),
            ...(sandbox.versions.length > 1 ? [`  listing:   ${options.versionListing ?? 'separate'}`] : []),
            `  admin URL: ${adminUrl}`,
            `  key:       ${key}`,
            `  secret:    ${secret}`,
            ...(seeded ? [`  seeded:    ${seeded.prescriptions} prescriptions, ${seeded.events} events`] : []),
            `client environment:`,
            `  INTAKE_API_BASE_URL=${sandbox.baseUrl} INTAKE_API_KEY=${key} INTAKE_API_SECRET=${secret}`,
            'press Ctrl-C to stop',
            '',
          ].join('\n'),
        );
      }
      await serveUntilSignal(sandbox);
      process.exitCode = 0;
    });
}
