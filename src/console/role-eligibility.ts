import type postgres from 'postgres';
import { visibleFeedNames } from '../store-api/feeds/feed-overview.js';
import { runnerOfSql } from '../store-api/runner.js';

/** What the database says about the signed-in role (read on its own connection); attributes hold if either role has them. */
export interface RoleFacts {
  /** current_user: whose rights the pages use */
  role: string;
  /** session_user: who logged in (the same role in password mode; CONSOLE_LOGIN_ROLE in SSO mode) */
  loginRole: string;
  superuser: boolean;
  bypassRls: boolean;
  createRole: boolean;
  createDb: boolean;
  /** a member of the schema's owner (owns it, or inherits its rights) */
  schemaOwner: boolean;
  /** holds the runtime's table privileges (INSERT on the events table: only `grants --role runtime` gives it) */
  runtime: boolean;
  /** the feeds it may see: null = every feed, [] = none */
  feeds: readonly string[] | null;
}

/**
 * Why the console refuses this role, in one line, or undefined when it may sign in. The console is
 * for people triaging feeds: never the roles that run or own the deployment, nor one whose rights
 * go around the feed walls. `urlRole` is DATABASE_URL's user name. Pure.
 */
export function refusalReason(facts: RoleFacts, urlRole: string | undefined): string | undefined {
  if (facts.superuser) return 'This role is a superuser: the console is for staff roles, which see only their feeds.';
  if (facts.bypassRls) return 'This role has BYPASSRLS: the console is for staff roles without it.';
  if (facts.createRole) return 'This role has CREATEROLE: the console is for staff roles without it.';
  if (facts.createDb) return 'This role has CREATEDB: the console is for staff roles without it.';
  if (facts.schemaOwner) return "This role owns the deployment's schema: sign in with a staff role.";
  if (urlRole !== undefined && (facts.role === urlRole || facts.loginRole === urlRole))
    return "This is DATABASE_URL's role: sign in with a staff role.";
  if (facts.runtime) return "This is the daemon's runtime role: sign in with a staff role.";
  if (facts.feeds !== null && facts.feeds.length === 0)
    return 'This role may see no feed: ask an administrator to grant it one (intake-sync grants --role app --feed NAME).';
  return undefined;
}

/**
 * Reads the facts of the connection's roles: the attributes of both session_user and current_user
 * (in SSO mode the console's login role and the mapped role; in password mode one role), the
 * feeds current_user may see. A role with no grant on the schema sees no feed.
 */
export async function readRoleFacts(sql: postgres.Sql, schema: string): Promise<RoleFacts> {
  const [row] = await sql<
    {
      role: string;
      login_role: string;
      superuser: boolean;
      bypass_rls: boolean;
      create_role: boolean;
      create_db: boolean;
      schema_owner: boolean;
      runtime: boolean;
      usable: boolean;
    }[]
  >`select current_user::text as role, session_user::text as login_role,
      bool_or(r.rolsuper) as superuser, bool_or(r.rolbypassrls) as bypass_rls, bool_or(r.rolcreaterole) as create_role,
      bool_or(r.rolcreatedb) as create_db,
      coalesce(bool_or((select pg_has_role(r.oid, n.nspowner, 'MEMBER') from pg_namespace n where n.nspname = ${schema})), false) as schema_owner,
      coalesce(bool_or(exists (select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = ${schema} and c.relname = 'events' and has_table_privilege(r.oid, c.oid, 'INSERT'))), false) as runtime,
      coalesce(has_schema_privilege(current_user, ${schema}, 'USAGE'), false) as usable
    from pg_roles r where r.rolname in (session_user, current_user)
    having count(*) > 0`;
  if (!row) throw Object.assign(new Error('the signed-in role is not in pg_roles'), { code: 'ROLE_GONE' });
  let feeds: string[] | null = [];
  if (row.usable && !row.superuser && !row.schema_owner) {
    // what the Feeds page would list: the SQL API's views decide (a role with no grant on them sees none)
    feeds = await visibleFeedNames(runnerOfSql(sql, schema)).catch(() => []);
  }
  return {
    role: row.role,
    loginRole: row.login_role,
    superuser: row.superuser,
    bypassRls: row.bypass_rls,
    createRole: row.create_role,
    createDb: row.create_db,
    schemaOwner: row.schema_owner,
    runtime: row.runtime,
    feeds,
  };
}
