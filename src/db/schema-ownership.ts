import { sql } from 'drizzle-orm';
import { queryRows, type Db } from './connection.js';
import { ForeignSchemaError } from './errors/foreign-schema-error.js';
import { foreignOwnerAdvice } from './foreign-owner-advice.js';

type Executor = Pick<Db, 'execute'>;

/** How many foreign objects a refusal names (the rest are counted). */
const NAMED_OBJECTS = 5;

/**
 * Before `migrate` creates or changes anything: the schema, when it exists, must be owned by the
 * migrating role itself (not merely a role it is a member of: a superuser is a member of every role)
 * and hold no table, view, sequence, function or type owned by another role. Throws
 * ForeignSchemaError naming them. A schema that does not exist yet passes (migrate creates it).
 */
export async function assertOwnedSchema(tx: Executor, schema: string): Promise<void> {
  const [space] = await queryRows<{
    owner: string;
    mine: boolean;
    me: string;
    owner_super: boolean;
    me_super: boolean;
    me_uses: boolean;
  }>(
    tx,
    sql`select pg_get_userbyid(n.nspowner) as owner, current_user::text as me,
               n.nspowner = (select r.oid from pg_roles r where r.rolname = current_user) as mine,
               (select o.rolsuper from pg_roles o where o.oid = n.nspowner) as owner_super,
               (select r.rolsuper from pg_roles r where r.rolname = current_user) as me_super,
               has_schema_privilege(current_user, n.oid, 'USAGE') as me_uses
        from pg_namespace n where n.nspname = ${schema}::text`,
  );
  if (!space) return;
  if (!space.mine) {
    throw new ForeignSchemaError(
      foreignOwnerAdvice({
        schema,
        owner: space.owner,
        ownerIsSuperuser: space.owner_super,
        me: space.me,
        meIsSuperuser: space.me_super,
        meUsesSchema: space.me_uses,
      }),
    );
  }
  const foreign = await queryRows<{ kind: string; name: string; owner: string }>(
    tx,
    sql`with ns as (select oid from pg_namespace where nspname = ${schema}::text),
             me as (select oid from pg_roles where rolname = current_user)
        select kind, name, owner from (
          select case c.relkind when 'r' then 'table' when 'v' then 'view' when 'S' then 'sequence' when 'i' then 'index'
                   when 'm' then 'materialized view' when 'p' then 'table' else 'relation' end as kind,
                 c.relname::text as name, pg_get_userbyid(c.relowner) as owner
          from pg_class c where c.relnamespace = (select oid from ns) and c.relowner <> (select oid from me)
          union all
          select 'function', p.proname::text || '(' || pg_get_function_identity_arguments(p.oid) || ')', pg_get_userbyid(p.proowner)
          from pg_proc p where p.pronamespace = (select oid from ns) and p.proowner <> (select oid from me)
          union all
          select 'type', t.typname::text, pg_get_userbyid(t.typowner)
          from pg_type t where t.typnamespace = (select oid from ns) and t.typowner <> (select oid from me) and t.typrelid = 0 and t.typelem = 0
        ) o order by kind, name`,
  );
  if (foreign.length === 0) return;
  const named = foreign
    .slice(0, NAMED_OBJECTS)
    .map((o) => `${o.kind} ${o.name} (owned by ${o.owner})`)
    .join(', ');
  const more = foreign.length > NAMED_OBJECTS ? ` and ${foreign.length - NAMED_OBJECTS} more` : '';
  throw new ForeignSchemaError(
    `refusing to migrate schema "${schema}": it holds objects owned by another role: ${named}${more}. Every SQL API function runs ` +
      "as the owner and could call them: remove them, or, if they are your own install's (made as the superuser, say), have a superuser " +
      'hand them over with `intake-sync migrate --reassign-to <the owner role>` (audited; it refuses objects of a third role), then migrate again',
  );
}

/**
 * Nobody but the owner may create objects in the schema: REVOKE CREATE from PUBLIC (a schema that
 * existed before, or a database whose defaults grant it). Runs inside the migration transaction.
 */
export async function revokePublicCreate(tx: Executor, schema: string): Promise<void> {
  await tx.execute(sql.raw(`revoke create on schema "${schema}" from public`));
}
