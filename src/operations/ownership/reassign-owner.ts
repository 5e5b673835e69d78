import { sql } from 'drizzle-orm';
import { osActor } from '../../db/audit.js';
import { recordAudit } from '../../store-api/audit/audit-entries.js';
import { queryRows, type Database } from '../../db/connection.js';
import { ReassignOwnerError } from '../../db/errors/reassign-owner-error.js';
import { LEDGER_TABLE } from '../../db/migrate.js';
import { quoteIdentifier } from '../../db/owner-role-name.js';

type Tx = Parameters<Parameters<Database['db']['transaction']>[0]>[0];

/** What `reassignSchemaOwner` did. */
export interface ReassignResult {
  schema: string;
  /** the schema's owner before (the role that ran the install, often the superuser) */
  from: string;
  to: string;
  /** objects inside the schema whose owner changed (the schema itself not counted) */
  objects: number;
}

/** One object of the schema and the statement that changes its owner. */
interface OwnedObject extends Record<string, unknown> {
  kind: string;
  /** the object as ALTER names it, already qualified and quoted (regclass, regprocedure, regtype text) */
  target: string;
  owner: string;
}

/**
 * Every object of the schema that has an owner of its own: relations and composite types (a sequence
 * owned by a column and an index follow their table), routines, and types that are not a table's row type or an
 * array (those follow their relation or element type). The ALTER keyword goes with each.
 */
function ownedObjects(tx: Tx, schema: string) {
  return queryRows<OwnedObject>(
    tx,
    sql`with ns as (select oid from pg_catalog.pg_namespace where nspname = ${schema}::text)
      select kind, target, owner from (
        select case c.relkind when 'v' then 'VIEW' when 'm' then 'MATERIALIZED VIEW' when 'S' then 'SEQUENCE' when 'c' then 'TYPE'
                 else 'TABLE' end as kind,
               c.oid::regclass::text as target, pg_catalog.pg_get_userbyid(c.relowner) as owner, 1 as rank
        from pg_catalog.pg_class c
        where c.relnamespace = (select oid from ns) and c.relkind in ('r', 'p', 'v', 'm', 'S', 'c')
          and not (c.relkind = 'S' and exists (select 1 from pg_catalog.pg_depend d
                   where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.refclassid = 'pg_class'::regclass and d.deptype in ('a', 'i')))
        union all
        select 'ROUTINE', p.oid::regprocedure::text, pg_catalog.pg_get_userbyid(p.proowner), 2
        from pg_catalog.pg_proc p where p.pronamespace = (select oid from ns)
        union all
        select case t.typtype when 'd' then 'DOMAIN' else 'TYPE' end, t.oid::regtype::text, pg_catalog.pg_get_userbyid(t.typowner), 3
        from pg_catalog.pg_type t
        where t.typnamespace = (select oid from ns) and t.typtype in ('b', 'd', 'e', 'r')
          and not exists (select 1 from pg_catalog.pg_type e where e.typarray = t.oid)
      ) o order by rank, target`,
  );
}

/**
 * `intake-sync migrate --reassign-to ROLE`: hands an install made by another role (the superuser,
 * typically) to the owner role: the schema and every object in it, in one transaction, audited as
 * `schema.reassign_owner` (detail: from, to, objects). Run as a role that owns them and may act as
 * ROLE (a superuser). Refuses, changing nothing: a role that does not exist, a schema that is not an
 * intake-sync install, a running role without the right, and objects owned by a third role (someone
 * else put them there: they are checked by a person, never handed over silently).
 */
export async function reassignSchemaOwner(database: Database, role: string, onBehalfOf: string = osActor()): Promise<ReassignResult> {
  const schema = database.names.schema;
  return database.db.transaction(async (tx) => {
    const [found] = await queryRows<{ owner: string | null; ledger: boolean; role_exists: boolean }>(
      tx,
      sql`select (select pg_catalog.pg_get_userbyid(n.nspowner) from pg_catalog.pg_namespace n where n.nspname = ${schema}::text) as owner,
            exists (select 1 from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
                    where n.nspname = ${schema}::text and c.relname = ${LEDGER_TABLE}::text) as ledger,
            exists (select 1 from pg_catalog.pg_roles where rolname = ${role}::text) as role_exists`,
    );
    if (!found?.role_exists) {
      throw new ReassignOwnerError(`--reassign-to: role ${role} does not exist (CREATE ROLE it first: docs/getting-started.md)`, true);
    }
    if (!found.owner) throw new ReassignOwnerError(`there is no schema "${schema}" to hand over: run \`intake-sync migrate\` as ${role}`);
    if (!found.ledger) {
      throw new ReassignOwnerError(`schema "${schema}" is not an intake-sync install (no ${LEDGER_TABLE}): refusing to hand it to ${role}`);
    }
    const [may] = await queryRows<{ allowed: boolean; me: string }>(
      tx,
      sql`select current_user::text as me,
            (select rolsuper from pg_catalog.pg_roles where rolname = current_user)
            or (pg_catalog.pg_has_role(current_user, ${found.owner}::text, 'MEMBER') and pg_catalog.pg_has_role(current_user, ${role}::text, 'MEMBER')) as allowed`,
    );
    if (!may?.allowed) {
      throw new ReassignOwnerError(
        `role ${may?.me} may not hand schema "${schema}" from ${found.owner} to ${role}: run \`intake-sync migrate --reassign-to ${role}\` ` +
          `as a superuser (or as a role that is a member of both ${found.owner} and ${role})`,
      );
    }
    // serialise with migrators (they lock the ledger first, as here) before reading the objects
    await tx.execute(sql.raw(`lock table ${quoteIdentifier(schema)}.${quoteIdentifier(LEDGER_TABLE)} in exclusive mode`));
    const objects = await ownedObjects(tx, schema);
    const third = objects.filter((o) => o.owner !== found.owner && o.owner !== role);
    if (third.length > 0) {
      const named = third
        .slice(0, 5)
        .map((o) => `${o.kind.toLowerCase()} ${o.target} (owned by ${o.owner})`)
        .join(', ');
      throw new ReassignOwnerError(
        `refusing to hand schema "${schema}" to ${role}: it holds objects owned by neither ${found.owner} nor ${role}: ${named}` +
          `${third.length > 5 ? ` and ${third.length - 5} more` : ''}. Every SQL API function runs as the owner and could call them: ` +
          'have a superuser check and remove them first',
      );
    }
    const moving = objects.filter((o) => o.owner !== role);
    const to = quoteIdentifier(role);
    if (found.owner !== role) await tx.execute(sql.raw(`alter schema ${quoteIdentifier(schema)} owner to ${to}`));
    for (const object of moving) await tx.execute(sql.raw(`alter ${object.kind} ${object.target} owner to ${to}`));
    // the same read after: nothing of the schema may stay with the old owner
    const left = (await ownedObjects(tx, schema)).filter((o) => o.owner !== role);
    if (left.length > 0) {
      throw new ReassignOwnerError(
        `objects of schema "${schema}" kept their owner: ${left.map((o) => o.target).join(', ')}; nothing was changed`,
      );
    }
    await recordAudit(
      tx,
      database.names,
      { action: 'schema.reassign_owner', feed: null, subject: schema, detail: { from: found.owner, to: role, objects: moving.length } },
      onBehalfOf,
    );
    return { schema, from: found.owner, to: role, objects: moving.length };
  });
}
