import { describe, expect, it } from 'vitest';
import { judgeRoleLikeness } from '../../src/db/grants.js';
import { missingRuntimeGrantsAdvice } from '../../src/cli/role-advice.js';

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

  it.each(['app', 'none'] as const)('a role that looks like %s is told which role to use, never to widen its grants', (likeness) => {
    const advice = missingRuntimeGrantsAdvice({ role: 'clinic_a', likeness, missing, schema: 'intake_sync' });
    expect(advice).toContain('this command needs the runtime role');
    expect(advice).toContain('clinic_a');
    expect(advice).not.toContain('grants --role runtime');
    expect(advice).not.toContain('SELECT on');
  });

  it('a runtime role with grants missing names them and the command that restores them', () => {
    const advice = missingRuntimeGrantsAdvice({ role: 'sync', likeness: 'runtime', missing, schema: 'intake_sync' });
    expect(advice).toContain(
      'looks like the runtime role but lacks 2 grant(s) the daemon needs: SELECT on intake_sync.prescriptions; INSERT on intake_sync.events.',
    );
    expect(advice).toContain('intake-sync grants --role runtime --to sync (DATABASE_SCHEMA=intake_sync) | psql');
  });
});
