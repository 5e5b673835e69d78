// The errors a newcomer meets, as the built CLI prints them: one case per configuration variable
// (test/cli/error-lines.test.ts checks every variable of the schema has one) and per command's bad
// input, with the exact stderr lines and the exit code. docs/commands.md's "Error messages" block is
// checked against COMMAND_CASES (test/docs/error-lines.test.ts).

import { TELEMETRY_VARIABLE_CASES } from './telemetry-error-cases.js';

/** One refused invocation: what is run, and exactly what it prints on stderr and exits with. */
export interface ErrorCase {
  label: string;
  args: readonly string[];
  /** the process's whole environment besides PATH, HOME and an empty DATA_DIR */
  env: Readonly<Record<string, string>>;
  /** stderr, line by line (each prefixed `intake-sync: `) */
  lines: readonly string[];
  code: 1 | 2;
  /** a file the case needs, written before it runs: name (inside the case's scratch directory) and text */
  file?: { name: string; text: string };
}

/** A reachable-looking operator: configuration is checked before anything is sent. */
const OPERATOR = { INTAKE_API_BASE_URL: 'http://127.0.0.1:9/intake_api/2024-12-10', INTAKE_API_KEY: 'k', INTAKE_API_SECRET: 's' };
/** A database nothing listens on: bad input is refused before it is reached. */
const NO_DATABASE = { DATABASE_URL: 'postgres://postgres:pw@127.0.0.1:5499/x' };
const NUMBER = (name: string, value: string, min: number, max: number): ErrorCase => ({
  label: name,
  args: ['status'],
  env: { [name]: value },
  lines: [`${name}: must be a whole number from ${min} to ${max} (given "${value}")`],
  code: 2,
});
const DURATION = (name: string, value: string, examples: string, never: string): ErrorCase => ({
  label: name,
  args: ['status'],
  env: { [name]: value },
  lines: [`${name}: must be a duration: a whole number and a unit s, m, h, d, w or y (${examples}), or ${never} (given "${value}")`],
  code: 2,
});
const RETAIN = (name: string) => DURATION(name, '30 days', '30d, 12h, 1s', 'forever');
const OVERDUE = (name: string) => DURATION(name, 'soon', '2h, 48h, 3d', 'off');
const SECRET = 'the value given is not shown: it may hold a secret';

