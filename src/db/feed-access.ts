import { FEED_NAME_PATTERN } from './feed-name.js';
import { isPlainRoleName, type GrantRole } from './grants.js';

/**
 * Which feeds a role may use, as `intake-sync grants` records it in `feed_access`
 * (drizzle/0013_feed_access.sql):
 * - `feeds`: exactly these (replacing what the role had);
 * - `all`: every feed (its record is removed: a role with none is unrestricted);
 * - `unchanged`: the grants only; what the role may use stays as recorded (a role never
 *   restricted keeps every feed).
 */
export type FeedAccess = { kind: 'feeds'; feeds: readonly string[] } | { kind: 'all' } | { kind: 'unchanged' };

/** `'"role"'::regrole`: the role as a quoted identifier inside a literal (regrole folds unquoted names). */
function roleLiteral(roleName: string): string {
  return `'"${roleName}"'::regrole`;
}

/**
 * The statements that record `access` for `roleName`, plus the audit row of the grant (`role.grant`,
 * the owner running them being the actor), for the owner to run with the GRANTs in one transaction.
 * The runtime role is always unrestricted: its record, if any, is removed.
 */
export function feedAccessStatements(role: GrantRole, schema: string, roleName: string, access: FeedAccess): string[] {
  if (!isPlainRoleName(roleName)) throw new Error(`role name ${JSON.stringify(roleName)} is not a plain identifier`);
  if (role === 'runtime' && access.kind === 'feeds') throw new Error('the runtime role is unrestricted: feeds apply to app roles');
  const table = `"${schema}"."feed_access"`;
  const statements: string[] = [];
  const effective: FeedAccess = role === 'runtime' ? { kind: 'all' } : access;
  if (effective.kind !== 'unchanged') statements.push(`DELETE FROM ${table} WHERE "role" = ${roleLiteral(roleName)};`);
  if (effective.kind === 'feeds') {
    const feeds = [...new Set(effective.feeds)].sort();
    for (const feed of feeds) if (!FEED_NAME_PATTERN.test(feed)) throw new Error(`feed ${JSON.stringify(feed)} is not a feed name`);
    const values = feeds.map((feed) => `(${roleLiteral(roleName)}, '${feed}')`).join(', ');
    statements.push(`INSERT INTO ${table} ("role", "feed") VALUES ${values};`);
  }
  const detail = {
    kind: role,
    feeds: effective.kind === 'feeds' ? [...new Set(effective.feeds)].sort() : effective.kind,
  };
  statements.push(`SELECT "${schema}"."_audit"('role.grant', NULL, '${roleName}', '${JSON.stringify(detail)}'::jsonb);`);
  return statements;
}
