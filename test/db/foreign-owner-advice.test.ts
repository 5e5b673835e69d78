import { describe, expect, it } from 'vitest';
import { foreignOwnerAdvice, type SchemaOwnerFacts } from '../../src/db/foreign-owner-advice.js';

const base: SchemaOwnerFacts = {
  schema: 'intake_sync',
  owner: 'owner',
  ownerIsSuperuser: false,
  me: 'me',
  meIsSuperuser: false,
  meUsesSchema: false,
};

describe('foreignOwnerAdvice: who should run what, never more privilege for the caller', () => {
  it.each([
    ['the runtime role, owner install', { meUsesSchema: true }, 'run it with DATABASE_URL naming role owner', false],
    ['an app role, owner install', { meUsesSchema: true }, 'run it with DATABASE_URL naming role owner', false],
    ['the superuser, owner install', { meIsSuperuser: true, meUsesSchema: true }, 'run it with DATABASE_URL naming role owner', false],
    ['a role with nothing here, owner install', {}, 'run it with DATABASE_URL naming role owner', false],
    ['the runtime role, superuser install', { ownerIsSuperuser: true, meUsesSchema: true }, '--reassign-to <the owner role>', false],
    ['another superuser, superuser install', { ownerIsSuperuser: true, meIsSuperuser: true, meUsesSchema: true }, 'naming owner', false],
    ['the owner-to-be, superuser install', { ownerIsSuperuser: true }, '`intake-sync migrate --reassign-to me` run as owner', true],
  ] as const)('%s', (_label, facts, advice, handsToCaller) => {
    const text = foreignOwnerAdvice({ ...base, ...facts });
    expect(text).toContain(advice);
    expect(text.includes('--reassign-to me')).toBe(handsToCaller);
    expect(text).not.toContain('\n');
  });
});