/** Every configuration variable, keyed by name, with a value it refuses (the CLI's `status` reads them all). */
export const VARIABLE_CASES: Readonly<Record<string, ErrorCase>> = Object.fromEntries(
  [
    {
      label: 'INTAKE_API_BASE_URL',
      args: ['status'],
      env: { ...OPERATOR, INTAKE_API_BASE_URL: 'not-a-url' },
      lines: ['INTAKE_API_BASE_URL: must be an absolute http(s) URL (given "not-a-url")'],
      code: 2,
    },
    {
      label: 'INTAKE_API_KEY',
      args: ['status'],
      env: { INTAKE_API_BASE_URL: OPERATOR.INTAKE_API_BASE_URL, INTAKE_API_SECRET: 's' },
      lines: ['INTAKE_API_KEY: is required when INTAKE_API_BASE_URL is set'],
      code: 2,
    },
    {
      label: 'INTAKE_API_SECRET',
      args: ['status'],
      env: { INTAKE_API_BASE_URL: OPERATOR.INTAKE_API_BASE_URL, INTAKE_API_KEY: 'k' },
      lines: ['INTAKE_API_SECRET: is required when INTAKE_API_BASE_URL is set'],
      code: 2,
    },
    {
      label: 'DATABASE_URL',
      args: ['status'],
      env: { DATABASE_URL: 'mysql://user:hunter2@db/x' },
      lines: [`DATABASE_URL: must be a postgres:// or postgresql:// URL (${SECRET})`],
      code: 2,
    },
    {
      label: 'DATABASE_CA_FILE',
      args: ['status'],
      env: { DATABASE_URL: 'postgres://db.example.com/x', DATABASE_CA_FILE: '/nonexistent/ca.pem' },
      lines: ['DATABASE_CA_FILE: cannot read /nonexistent/ca.pem (no such file)'],
      code: 2,
    },
    {
      label: 'PGHOST',
      args: ['status'],
      env: { DATABASE_URL: 'postgres:///x', PGHOST: '/nonexistent-socket-dir' },
      lines: [
        'cannot reach the database at /nonexistent-socket-dir:5432 (DATABASE_URL): no such socket (is Postgres running, and is this its socket directory?)',
      ],
      code: 1,
    },
    {
      label: 'DATA_DIR',
      args: ['status'],
      env: { DATA_DIR: '/nonexistent/data' },
      lines: [
        'no embedded store in DATA_DIR /nonexistent/data: run `intake-sync migrate` (or `intake-sync run`) there first, or set DATABASE_URL to the database to use',
      ],
      code: 2,
    },
    NUMBER('DB_LOCK_TIMEOUT_MS', '5', 100, 600_000),
    NUMBER('DB_STATEMENT_TIMEOUT_MS', '120000', 1_000, 110_000),
    {
      label: 'DATABASE_SCHEMA',
      args: ['status'],
      env: { DATABASE_SCHEMA: 'Bad-Name' },
      lines: ['DATABASE_SCHEMA: must be a lowercase identifier: a-z, 0-9 and _, not starting with a digit (given "Bad-Name")'],
      code: 2,
    },
    {
      label: 'MIGRATE_ON_START',
      args: ['status'],
      env: { MIGRATE_ON_START: 'yes' },
      lines: ['MIGRATE_ON_START: must be true or false (given "yes")'],
      code: 2,
    },
    NUMBER('HEALTH_PORT', '70000', 0, 65_535),
    {
      label: 'HEALTH_HOST',
      args: ['status'],
      env: { HEALTH_HOST: 'h'.repeat(256) },
      lines: [`HEALTH_HOST: must be at most 255 characters (given "${'h'.repeat(80)}…")`],
      code: 2,
    },
    NUMBER('POLL_INTERVAL_MS', 'abc', 10, 3_600_000),
    NUMBER('PAGE_LIMIT', '251', 1, 250),
    NUMBER('HTTP_TIMEOUT_MS', '1.5', 100, 300_000),
    NUMBER('MAX_RESPONSE_BYTES', '1000', 65_536, 268_435_456),
    {
      label: 'FEED_NAME',
      args: ['status'],
      env: { FEED_NAME: 'Bad Name' },
      lines: ['FEED_NAME: must be 1-64 of a-z 0-9 _ - (given "Bad Name")'],
      code: 2,
    },
    {
      label: 'FEEDS_FILE',
      args: ['status'],
      env: { FEEDS_FILE: '/nonexistent/feeds.json' },
      lines: ['FEEDS_FILE: cannot read /nonexistent/feeds.json (no such file: give the path of the JSON file listing the feeds)'],
      code: 2,
    },
    NUMBER('FEED_RETENTION_MS', '1000', 60_000, 315_360_000_000),
    RETAIN('RETAIN_EVENT_BODIES'),
    RETAIN('RETAIN_EVENTS'),
    RETAIN('RETAIN_OUTBOX_BODIES'),
    RETAIN('RETAIN_TERMINAL_IDENTITIES'),
    RETAIN('RETAIN_QUARANTINE'),
    RETAIN('RETAIN_OPEN_FINDINGS'),
    RETAIN('RETAIN_STATUS_CHANGES'),
    RETAIN('RETAIN_AUDIT'),
    OVERDUE('OVERDUE_SENT'),
    OVERDUE('OVERDUE_ACCEPTED'),
    OVERDUE('OVERDUE_ORDERED'),
    OVERDUE('OVERDUE_DISPENSED'),
    OVERDUE('OVERDUE_CANCEL_REQUESTED'),
    {
      label: 'RETENTION_INTERVAL',
      args: ['status'],
      env: { RETENTION_INTERVAL: 'forever' },
      lines: ['RETENTION_INTERVAL: must be a duration from 1s to 7d (not forever) (given "forever")'],
      code: 2,
    },
    {
      label: 'LOG_LEVEL',
      args: ['status'],
      env: { LOG_LEVEL: 'loud' },
      lines: ['LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent (given "loud")'],
      code: 2,
    },
    NUMBER('READY_MAX_POLL_AGE_MS', '10', 1_000, 86_400_000),
    NUMBER('READY_MAX_FAILURES', '0', 1, 1_000),
    NUMBER('SHUTDOWN_GRACE_MS', '50', 100, 120_000),
    NUMBER('LEASE_RETRY_MS', '50', 100, 600_000),
    {
      label: 'LEASE_TTL_MS',
      args: ['status'],
      env: { LEASE_TTL_MS: '3000', LEASE_RETRY_MS: '2000' },
      lines: ['LEASE_TTL_MS: must be at least twice LEASE_RETRY_MS (given "3000")'],
      code: 2,
    },
    NUMBER('POLL_BACKOFF_MAX_MS', '99', 100, 3_600_000),
    NUMBER('OPERATOR_MAX_RPS', '-1', 0, 100_000),
    NUMBER('ONCE_MAX_FAILURES', '0', 1, 10_000),
    NUMBER('PROGRESS_LOG_INTERVAL_MS', '1', 500, 3_600_000),
    {
      label: 'INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG',
      args: ['status'],
      env: { INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG: '0' },
      lines: [
        'INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG: must be 1 or unset (0 no longer exists: the built-in simulator cannot be allowed by a variable) (given "0")',
      ],
      code: 2,
    },
    {
      label: 'NODE_TLS_REJECT_UNAUTHORIZED',
      args: ['status'],
      env: { NODE_TLS_REJECT_UNAUTHORIZED: '0' },
      lines: [
        'NODE_TLS_REJECT_UNAUTHORIZED: must not be 0: it turns off certificate checks for the operator and Postgres alike (trust your CA with NODE_EXTRA_CA_CERTS) (given "0")',
      ],
      code: 2,
    },
    {
      label: 'CONSOLE_HOST',
      args: ['status'],
      env: { CONSOLE_HOST: 'h'.repeat(256) },
      lines: [`CONSOLE_HOST: must be at most 255 characters (given "${'h'.repeat(80)}…")`],
      code: 2,
    },
    NUMBER('CONSOLE_PORT', '-1', 0, 65_535),
    {
      label: 'CONSOLE_SESSION_MAX',
      args: ['status'],
      env: { CONSOLE_SESSION_MAX: '1m' },
      lines: ['CONSOLE_SESSION_MAX: must be a duration from 5m to 7d (not forever) (given "1m")'],
      code: 2,
    },
    {
      label: 'CONSOLE_PUBLIC_URL',
      args: ['status'],
      env: { CONSOLE_PUBLIC_URL: 'console.example.com' },
      lines: ['CONSOLE_PUBLIC_URL: must be an http:// or https:// URL (given "console.example.com")'],
      code: 2,
    },
    NUMBER('CONSOLE_MAX_CONNECTIONS', '1', 2, 500),
    NUMBER('CONSOLE_SESSIONS_PER_ROLE', '0', 1, 100),
    {
      label: 'CONSOLE_ALLOW_TRUST_AUTH',
      args: ['status'],
      env: { CONSOLE_ALLOW_TRUST_AUTH: 'yes' },
      lines: ['CONSOLE_ALLOW_TRUST_AUTH: must be local-development or unset (given "yes")'],
      code: 2,
    },
    {
      label: 'CONSOLE_IDLE_TIMEOUT',
      args: ['status'],
      env: { CONSOLE_IDLE_TIMEOUT: '1s' },
      lines: ['CONSOLE_IDLE_TIMEOUT: must be a duration from 1m to 12h (not forever) (given "1s")'],
      code: 2,
    },
    {
      label: 'CONSOLE_TRUSTED_HEADER',
      args: ['console'],
      env: { ...NO_DATABASE, CONSOLE_TRUSTED_HEADER: 'Cookie' },
      lines: ['CONSOLE_TRUSTED_HEADER: must be the identity header the proxy sets, not a standard one'],
      code: 2,
    },
    {
      label: 'CONSOLE_TRUSTED_PROXIES',
      args: ['console'],
      env: { ...NO_DATABASE, CONSOLE_TRUSTED_PROXIES: 'not-an-address' },
      lines: ['CONSOLE_TRUSTED_PROXIES: "not-an-address" is not an IP address or CIDR'],
      code: 2,
    },
    {
      label: 'CONSOLE_ROLE_MAP_FILE',
      args: ['console'],
      env: { ...NO_DATABASE, CONSOLE_ROLE_MAP_FILE: '/nonexistent/roles' },
      lines: ['CONSOLE_ROLE_MAP_FILE: set without CONSOLE_TRUSTED_HEADER (the proxy sign-in mode needs both)'],
      code: 2,
    },
    {
      label: 'CONSOLE_LOGIN_ROLE',
      args: ['console'],
      env: { ...NO_DATABASE, CONSOLE_LOGIN_ROLE: 'console_login' },
      lines: ['CONSOLE_LOGIN_ROLE: set without CONSOLE_TRUSTED_HEADER (the proxy sign-in mode needs both)'],
      code: 2,
    },
    {
      label: 'CONSOLE_LOGIN_PASSWORD',
      args: ['status'],
      env: { CONSOLE_LOGIN_PASSWORD: 'p'.repeat(1025) },
      lines: [`CONSOLE_LOGIN_PASSWORD: must be at most 1024 characters (${SECRET})`],
      code: 2,
    },
    {
      label: 'SANDBOX_TIME_SCALE',
      args: ['status'],
      env: { SANDBOX_TIME_SCALE: '-1' },
      lines: ['SANDBOX_TIME_SCALE: must be greater than 0 (given "-1")'],
      code: 2,
    },
    {
      label: 'LEASE_DATABASE_URL',
      args: ['status'],
      env: { LEASE_DATABASE_URL: 'http://x' },
      lines: [`LEASE_DATABASE_URL: must be a postgres:// or postgresql:// URL (${SECRET})`],
      code: 2,
    },
    ...TELEMETRY_VARIABLE_CASES,
  ].map((c) => [c.label, c as ErrorCase]),
);

