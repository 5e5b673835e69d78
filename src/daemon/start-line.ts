import type { Config } from '../config/config.js';
import { databaseTarget } from '../db/url-target.js';
import type { SchemaLevel } from '../db/schema-level.js';
import type { SessionPlan } from '../db/session-plan.js';
import type { FeedConfig } from '../config/feeds-file.js';
import type { EnvFileRead } from '../config/env-file.js';

export interface StartLineInput {
  version: string;
  /** `process.versions.node`: the start line says which runtime the daemon runs on */
  nodeVersion: string;
  config: Config;
  feeds: readonly FeedConfig[];
  /** undefined on embedded PGlite */
  sessions: SessionPlan | undefined;
  level: SchemaLevel;
  /** the `.env` read at start (names only), undefined without one */
  envFile?: EnvFileRead | undefined;
}

/**
 * The fields of the daemon's first line: what it runs, against what, how often. Identifiers and
 * settings only: the database host, database and schema, never its user or password; each feed's
 * operator base URL, never its credentials. Pure.
 */
export function startLineFields(input: StartLineInput): Record<string, unknown> {
  const { config, sessions, level } = input;
  const target = config.DATABASE_URL ? databaseTarget(config.DATABASE_URL) : undefined;
  const lease = config.LEASE_DATABASE_URL ? databaseTarget(config.LEASE_DATABASE_URL) : undefined;
  return {
    version: input.version,
    node: input.nodeVersion,
    database: target
      ? { host: target.address, database: target.database, schema: config.DATABASE_SCHEMA }
      : { embedded: config.DATA_DIR, schema: config.DATABASE_SCHEMA },
    // null on PGlite: there is no pooler to detect
    pooler: sessions ? sessions.pooled : null,
    ...(lease ? { lease_host: lease.address } : {}),
    schema_level: level.latest,
    migrations: `${level.applied}/${level.expected}`,
    feeds: input.feeds.map((f) => ({ name: f.name, operator: f.baseUrl ?? 'embedded sandbox' })),
    poll_interval_ms: config.POLL_INTERVAL_MS,
    page_limit: config.PAGE_LIMIT,
    // the names a `.env` gave (never values), and those the real environment kept: what was configured where
    ...(input.envFile
      ? { env_file: { path: input.envFile.path, variables: input.envFile.taken, environment_kept: input.envFile.overridden } }
      : {}),
  };
}
