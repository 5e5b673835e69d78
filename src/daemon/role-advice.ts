import type { RoleLikeness } from '../db/role-likeness.js';

/**
 * Pure: what to tell a role that lacks the runtime grants a command needs. Never advises granting
 * runtime rights to a role that looks like an application's or has no role at all here: it says
 * which role the command needs and which role this one looks like. Only a runtime role with some
 * grants missing (an upgrade added a table, say) is told to rerun `grants`.
 */
export function missingRuntimeGrantsAdvice(input: {
  role: string;
  likeness: RoleLikeness;
  missing: readonly string[];
  schema: string;
}): string {
  const { role, likeness, missing, schema } = input;
  switch (likeness) {
    case 'app':
      return (
        `this command needs the runtime role, and the database role ${role} looks like an app role ` +
        `(it holds the SQL API grants in schema ${schema}, none of the runtime's): run it with DATABASE_URL ` +
        `naming the runtime role (docs/security.md "Roles and grants"); an application role should keep only the SQL API`
      );
    case 'none':
      // a new role not granted yet looks the same: name what it lacks, and how a role meant to be the
      // runtime role gets it, without telling anyone to grant it to whatever role they happen to use
      return (
        `this command needs the runtime role, and the database role ${role} holds no grant in schema ${schema} ` +
        `(neither the runtime's nor an app's); it lacks ${missing.length} grant(s) the daemon needs: ${missing.join('; ')}. ` +
        `Run it with DATABASE_URL naming the runtime role; if ${role} is meant to be the runtime role, its owner grants it with ` +
        `intake-sync grants --role runtime --to ${role} (DATABASE_SCHEMA=${schema}) | psql (docs/security.md "Roles and grants")`
      );
    case 'owner':
    case 'runtime':
      return (
        `the database role ${role} looks like the runtime role but lacks ${missing.length} grant(s) the daemon needs: ` +
        `${missing.join('; ')}. As the owner, run: intake-sync grants --role runtime --to ${role} (DATABASE_SCHEMA=${schema}) | psql`
      );
  }
}
