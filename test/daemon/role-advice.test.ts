import { describe, expect, it } from 'vitest';
import { judgeRoleLikeness } from '../../src/db/role-likeness.js';
import { missingRuntimeGrantsAdvice } from '../../src/daemon/role-advice.js';

describe('judgeRoleLikeness', () => {
  it.each([
    [{ ownsSchema: true, missingApp: 0, runtimeTablePrivileges: 0, schemaUsage: true }, 'owner'],
    [{ ownsSchema: false, missingApp: 0, runtimeTablePrivileges: 0, schemaUsage: true }, 'app'],
    [{ ownsSchema: false, missingApp: 3, runtimeTablePrivileges: 0, schemaUsage: true }, 'none'],
    [{ ownsSchema: false, missingApp: 9, runtimeTablePrivileges: 0, schemaUsage: false }, 'none'],
    [{ ownsSchema: false, missingApp: 0, runtimeTablePrivileges: 30, schemaUsage: true }, 'runtime'],
    [{ ownsSchema: false, missingApp: 2, runtimeTablePrivileges: 1, schemaUsage: true }, 'runtime'],
  ] as const)('%j looks like %s', (held, likeness) => {
    expect(judgeRoleLikeness(held)).toBe(likeness);
  });
});

describe('missingRuntimeGrantsAdvice', () => {
  const missing = ['SELECT on intake_sync.prescriptions', 'INSERT on intake_sync.events'];

  it('a role that looks like an app role is told which role to use, never to widen its grants', () => {
    const advice = missingRuntimeGrantsAdvice({ role: 'clinic_a', likeness: 'app', missing, schema: 'intake_sync' });
    expect(advice).toContain('this command needs the runtime role');
    expect(advice).toContain('clinic_a looks like an app role');
    expect(advice).not.toContain('grants --role runtime');
    expect(advice).not.toContain('SELECT on');
  });

  it('a role with no grant at all is told which role to use, what it lacks, and how a role meant to be the runtime role gets it', () => {
    const advice = missingRuntimeGrantsAdvice({ role: 'fresh', likeness: 'none', missing, schema: 'intake_sync' });
    expect(advice).toContain('this command needs the runtime role, and the database role fresh holds no grant in schema intake_sync');
    expect(advice).toContain('lacks 2 grant(s) the daemon needs: SELECT on intake_sync.prescriptions; INSERT on intake_sync.events.');
    expect(advice).toContain(
      'if fresh is meant to be the runtime role, its owner grants it with intake-sync grants --role runtime --to fresh',
    );
  });

  it('a runtime role with grants missing names them and the command that restores them', () => {
    const advice = missingRuntimeGrantsAdvice({ role: 'sync', likeness: 'runtime', missing, schema: 'intake_sync' });
    expect(advice).toContain(
      'looks like the runtime role but lacks 2 grant(s) the daemon needs: SELECT on intake_sync.prescriptions; INSERT on intake_sync.events.',
    );
    expect(advice).toContain('intake-sync grants --role runtime --to sync (DATABASE_SCHEMA=intake_sync) | psql');
  });
});
