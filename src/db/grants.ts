import { sql } from 'drizzle-orm';
import { queryRows, type Database } from './connection.js';

/**
 * The privileges each role needs, as data: rendered to GRANT statements (`intake-sync grants`,
 * docs/security.md) and checked at start (`run` names what is missing). One list, so the documented
 * grants are exactly the ones the code is tested with.
 *
 * - runtime: the daemon (`run`, and the CLI commands an operator runs beside it).
 * - app: the vendor's applications, through the SQL API only: the functions run as their owner
 *   (SECURITY DEFINER) and the views with their owner's privileges, so no table grant is needed.
 */
export type GrantRole = 'runtime' | 'app';

export type Grant =
  | { kind: 'schema'; privilege: 'USAGE' }
  | { kind: 'table'; name: string; privileges: readonly ('SELECT' | 'INSERT' | 'UPDATE' | 'DELETE')[] }
  | { kind: 'sequence'; name: string; privileges: readonly ('USAGE' | 'SELECT')[] }
  | { kind: 'function'; signature: string };

/** The SQL API, by signature (argument types as Postgres prints them). */
export const API_FUNCTIONS = [
  'register_prescription(text, jsonb, text)',
  'send_prescription(jsonb, text)',
  'cancel_prescription(text, text)',
  'status_changes_since(text, integer)',
  'identity_key(jsonb)',
  // quarantine triage (drizzle/0014_triage.sql); a reveal request committed before each identity read (0017)
  'request_reveal(text, text)',
  'show_quarantined(text, text)',
  'resolve_quarantined(text, text, text)',
  'dismiss_quarantined(text, text, text, boolean)',
  // the quarantine list, one keyset page filtered inside (the console's Quarantine page, issue 29 §8)
  'quarantine_page(text, text, text, timestamptz, text, timestamptz, text, text, integer, boolean)',
  // its total and Dismiss all matching, through the same filter (_quarantine_filter), and the finding reasons (issue 34 §5)
  'quarantine_count(text, text, text, timestamptz, text, bigint)',
  'dismiss_matching(text, text, text, timestamptz, text, bigint, text, integer)',
  'quarantine_reasons()',
  // the console's prescription page: its own and its resolve-linked subscriptions (issue 34 §6)
  'prescription_subscriptions(text, text)',
  // the console's Overdue page and the Feeds page's overdue counts, each stage one index range (issue 34 §6)
  'overdue_page(text, text, integer)',
  'overdue_counts(integer)',
] as const;

/**
 * Functions the daemon's and the operator commands' own statements call: the page apply's match
 * rule (with a triage-linked subscription first, 0014: the page statement inlines it), the rematch,
 * the audit trail (recordAudit, src/store-api/audit/audit-entries.ts: the commands that change state record who ran them)
 * and the retention cleaner's purges (0012_retention.sql: the role needs no DELETE on any table, and
 * only the owner's _purge_audit removes audit rows, never younger than its floor), and the statistics
 * task's ANALYZE (sql/api/statistics/_analyze_table.sql: only a table's owner may analyze it before PostgreSQL 17).
 */
const WORKER_FUNCTIONS = [
  '_match_prescription(text, text, text)',
  '_match_prescription(text, text, text, text)',
  'rematch_held(text[], text[], text)',
  '_audit(text, text, text, jsonb, text)',
  '_purge(text, text, timestamptz, integer)',
  '_purge_due(text, text, timestamptz)',
  '_purge_audit(text, timestamptz, integer, boolean)',
  // RETAIN_TERMINAL_IDENTITIES (0017)
  '_purge_identities(text, timestamptz, integer, boolean)',
  '_purge_ran(text, jsonb, text, boolean)',
  // the statistics task (src/sync/statistics/): ANALYZE of the schema's own tables, as their owner
  '_analyze_table(text)',
  // the match lock (page apply, registration, rematch) and the source lock (outbox claims, the start
  // of an API version migration): row locks on feed_locks, which only the owner may write (0017)
  '_feed_lock(text, text, boolean)',
  // `feeds pause` / `feeds resume` (0027): an operator's action on the whole deployment, never an app's
  'pause_feed(text, text)',
  'resume_feed(text)',
  // a malformed finding's key, keyed with the database's secret (0029_tenant_walls: never an app's)
  '_finding_key(text)',
  // the feed records of dropped roles: `doctor` lists them (the owner's `migrate` and `grants` remove them)
  '_forget_dropped_roles(boolean)',
] as const;

export const API_VIEWS = [
  'prescription_status',
  'outbox_status',
  'quarantine_open',
  // the operator console's reads (0021_console.sql, docs/console.md)
  'feed_overview',
  'feed_activity',
  'audit_trail',
  'prescription_history',
  // issue 28: stalled prescriptions (docs/sql-api/overdue.md)
  'overdue_prescriptions',
] as const;

