import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, isRedactedKey, redactDeep } from '../../src/log/log.js';

/** A logger writing JSON lines into an array. */
function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { log: createLogger({ level: 'trace', destination }), text: () => lines.join('') };
}

const CANARIES = {
  name: 'Zebediah',
  last: 'Quaxworth',
  dob: '1931-02-29',
  phone: '+1-555-0199-777',
  email: 'zeb.canary@example.test',
  address: '42 Canary Lane',
  diagnosis: 'canary-diagnosis-J45',
  allergy: 'canary-allergy-penicillin',
  note: 'canary note: call after 5',
  apiKey: 'sk_live_canary_key',
  secret: 'canary-secret-value',
  dbPassword: 'Pa55-canary-word',
};

/** An object as deep and oddly spelt as a careless call site could make it. */
function deepObject(): Record<string, unknown> {
  const cycle: Record<string, unknown> = { feed: 'default' };
  cycle.self = cycle;
  return {
    event_id: 'evt_123',
    level1: {
      level2: {
        level3: {
          level4: {
            level5: {
              prescription: {
                patient: { first_name: CANARIES.name },
                patientLastName: CANARIES.last,
                'Date-Of-Birth': CANARIES.dob,
                contacts: [{ primaryPhone: CANARIES.phone }, { EMAIL: CANARIES.email }],
                Address: { street: CANARIES.address },
                clinical: { diagnosis: CANARIES.diagnosis, Allergies: [CANARIES.allergy], notes: [CANARIES.note] },
              },
            },
          },
        },
      },
    },
    request: { headers: { Authorization: `Bearer ${CANARIES.secret}` }, api_key: CANARIES.apiKey, apiSecret: CANARIES.secret },
    config: {
      DATABASE_URL: `postgres://owner:${CANARIES.dbPassword}@db.internal:5432/vendor`,
      lease: { url: `postgres://runtime:${CANARIES.dbPassword}@db.internal:5432/vendor?sslmode=verify-full` },
      libpq: `host=db password=${CANARIES.dbPassword} dbname=vendor`,
    },
    error: Object.assign(new Error(`Failed query: select register($1, $2)\nparams: ${CANARIES.name},${CANARIES.dob}`), {
      parameters: [CANARIES.name, CANARIES.dob],
      code: '23505',
    }),
    cycle,
  };
}

describe('log redaction', () => {
  it('no canary reaches the log from a deep object, whatever the key spelling; identifiers stay', () => {
    const { log, text } = capture();
    log.info(deepObject(), 'canary');
    log.error({ err: deepObject().error }, 'failed');
    const written = text();
    for (const [what, canary] of Object.entries(CANARIES)) expect(written, what).not.toContain(canary);
    expect(written).toContain('evt_123');
    expect(written).toContain('23505');
    expect(written).toContain('db.internal:5432/vendor');
    expect(written).toContain('Failed query: select register($1, $2)');
    expect(written).toContain('[Circular]');
  });

  it.each([
    'api_key',
    'apiKey',
    'API-KEY',
    'DATABASE_URL',
    'LEASE_DATABASE_URL',
    'password',
    'diagnosis',
    'allergies',
    'note',
    'notes',
    'dob',
    'phone',
    'email',
    'address',
    'first_name',
    'lastName',
    'params',
  ])('redacts the key %s', (key) => {
    expect(isRedactedKey(key)).toBe(true);
  });

  it.each(['feed', 'event_id', 'external_id', 'subscription_id', 'component', 'code', 'status', 'url'])('keeps the key %s', (key) => {
    expect(isRedactedKey(key)).toBe(false);
  });

  it('bounds the walk: past 32 levels a value is replaced whole', () => {
    let nested: Record<string, unknown> = { secretive: 'deepest' };
    for (let i = 0; i < 100; i += 1) nested = { next: nested };
    expect(JSON.stringify(redactDeep(nested))).not.toContain('deepest');
  });
});
