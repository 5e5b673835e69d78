import { z } from 'zod';
import { plainRule } from '../lib/plain-rule.js';
import { DEFAULT_SCHEMA, schemaNameProblem } from '../db/schema-name.js';
import { baseUrlProblem, canonicalBaseUrl } from '../intake/base-url.js';
import { DEFAULT_MAX_RESPONSE_BYTES } from '../intake/limits.js';
import { SUPPORTED_API_VERSIONS } from '../intake/versions.js';
import { DEFAULT_FEED, FEED_NAME_PATTERN, FEED_NAME_RULE } from '../db/feed-name.js';
import { givenValueNote } from './given.js';
import { DURATION_RULE, parseDuration } from '../lib/duration.js';
import { tlsSettingsFor } from '../db/tls.js';
import { deadlineSetting } from './overdue-deadlines.js';
import { telemetryEnvSchema, telemetryEnvShape, telemetrySettingsOf } from './telemetry-env.js';
import type { TelemetrySettings } from '../telemetry/settings.js';

const intFromEnv = (min: number, max: number) => {
  const message = `must be a whole number from ${min} to ${max}`;
  return z.coerce.number({ message }).int({ message }).min(min, { message }).max(max, { message });
};
/** A retention duration (`30d`, `12h`, `1s`, `forever`): ms, null for forever. */
export const durationSetting = z.string().transform((text, ctx) => {
  const ms = parseDuration(text);
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: DURATION_RULE });
    return z.NEVER;
  }
  return ms;
});
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Every environment variable the daemon and CLI read. Parsed once at start;
 * a bad value fails fast naming the variable.
 */