type TablePrivilege = 'SELECT' | 'INSERT' | 'UPDATE' | 'DELETE';

/**
 * The runtime role's table privileges, one line per table with the commands that need them. A
 * migration that adds a table the daemon or an operator command writes adds its line here (and
 * least-privilege.test.ts runs that command as the runtime role).
 */
const RUNTIME_TABLES: readonly { name: string; privileges: readonly TablePrivilege[] }[] = [
  // the version check before anything runs
  { name: '__drizzle_migrations', privileges: ['SELECT'] },
  // ... and which of the SQL API's files (sql/api) are current
  { name: '__sql_api_applied', privileges: ['SELECT'] },
  // registration (import, send), status updates of page applies and rematch
  { name: 'prescriptions', privileges: ['SELECT', 'INSERT', 'UPDATE'] },
  // rematch links held events to prescriptions
  { name: 'events', privileges: ['SELECT', 'INSERT', 'UPDATE'] },
  { name: 'quarantine', privileges: ['SELECT', 'INSERT', 'UPDATE'] },
  // the page statement's match reads which subscriptions triage linked to a prescription (0014)
  { name: 'subscription_links', privileges: ['SELECT'] },
  { name: 'feed_checkpoints', privileges: ['SELECT', 'INSERT', 'UPDATE'] },
  { name: 'checkpoint_resets', privileges: ['SELECT', 'INSERT'] },
  // API version migration: the worker reads the sources, moves a draining one's position and retires it;
  // `subscriptions migrate` records sources and per-prescription progress, and deletes the progress
  // rows of an earlier migration to the same version when a new one starts
  { name: 'feed_sources', privileges: ['SELECT', 'INSERT', 'UPDATE'] },
  { name: 'subscription_migrations', privileges: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] },
  // delivery reads pending rows and records each attempt and outcome
  { name: 'outbox', privileges: ['SELECT', 'UPDATE'] },
  // `audit list` (written only through _audit, which runs as the owner)
  { name: 'audit_log', privileges: ['SELECT'] },
  // the retention cleaner's last run, for its metric (the purges themselves are functions)
  { name: 'retention_runs', privileges: ['SELECT'] },
  // the feed leases and the replicas' membership (0016, src/sync/leadership/lease-sql.ts): each
  // replica's lock session takes, renews and gives up its rows, and forgets dead replicas' members
  { name: 'feed_leases', privileges: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] },
  { name: 'lease_members', privileges: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] },
  // the daemon writes each feed's stage deadlines at start (overdue_prescriptions reads them, 0019)
  { name: 'feed_deadlines', privileges: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] },
  // the leading worker records why it stopped a feed, and removes it when the feed runs again (0026)
  { name: 'feed_stops', privileges: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'] },
  // every replica reads the pauses once per lease check (written only through pause_feed/resume_feed, 0027)
  { name: 'feed_pauses', privileges: ['SELECT'] },
  // a reload marks the feeds it removed, and a start or reload that names one again clears it (0027)
  { name: 'feed_retirements', privileges: ['SELECT', 'INSERT', 'DELETE'] },
];

const RUNTIME_SEQUENCES = ['prescriptions_id_seq', 'quarantine_id_seq', 'checkpoint_resets_id_seq'] as const;

const RUNTIME_GRANTS: readonly Grant[] = [
  { kind: 'schema', privilege: 'USAGE' },
  ...RUNTIME_TABLES.map((t): Grant => ({ kind: 'table', name: t.name, privileges: t.privileges })),
  ...RUNTIME_SEQUENCES.map((name): Grant => ({ kind: 'sequence', name, privileges: ['USAGE'] })),
  ...WORKER_FUNCTIONS.map((signature): Grant => ({ kind: 'function', signature })),
  ...API_FUNCTIONS.map((signature): Grant => ({ kind: 'function', signature })),
  ...API_VIEWS.map((name): Grant => ({ kind: 'table', name, privileges: ['SELECT'] })),
];

const APP_GRANTS: readonly Grant[] = [
  { kind: 'schema', privilege: 'USAGE' },
  ...API_FUNCTIONS.map((signature): Grant => ({ kind: 'function', signature })),
  ...API_VIEWS.map((name): Grant => ({ kind: 'table', name, privileges: ['SELECT'] })),
];

export function grantsFor(role: GrantRole): readonly Grant[] {
  return role === 'runtime' ? RUNTIME_GRANTS : APP_GRANTS;
}

const ROLE_NAME = /^[a-z_][a-z0-9_$-]{0,62}$/i;

/** A role name grantStatements() can quote safely: letters, digits, _ $ -, at most 63 bytes. */
export function isPlainRoleName(name: string): boolean {
  return ROLE_NAME.test(name);
}

