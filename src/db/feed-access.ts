import { FEED_NAME_PATTERN } from './feed-name.js';
import { isPlainRoleName, type GrantRole } from './grants.js';

/**
 * Which feeds a role may use, as `intake-sync grants` records it in `feed_access`
 * (drizzle/0013_feed_access.sql; the role's name beside its OID since 0029_tenant_walls):
 * - `feeds`: exactly these (replacing what the role had);
 * - `all`: every feed (its record is removed: a role with none is unrestricted);
 * - `unchanged`: the grants only; what the role may use stays as recorded (the runtime role, which
 *   is unrestricted whatever is recorded; `grants --role app` always names feeds or --all-feeds).
 */
export type FeedAccess = { kind: 'feeds'; feeds: readonly string[] } | { kind: 'all' } | { kind: 'unchanged' };

/** How the statements treat a feed the database has never seen (`--new-feed`: accept it). */
export interface FeedAccessOptions {
  newFeed?: boolean;
}

/** `'"role"'::regrole`: the role as a quoted identifier inside a literal (regrole folds unquoted names). */
function roleLiteral(roleName: string): string {
  return `'"${roleName}"'::regrole`;
}

/**
 * A DO block refusing feeds this database has never seen (not registered by `migrate`/`run`, not
 * recorded for any role), naming the ones it knows: a typo would otherwise lock an app out silently.
 */
function knownFeedsCheck(schema: string, feeds: readonly string[]): string {
  const wanted = feeds.map((feed) => `'${feed}'`).join(', ');
  return [
    'DO $check$',
    'DECLARE',
    `  known text[] := ARRAY(SELECT c."feed" FROM "${schema}"."feed_checkpoints" c UNION SELECT a."feed" FROM "${schema}"."feed_access" a ORDER BY 1);`,
    `  unknown text[] := ARRAY(SELECT f FROM pg_catalog.unnest(ARRAY[${wanted}]::text[]) f WHERE NOT (f = ANY (known)) ORDER BY 1);`,
    'BEGIN',
    '  IF pg_catalog.cardinality(unknown) > 0 THEN',
    `    RAISE EXCEPTION '--feed %: this database has never seen that feed (known: %); check the name, or add --new-feed if it is a feed not yet run',`,
    `      pg_catalog.array_to_string(unknown, ', '), COALESCE(NULLIF(pg_catalog.array_to_string(known, ', '), ''), 'none') USING ERRCODE = '42704';`,
    '  END IF;',
    'END',
    '$check$;',
  ].join('\n');
}

/**
 * The statements that record `access` for `roleName`, plus the audit row of the grant (`role.grant`,
 * the owner running them being the actor), for the owner to run with the GRANTs in one transaction.
 * First they remove the records of dropped roles (whose OID a new role could get again). The
 * runtime role is always unrestricted: its record, if any, is removed. Every statement returns no
 * rows, so `psql -q` prints nothing but errors.
 */
export function feedAccessStatements(
  role: GrantRole,
  schema: string,
  roleName: string,
  access: FeedAccess,
  options: FeedAccessOptions = {},
): string[] {
  if (!isPlainRoleName(roleName)) throw new Error(`role name ${JSON.stringify(roleName)} is not a plain identifier`);
  // the name is quoted inside a $audit$ block: it must not close it
  if (roleName.includes('$audit$')) throw new Error(`role name ${JSON.stringify(roleName)} may not contain $audit$`);
  if (role === 'runtime' && access.kind === 'feeds') throw new Error('the runtime role is unrestricted: feeds apply to app roles');
  const table = `"${schema}"."feed_access"`;
  const statements: string[] = [`DO $forget$ BEGIN PERFORM "${schema}"."_forget_dropped_roles"(true); END $forget$;`];
  const effective: FeedAccess = role === 'runtime' ? { kind: 'all' } : access;
  const feeds = effective.kind === 'feeds' ? [...new Set(effective.feeds)].sort() : [];
  for (const feed of feeds) if (!FEED_NAME_PATTERN.test(feed)) throw new Error(`feed ${JSON.stringify(feed)} is not a feed name`);
  if (feeds.length > 0 && !options.newFeed) statements.push(knownFeedsCheck(schema, feeds));
  if (effective.kind !== 'unchanged') statements.push(`DELETE FROM ${table} WHERE "role" = ${roleLiteral(roleName)};`);
  if (feeds.length > 0) {
    const values = feeds.map((feed) => `(${roleLiteral(roleName)}, '${roleName}', '${feed}')`).join(', ');
    statements.push(`INSERT INTO ${table} ("role", "role_name", "feed") VALUES ${values};`);
  }
  const detail = { kind: role, feeds: effective.kind === 'feeds' ? feeds : effective.kind };
  statements.push(
    `DO $audit$ BEGIN PERFORM "${schema}"."_audit"('role.grant', NULL, '${roleName}', '${JSON.stringify(detail)}'::jsonb); END $audit$;`,
  );
  return statements;
}