export const envSchema = z
  .object({
    /** operator base URL ending in /intake_api/<version>; absent = built-in simulator (`run` only when nothing points elsewhere) */
    INTAKE_API_BASE_URL: z
      .string()
      .superRefine((url, ctx) => {
        const problem = baseUrlProblem(url, SUPPORTED_API_VERSIONS);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .transform(canonicalBaseUrl)
      .optional(),
    INTAKE_API_KEY: z.string().min(1).optional(),
    INTAKE_API_SECRET: z.string().min(1).optional(),
    /** postgres:// URL; absent = embedded PGlite under DATA_DIR */
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, { message: 'must be a postgres:// or postgresql:// URL' })
      .optional(),
    /**
     * CA bundle (PEM) that verifies the database server's certificate when the URL has no
     * sslrootcert: for platforms that cannot put a path in a URL (applies to LEASE_DATABASE_URL too)
     */
    DATABASE_CA_FILE: z.string().min(1).optional(),
    /**
     * libpq's default host, read by the driver when a URL names none (`postgres:///vendor`): the TLS
     * default follows it (src/db/driver-host.ts), so a remote PGHOST gets verify-full
     */
    PGHOST: z.string().optional(),
    DATA_DIR: z.string().min(1).default('./data'),
    /** the server cancels a statement that waited this long for a lock (a page behind the match lock, an outbox row) */
    DB_LOCK_TIMEOUT_MS: intFromEnv(100, 600_000).default(10_000),
    /** the server cancels a statement that ran this long; below the page transaction's 120 s client deadline */
    DB_STATEMENT_TIMEOUT_MS: intFromEnv(1_000, 110_000).default(60_000),
    /** the one schema holding every object of this deployment, the migration ledger included */
    DATABASE_SCHEMA: z
      .string()
      .superRefine((name, ctx) => {
        const problem = schemaNameProblem(name);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .default(DEFAULT_SCHEMA),
    /** false: `run` applies no migrations and refuses a schema that is not exactly current (migrate runs as the owner role) */
    MIGRATE_ON_START: z
      .enum(['true', 'false'], { message: 'must be true or false' })
      .default('true')
      .transform((v) => v === 'true'),
    HEALTH_PORT: intFromEnv(0, 65535).default(8080),
    HEALTH_HOST: z.string().min(1).max(255).default('0.0.0.0'),
    POLL_INTERVAL_MS: intFromEnv(10, 3_600_000).default(5_000),
    PAGE_LIMIT: intFromEnv(1, 250).default(250),
    HTTP_TIMEOUT_MS: intFromEnv(100, 300_000).default(15_000),
    /** no operator response body is read past this many bytes (src/intake/limits.ts says why the default) */
    MAX_RESPONSE_BYTES: intFromEnv(65_536, 256 * 1024 * 1024).default(DEFAULT_MAX_RESPONSE_BYTES),
    FEED_NAME: z.string().regex(FEED_NAME_PATTERN, { message: FEED_NAME_RULE }).default(DEFAULT_FEED),
    /** a JSON file listing several feeds (operator accounts); see src/config/feeds-file.ts. Replaces INTAKE_API_* and FEED_NAME */
    FEEDS_FILE: z.string().min(1).optional(),
    /** how long the operator keeps events (set it a little below theirs): a checkpoint idle this long stops the feed as a suspected gap */
    FEED_RETENTION_MS: intFromEnv(60_000, 10 * 365 * 86_400_000).optional(),
    // Retention (docs/security.md, "Data classification"): how long each class of row is kept; every one
    // may be overridden per feed in FEEDS_FILE (`retain`). Below a day is accepted with a warning.
    /** an applied event's PHI-bearing columns (raw body, payload, identity key, erx id) */
    RETAIN_EVENT_BODIES: durationSetting.prefault('30d'),
    /** an applied event's row itself (id, name, times, subscription): dedupe and history */
    RETAIN_EVENTS: durationSetting.prefault('1y'),
    /** a delivered or failed outbox row's prescription body (the row and a sha256 of the body stay) */
    RETAIN_OUTBOX_BODIES: durationSetting.prefault('30d'),
    /**
     * the identity (patient and prescription fields, identity key) of a prescription that ended (delivered,
     * rejected, or cancellation requested), counted from then: removed, external_id and status stay
     */
    RETAIN_TERMINAL_IDENTITIES: durationSetting.prefault('1y'),
    /** a resolved quarantine finding (counted from its resolution) */
    RETAIN_QUARANTINE: durationSetting.prefault('30d'),
    /** an open unmatched, ambiguous or malformed finding not seen again: expired (audited), its body dropped */
    RETAIN_OPEN_FINDINGS: durationSetting.prefault('90d'),
    /** the change feed's rows: status_changes_since() refuses an older cursor ("cursor expired") */
    RETAIN_STATUS_CHANGES: durationSetting.prefault('90d'),
    /** audit_entries rows (HIPAA: six years) */
    RETAIN_AUDIT: durationSetting.prefault('6y'),
    // Overdue prescriptions (docs/operations.md, "Overdue prescriptions"): how long a prescription may
    // stay in each stage before intake_sync.overdue_prescriptions lists it; `off` disables a stage.
    // Each may be overridden per feed in FEEDS_FILE (`overdue`).
    /** delivered to the operator by the outbox, no event yet (from the delivery) */
    OVERDUE_SENT: deadlineSetting.prefault('2h'),
    /** `accepted`, not yet `ordered` (from the event's occurred_at) */
    OVERDUE_ACCEPTED: deadlineSetting.prefault('24h'),
    /** `ordered`, not yet `dispensed` */
    OVERDUE_ORDERED: deadlineSetting.prefault('48h'),
    /** `dispensed`, not yet `delivered` */
    OVERDUE_DISPENSED: deadlineSetting.prefault('72h'),
    /** a cancellation delivered to the operator, no terminal status yet (from the delivery) */
    OVERDUE_CANCEL_REQUESTED: deadlineSetting.prefault('48h'),
    /** how often the leader's cleaner runs a pass */
    RETENTION_INTERVAL: durationSetting
      .prefault('1h')
      .refine((ms) => ms !== null && ms <= 7 * 86_400_000, { message: 'must be a duration from 1s to 7d (not forever)' })
      .transform((ms) => ms as number),
    LOG_LEVEL: z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
    /** /readyz fails when the last successful poll is older than this */
    READY_MAX_POLL_AGE_MS: intFromEnv(1_000, 86_400_000).optional(),
    /** /readyz fails at this many consecutive failed polls */
    READY_MAX_FAILURES: intFromEnv(1, 1_000).default(5),
    /** how long SIGTERM waits for the page in flight before forcing exit */
    SHUTDOWN_GRACE_MS: intFromEnv(100, 120_000).default(10_000),
    /** a standby retries the feed lease this often; the leader checks it still holds it as often */
    LEASE_RETRY_MS: intFromEnv(100, 600_000).default(2_000),
    /** the server ends a lease holder's lock session after this long without a check (frozen process) */
    LEASE_TTL_MS: intFromEnv(1_000, 3_600_000).default(15_000),
    /** ceiling of the backoff after failed polls */
    POLL_BACKOFF_MAX_MS: intFromEnv(100, 3_600_000).default(60_000),
    // requests per second this process sends one operator host, all its feeds together (0: no cap)
    OPERATOR_MAX_RPS: intFromEnv(0, 100_000).default(250),
    /** `run --once` gives up (exit 1) after this many consecutive failed polls */
    ONCE_MAX_FAILURES: intFromEnv(1, 10_000).default(10),
    /** off a TTY, how often a long drain logs its progress */
    PROGRESS_LOG_INTERVAL_MS: intFromEnv(500, 3_600_000).default(5_000),
    /**
     * set in the Docker image and the systemd unit: `run` also refuses embedded PGlite and `--demo`. It can
     * only tighten: the simulator never starts where configuration points elsewhere, whatever this says,
     * and 0 (which used to switch that guard off) is refused so that an old env file is noticed
     */
    INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG: z
      .literal('1', { message: 'must be 1 or unset (0 no longer exists: the built-in simulator cannot be allowed by a variable)' })
      .optional(),
    /** Node's switch that turns TLS certificate checks off, for every connection of the process: refused */
    NODE_TLS_REJECT_UNAUTHORIZED: z
      .string()
      .refine((value) => value !== '0', {
        message:
          'must not be 0: it turns off certificate checks for the operator and Postgres alike (trust your CA with NODE_EXTRA_CA_CERTS)',
      })
      .optional(),
    /** `intake-sync console`: the address it listens on (docs/console.md); Secure cookies everywhere but loopback */
    CONSOLE_HOST: z.string().min(1).max(255).default('127.0.0.1'),
    /** `intake-sync console`: its port */
    CONSOLE_PORT: intFromEnv(0, 65535).default(8081),
    /** `intake-sync console`: a session idle this long is signed out (HIPAA automatic logoff); 1m to 12h */
    CONSOLE_IDLE_TIMEOUT: durationSetting
      .prefault('15m')
      .refine((ms) => ms !== null && ms >= 60_000 && ms <= 12 * 3_600_000, { message: 'must be a duration from 1m to 12h (not forever)' })
      .transform((ms) => ms as number),
    /** `intake-sync console`: a session ends this long after sign-in however busy (absolute lifetime); 5m to 7d */
    CONSOLE_SESSION_MAX: durationSetting
      .prefault('12h')
      .refine((ms) => ms !== null && ms >= 5 * 60_000 && ms <= 7 * 86_400_000, {
        message: 'must be a duration from 5m to 7d (not forever)',
      })
      .transform((ms) => ms as number),
    /** `intake-sync console`: the https:// (or http://) address users open; https makes the cookie `__Host-` and Secure even on loopback */
    CONSOLE_PUBLIC_URL: z
      .string()
      .max(2048)
      .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), {
        message: 'must be an http:// or https:// URL',
      })
      .optional(),
    /** `intake-sync console`: the most backends it opens (one per session, one per sign-in in flight, one for the session check) */
    CONSOLE_MAX_CONNECTIONS: intFromEnv(2, 500).default(10),
    /** `intake-sync console`: the most sessions one role may hold at once */
    CONSOLE_SESSIONS_PER_ROLE: intFromEnv(1, 100).default(3),
    /** `intake-sync console`: password mode on a server that lets a wrong password in; only on a loopback CONSOLE_HOST */
    CONSOLE_ALLOW_TRUST_AUTH: z.literal('local-development', { message: 'must be local-development or unset' }).optional(),
    /** `intake-sync console` SSO mode (docs/console.md): the identity header a trusted proxy sets; checked by console/sso/settings.ts */
    CONSOLE_TRUSTED_HEADER: z.string().max(64).optional(),
    /** the proxies (IPs/CIDRs, at most /16 or /48 wide) whose CONSOLE_TRUSTED_HEADER and X-Forwarded-For are believed */
    CONSOLE_TRUSTED_PROXIES: z.string().max(4096).optional(),
    /** `identity = role` lines mapping the header's identity to a PostgreSQL role */
    CONSOLE_ROLE_MAP_FILE: z.string().max(4096).optional(),
    /** the console's own login role in SSO mode (a member of every mapped role; never DATABASE_URL's) */
    CONSOLE_LOGIN_ROLE: z.string().max(63).optional(),
    CONSOLE_LOGIN_PASSWORD: z.string().max(1024).optional(),
    /** embedded sandbox only: how many times faster than real time it runs */
    SANDBOX_TIME_SCALE: z.coerce.number().positive().max(100_000).default(300),
    /**
     * a direct postgres:// URL of the same database for the session-level advisory locks (feed
     * lease, migration lock); required when DATABASE_URL goes through a pooler such as PgBouncer
     */
    LEASE_DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, { message: 'must be a postgres:// or postgresql:// URL' })
      .optional(),
    // OpenTelemetry (docs/operations.md, "Tracing"): the standard OTEL_* variables, off when unset
    ...telemetryEnvShape,
  })
  .superRefine((env, ctx) => {
    if (env.LEASE_TTL_MS < 2 * env.LEASE_RETRY_MS) {
      // the holder checks (and so refreshes) its lock session every LEASE_RETRY_MS
      ctx.addIssue({ code: 'custom', path: ['LEASE_TTL_MS'], message: 'must be at least twice LEASE_RETRY_MS' });
    }
    // TLS to the database (src/db/tls.ts): a libpq user's sslmode/sslrootcert/sslcert/sslkey, verified
    // by default off loopback; what cannot be honoured is refused here, before any connection
    for (const key of ['DATABASE_URL', 'LEASE_DATABASE_URL'] as const) {
      const url = env[key];
      if (!url || !/^postgres(ql)?:\/\//.test(url)) continue;
      const tls = tlsSettingsFor(url, { variable: key, caFile: env.DATABASE_CA_FILE, pgHost: env.PGHOST });
      if ('problem' in tls) ctx.addIssue({ code: 'custom', path: [key], message: tls.problem });
    }
    if (env.FEEDS_FILE) {
      // one source of truth for the feeds: a variable beside the file would be silently ignored
      for (const key of ['INTAKE_API_BASE_URL', 'INTAKE_API_KEY', 'INTAKE_API_SECRET'] as const) {
        if (env[key])
          ctx.addIssue({ code: 'custom', path: [key], message: 'must not be set with FEEDS_FILE (give each feed its values in the file)' });
      }
    }
    if (env.INTAKE_API_BASE_URL) {
      for (const key of ['INTAKE_API_KEY', 'INTAKE_API_SECRET'] as const) {
        if (!env[key]) ctx.addIssue({ code: 'custom', path: [key], message: 'is required when INTAKE_API_BASE_URL is set' });
      }
    }
  });

export type Config = z.output<typeof envSchema>;
export type ConfigInput = z.input<typeof envSchema>;

/**
 * Bad configuration (exit 2): one problem per line, each naming its variable (or file and field, or
 * option) and what it must be. Values that came from outside are already escaped in each line
 * (terminalSafe); the message joins them with `; ` so a log line stays one line.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly problems: readonly string[];

  constructor(problems: string | readonly string[], options?: { cause?: unknown }) {
    const list = typeof problems === 'string' ? [problems] : problems;
    super(list.join('; '), options);
    this.problems = list;
  }
}

/** Parses the environment; throws ConfigError listing each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // empty strings are "unset": `FOO= intake-sync run` must not mean FOO=""
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = envSchema.safeParse(present, { error: plainRule });
  if (result.success) return result.data;
  throw configErrorOf(result.error.issues, present);
}

/** The OTEL_* variables alone (read by every command before it runs); throws ConfigError naming each bad one. */
export function loadTelemetryConfig(env: NodeJS.ProcessEnv = process.env): TelemetrySettings {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = telemetryEnvSchema.safeParse(present, { error: plainRule });
  if (result.success) return telemetrySettingsOf(result.data);
  throw configErrorOf(result.error.issues, present);
}

// what was expected (zod's message) and what was given (unless it may be a secret)
function configErrorOf(issues: readonly z.core.$ZodIssue[], present: Record<string, string | undefined>): ConfigError {
  return new ConfigError(
    issues.map((issue) => {
      const variable = issue.path.join('.');
      return `${variable || '(env)'}: ${issue.message}${givenValueNote(variable, present[variable])}`;
    }),
  );
}
