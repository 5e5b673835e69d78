import { sql } from 'drizzle-orm';
import { queryRows, type Database } from './connection.js';
import { grantLabels, missingGrantChecks } from './grants.js';

/** Which of the documented roles the connected role looks like, judged from what it holds. */
export type RoleLikeness = 'owner' | 'runtime' | 'app' | 'none';

/**
 * Pure: the likeness from what the role holds. The owner owns the schema; an app role holds the SQL
 * API (every app grant) and none of the runtime's table privileges; a role with no usable grant in
 * the schema is none of them; anything else is a runtime role with some grants missing.
 */
export function judgeRoleLikeness(held: {
  ownsSchema: boolean;
  missingApp: number;
  runtimeTablePrivileges: number;
  schemaUsage: boolean;
}): RoleLikeness {
  if (held.ownsSchema) return 'owner';
  if (!held.schemaUsage) return 'none';
  if (held.missingApp === 0 && held.runtimeTablePrivileges === 0) return 'app';
  if (held.runtimeTablePrivileges === 0) return 'none';
  return 'runtime';
}

/** The connected role's name and which documented role it looks like (docs/security.md "Roles and grants"). */
export async function roleLikeness(database: Database): Promise<{ role: string; likeness: RoleLikeness }> {
  const schema = database.names.schema;
  const [row] = await queryRows<{ role: string; owns: boolean; usage: boolean }>(
    database.db,
    sql`select current_user as role,
      coalesce((select pg_has_role(nspowner, 'MEMBER') from pg_namespace where nspname = ${schema}), false) as owns,
      (to_regnamespace(${`"${schema}"`}) is not null and has_schema_privilege(${schema}, 'USAGE')) as usage`,
  );
  // the runtime's own table privileges (the app's views are in both lists): how many this role holds
  const appLabels = new Set(grantLabels(database, 'app'));
  const runtimeOnly = grantLabels(database, 'runtime', 'table').filter((label) => !appLabels.has(label));
  const missingTables = new Set((await missingGrantChecks(database, 'runtime')).filter((c) => c.kind === 'table').map((c) => c.label));
  const missingApp = (await missingGrantChecks(database, 'app')).length;
  const runtimeTablePrivileges = runtimeOnly.filter((label) => !missingTables.has(label)).length;
  return {
    role: row?.role ?? 'unknown',
    likeness: judgeRoleLikeness({
      ownsSchema: row?.owns === true,
      missingApp,
      runtimeTablePrivileges,
      schemaUsage: row?.usage === true,
    }),
  };
}
