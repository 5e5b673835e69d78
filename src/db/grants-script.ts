import { feedAccessStatements, type FeedAccess, type FeedAccessOptions } from './feed-access.js';
import { grantStatements, type GrantRole } from './grants.js';

/**
 * Every statement `intake-sync grants` prints, in one transaction: the GRANTs, then the feed record
 * and its audit row. Tests and benches build a role's grants with it too.
 */
export function grantsScript(
  role: GrantRole,
  schema: string,
  roleName: string,
  access: FeedAccess,
  options: FeedAccessOptions = {},
): string[] {
  return [
    'BEGIN;',
    ...grantStatements(role, schema, roleName),
    ...feedAccessStatements(role, schema, roleName, access, options),
    'COMMIT;',
  ];
}
