import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { grantStatements, type GrantRole } from '../../../src/db/grants.js';
import type { TestDatabase } from '../db.js';
import type { PlainSql } from './plain-sql.js';
import { tagForRun } from '../test-run.js';

/** A login role with exactly the grants `intake-sync grants --role <kind>` prints, and a connection as it. */
export interface RoleSession {
  name: string;
  sql: postgres.Sql;
  close(): Promise<void>;
}

/** Creates a fresh login role of `kind` on the test database (as the owner, through `owner`) and connects as it. */
export async function loginAs(tdb: TestDatabase, owner: PlainSql, kind: GrantRole, label: string): Promise<RoleSession> {
  const name = `${label}_${randomBytes(3).toString('hex')}`;
  await owner.query(`create role "${name}" login`);
  const tag = tagForRun('role', name);
  if (tag) await owner.query(tag);
  await owner.query(grantStatements(kind, 'intake_sync', name).join('\n'));
  const url = new URL(tdb.url ?? '');
  url.username = name;
  const sql = postgres(url.toString(), { max: 1, onnotice: () => {}, fetch_types: false });
  return { name, sql, close: () => sql.end({ timeout: 5 }) };
}