/** The GRANT statements giving `roleName` what `role` needs in `schema` (for psql, as the owner). */
export function grantStatements(role: GrantRole, schema: string, roleName: string): string[] {
  if (!isPlainRoleName(roleName)) throw new Error(`role name ${JSON.stringify(roleName)} is not a plain identifier`);
  const grantee = `"${roleName}"`;
  return grantsFor(role).map((grant) => {
    switch (grant.kind) {
      case 'schema':
        return `GRANT USAGE ON SCHEMA "${schema}" TO ${grantee};`;
      case 'table':
        return `GRANT ${grant.privileges.join(', ')} ON TABLE "${schema}"."${grant.name}" TO ${grantee};`;
      case 'sequence':
        return `GRANT ${grant.privileges.join(', ')} ON SEQUENCE "${schema}"."${grant.name}" TO ${grantee};`;
      case 'function':
        return `GRANT EXECUTE ON FUNCTION "${schema}".${grant.signature} TO ${grantee};`;
    }
  });
}

/** How a grant reads in a message: `INSERT on intake_sync.quarantine`. */
function describe(grant: Grant, privilege: string, schema: string): string {
  switch (grant.kind) {
    case 'schema':
      return `USAGE on schema ${schema}`;
    case 'table':
      return `${privilege} on ${schema}.${grant.name}`;
    case 'sequence':
      return `${privilege} on sequence ${schema}.${grant.name}`;
    case 'function':
      return `EXECUTE on function ${schema}.${grant.signature}`;
  }
}

/**
 * What the connected role lacks of `role`'s grants, each named (`INSERT on intake_sync.quarantine`);
 * empty when it has them all. One query of has_*_privilege checks; a missing object counts as missing.
 */
export async function missingGrants(database: Database, role: GrantRole): Promise<string[]> {
  return (await missingGrantChecks(database, role)).map((c) => c.label);
}

/** One privilege of one grant of `role`, labelled as missingGrants names it. */
interface GrantItem {
  readonly label: string;
  readonly kind: Grant['kind'];
  readonly grant: Grant;
  readonly privilege: string;
}

/** Every privilege `role` is granted, one item each: the one walk both the labels and the checks use. */
function grantItems(role: GrantRole, schema: string): GrantItem[] {
  return grantsFor(role).flatMap((grant) => {
    const privileges = grant.kind === 'schema' ? ['USAGE'] : grant.kind === 'function' ? ['EXECUTE'] : grant.privileges;
    return privileges.map((privilege) => ({ label: describe(grant, privilege, schema), kind: grant.kind, grant, privilege }));
  });
}

/** The has_*_privilege check of one item; a missing object answers false instead of raising. */
function privilegeCheck(item: GrantItem, schema: string): ReturnType<typeof sql> {
  const { grant, privilege } = item;
  if (grant.kind === 'schema') {
    return sql`(case when to_regnamespace(${`"${schema}"`}) is null then false else has_schema_privilege(${schema}, 'USAGE') end)`;
  }
  if (grant.kind === 'function') {
    const name = `"${schema}".${grant.signature}`;
    return sql`(case when to_regprocedure(${name}) is null then false else has_function_privilege(to_regprocedure(${name}), 'EXECUTE') end)`;
  }
  const name = `"${schema}"."${grant.name}"`;
  const fn = grant.kind === 'table' ? sql`has_table_privilege` : sql`has_sequence_privilege`;
  return sql`(case when to_regclass(${name}) is null then false else ${fn}(to_regclass(${name}), ${privilege}) end)`;
}

/** The grants of `role` the connected role lacks, with the kind of object each is on. */
export async function missingGrantChecks(database: Database, role: GrantRole): Promise<{ label: string; kind: Grant['kind'] }[]> {
  const schema = database.names.schema;
  const items = grantItems(role, schema);
  // name lookups inside a schema the role may not use raise instead of answering null
  const usable = sql`(to_regnamespace(${`"${schema}"`}) is not null and has_schema_privilege(${schema}, 'USAGE'))`;
  const [row] = await queryRows<Record<string, boolean>>(
    database.db,
    sql`select ${sql.join(
      items.map((item, i) => sql`case when ${usable} then ${privilegeCheck(item, schema)} else false end as ${sql.identifier(`g${i}`)}`),
      sql`, `,
    )}`,
  );
  return items.filter((_, i) => row?.[`g${i}`] !== true).map(({ label, kind }) => ({ label, kind }));
}

/** The labels of every grant of `role` (of one kind, if given), as missingGrants names them. */
export function grantLabels(database: Database, role: GrantRole, kind?: Grant['kind']): string[] {
  return grantItems(role, database.names.schema)
    .filter((item) => !kind || item.kind === kind)
    .map((item) => item.label);
}
