import postgres from 'postgres';
import { afterAll, beforeAll } from 'vitest';
import { ADMIN_URL } from './db.js';
import { tagForRun } from './test-run.js';

/**
 * Login roles a test file attacks or migrates with: created (as the superuser) before its tests,
 * dropped after them whatever happened. Call inside the describe; `admin()` is the superuser
 * connection the file may use meanwhile.
 */
export function useLoginRoles(roles: readonly string[]): { admin: () => postgres.Sql } {
  let admin: postgres.Sql | undefined;
  beforeAll(async () => {
    admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    for (const role of roles) {
      await admin.unsafe(`create role "${role}" login`);
      const tag = tagForRun('role', role);
      if (tag) await admin.unsafe(tag);
    }
  });
  afterAll(async () => {
    for (const role of roles) await admin?.unsafe(`drop role if exists "${role}"`).catch(() => {});
    await admin?.end({ timeout: 5 });
  });
  return {
    admin: () => {
      if (!admin) throw new Error('useLoginRoles: the admin connection opens in beforeAll');
      return admin;
    },
  };
}