/** Several problems, and values from outside carrying control characters: one line each, only the values escaped. */
export const SHAPE_CASES: readonly ErrorCase[] = [
  {
    label: 'two bad variables: two lines',
    args: ['status'],
    env: { ...OPERATOR, INTAKE_API_BASE_URL: 'not-a-url', POLL_INTERVAL_MS: 'abc' },
    lines: [
      'INTAKE_API_BASE_URL: must be an absolute http(s) URL (given "not-a-url")',
      'POLL_INTERVAL_MS: must be a whole number from 10 to 3600000 (given "abc")',
    ],
    code: 2,
  },
  {
    label: 'a newline, an escape and a bidi override in a value: escaped in the value only',
    args: ['status'],
    env: { POLL_INTERVAL_MS: '1\n2\u001b[31m\u202e' },
    lines: ['POLL_INTERVAL_MS: must be a whole number from 10 to 3600000 (given "1\\n2\\e[31m\\u{202e}")'],
    code: 2,
  },
];

/** Each command's bad input (docs/commands.md, "Error messages", lists exactly these lines). */
export const COMMAND_CASES: readonly ErrorCase[] = [
  {
    label: 'an unknown command',
    args: ['bogus'],
    env: {},
    lines: ["unknown command 'bogus' (--help lists the commands and options)"],
    code: 2,
  },
  {
    label: 'an unknown option',
    args: ['status', '--bogus'],
    env: {},
    lines: ["unknown option '--bogus' (--help lists the commands and options)"],
    code: 2,
  },
  {
    label: 'a missing argument',
    args: ['prescriptions', 'get'],
    env: {},
    lines: ["missing required argument 'external_id' (--help lists the commands and options)"],
    code: 2,
  },
  {
    label: 'a missing required option',
    args: ['quarantine', 'dismiss', 'e1'],
    env: {},
    lines: ["required option '--reason <code>' not specified (--help lists the commands and options)"],
    code: 2,
  },
  { label: 'run --json', args: ['run', '--json'], env: {}, lines: ['--json only applies together with --once'], code: 2 },
  {
    label: 'run --wait-for-lease',
    args: ['run', '--once', '--wait-for-lease', 'x'],
    env: {},
    lines: ['--wait-for-lease: must be whole seconds from 0 to 86400 (got "x")'],
    code: 2,
  },
  {
    label: 'run --demo with an operator',
    args: ['run', '--demo'],
    env: OPERATOR,
    lines: ['--demo: the built-in simulator cannot run with INTAKE_API_BASE_URL set'],
    code: 2,
  },
  {
    label: 'run, a deployment without a base URL',
    args: ['run'],
    env: NO_DATABASE,
    lines: [
      'INTAKE_API_BASE_URL: is required: DATABASE_URL is set, so this is a deployment, not the demo; nothing was started or written (the built-in simulator starts only when nothing points elsewhere, or with `run --demo`)',
    ],
    code: 2,
  },
  {
    label: 'migrate --reassign-to',
    args: ['migrate', '--reassign-to', 'bad role'],
    env: NO_DATABASE,
    lines: ['--reassign-to: a role name is a letter or _ first, then letters, digits, _ $ . - (as CREATE ROLE made it)'],
    code: 2,
  },
  { label: 'grants --role', args: ['grants', '--role', 'bogus', '--to', 'x'], env: {}, lines: ['--role must be runtime or app'], code: 2 },
  {
    label: 'grants --to',
    args: ['grants', '--role', 'app', '--to', 'Bad Role'],
    env: {},
    lines: ['--to must be a plain role name (letters, digits, _ -; at most 63)'],
    code: 2,
  },
  {
    label: 'status --feed with --all-feeds',
    args: ['status', '--feed', 'north', '--all-feeds'],
    env: NO_DATABASE,
    lines: ['--all-feeds and --feed: give one of them'],
    code: 2,
  },
  {
    label: 'doctor --feed',
    args: ['doctor', '--feed', 'north'],
    env: OPERATOR,
    lines: ['--feed: "north" is not a configured feed (known feeds: default)'],
    code: 2,
  },
  {
    label: 'console without a database',
    args: ['console'],
    env: {},
    lines: ['DATABASE_URL: is required by the console (it signs users in as PostgreSQL roles of that database)'],
    code: 2,
  },
  {
    label: 'console, a database nothing listens on',
    args: ['console'],
    env: NO_DATABASE,
    lines: ['cannot reach the database at 127.0.0.1:5499 (DATABASE_URL): connection refused (is Postgres running and listening there?)'],
    code: 1,
  },
  { label: 'checkpoint reset', args: ['checkpoint', 'reset'], env: NO_DATABASE, lines: ['give --beginning or --to ITERATOR'], code: 2 },
  {
    label: 'checkpoint reset, both targets',
    args: ['checkpoint', 'reset', '--to', 'x', '--beginning'],
    env: NO_DATABASE,
    lines: ['give either --beginning or --to ITERATOR, not both'],
    code: 2,
  },
  {
    label: 'resync --feed',
    args: ['resync', '--feed', 'north'],
    env: NO_DATABASE,
    lines: ['--feed: "north" is not a configured feed (known feeds: default)'],
    code: 2,
  },
  {
    label: 'events list --limit',
    args: ['events', 'list', '--limit', '0'],
    env: OPERATOR,
    lines: ['--limit must be an integer from 1 to 250 (got "0")'],
    code: 2,
  },
  {
    label: 'events skip',
    args: ['events', 'skip'],
    env: { ...OPERATOR, ...NO_DATABASE },
    lines: ['give --at ITERATOR (the position /readyz names) or --beginning'],
    code: 2,
  },
  {
    label: 'a remote command without an operator',
    args: ['prescriptions', 'get', 'x'],
    env: {},
    lines: [
      'INTAKE_API_BASE_URL: is required for commands that call the intake API (set it, or use FEEDS_FILE)',
      'INTAKE_API_KEY: is required for commands that call the intake API (set it, or use FEEDS_FILE)',
      'INTAKE_API_SECRET: is required for commands that call the intake API (set it, or use FEEDS_FILE)',
    ],
    code: 2,
  },
  {
    label: 'prescriptions send, no such file',
    args: ['prescriptions', 'send', '/nonexistent/rx.json'],
    env: OPERATOR,
    lines: ['cannot read prescription file /nonexistent/rx.json: no such file'],
    code: 2,
  },
  {
    label: 'prescriptions send, a bad field',
    args: ['prescriptions', 'send', 'CASE_DIR/rx.json'],
    env: OPERATOR,
    file: { name: 'rx.json', text: '{"external_id": 5, "written_date": "2024-12-10", "number_of_refills": 0, "substitutions": 1}' },
    lines: [
      'prescription file CASE_DIR/rx.json: external_id: must be a string (nothing sent)',
      'prescription file CASE_DIR/rx.json: patient: is required (an object) (nothing sent)',
      'prescription file CASE_DIR/rx.json: medication: is required (an object) (nothing sent)',
      'prescription file CASE_DIR/rx.json: prescriber: is required (an object) (nothing sent)',
      'prescription file CASE_DIR/rx.json: pharmacy: is required (an object) (nothing sent)',
    ],
    code: 2,
  },
  {
    label: 'prescriptions list --status',
    args: ['prescriptions', 'list', '--status', 'bogus'],
    env: NO_DATABASE,
    lines: ['--status must be one of accepted, ordered, dispensed, delivered, rejected (got "bogus")'],
    code: 2,
  },
  {
    label: 'prescriptions import, no such file',
    args: ['prescriptions', 'import', '/nonexistent/rx.ndjson'],
    env: NO_DATABASE,
    lines: ['cannot read import file /nonexistent/rx.ndjson: no such file'],
    code: 2,
  },
  {
    label: 'prescriptions overdue --feed',
    args: ['prescriptions', 'overdue', '--feed', 'Bad Feed'],
    env: NO_DATABASE,
    lines: ['--feed: must be 1-64 of a-z 0-9 _ -'],
    code: 2,
  },
  {
    label: 'subscriptions create, not JSON',
    args: ['subscriptions', 'create', 'CASE_DIR/sub.json'],
    env: OPERATOR,
    file: { name: 'sub.json', text: 'nope' },
    lines: ['subscription file CASE_DIR/sub.json is not valid JSON'],
    code: 2,
  },
  {
    label: 'subscriptions migrate --to-base-url',
    args: ['subscriptions', 'migrate', '--to-base-url', 'nope'],
    env: { ...OPERATOR, ...NO_DATABASE },
    lines: ['--to-base-url: the intake API base URL is not an absolute URL'],
    code: 2,
  },
  {
    label: 'quarantine list --reason',
    args: ['quarantine', 'list', '--reason', 'bogus'],
    env: NO_DATABASE,
    lines: ['--reason must be one of malformed, unmatched, ambiguous, unsupported_version (got "bogus")'],
    code: 2,
  },
  {
    label: 'audit list --since',
    args: ['audit', 'list', '--since', 'bogus'],
    env: NO_DATABASE,
    lines: ['--since "bogus": give a duration back from now (90s, 15m, 12h, 30d, 2w) or a timestamp (2024-12-10 or 2024-12-10T08:00:00Z)'],
    code: 2,
  },
  {
    label: 'audit list --limit',
    args: ['audit', 'list', '--limit', '0'],
    env: NO_DATABASE,
    lines: ['--limit "0": a whole number from 1 to 10000'],
    code: 2,
  },
  {
    label: 'purge --feed',
    args: ['purge', '--feed', 'north'],
    env: NO_DATABASE,
    lines: ['--feed: "north" is not a configured feed (known feeds: default)'],
    code: 2,
  },
  { label: 'sandbox --port', args: ['sandbox', '--port', 'bogus'], env: {}, lines: ['--port must be a whole number'], code: 2 },
  {
    label: 'sandbox --expired-iterator',
    args: ['sandbox', '--expired-iterator', 'x'],
    env: {},
    lines: ['--expired-iterator must be one of error, jump'],
    code: 2,
  },
  {
    label: 'a database nothing listens on',
    args: ['status'],
    env: NO_DATABASE,
    lines: ['cannot reach the database at 127.0.0.1:5499 (DATABASE_URL): connection refused (is Postgres running and listening there?)'],
    code: 1,
  },
];

/**
 * The error reference docs/commands.md shows ("Error messages"), rendered from COMMAND_CASES: each
 * command line (the variables it needs named, not valued), then exactly what it prints, then its exit code.
 */
export function renderErrorReference(): string {
  return COMMAND_CASES.map((c) => {
    const vars = Object.keys(c.env).map((name) => `${name}=… `);
    const args = c.args.map((a) => a.replace('CASE_DIR/', '')).map((a) => (/\s/.test(a) ? `'${a}'` : a));
    const lines = c.lines.map((line) => `intake-sync: ${line.replaceAll('CASE_DIR/', '')}`);
    return [`$ ${vars.join('')}npx intake-sync ${args.join(' ')}`, ...lines, `(exit ${c.code})`].join('\n');
  }).join('\n\n');
}
