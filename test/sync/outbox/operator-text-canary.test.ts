import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { queryRows, type Db } from '../../../src/db/connection.js';
import { IntakeClient } from '../../../src/intake/client.js';
import { samplePrescription } from '../../../src/sandbox/fixtures.js';
import { deliverRow } from '../../../src/sync/outbox/delivery.js';
import { dueRows } from '../../../src/sync/outbox/store.js';
import { cliBudget, runCli } from '../../support/cli/run-cli.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { truncateStore } from '../../support/sync/fixtures.js';

// Issue 17 §2 / issue 19 §5, the PHI canary: an operator that echoes a patient's name, date of birth
// and phone in its 400 and 422 bodies (in the messages and even as field names). None of it may reach
// outbox.last_error, the outbox_status view, the CLI's output or the log.

const NAME = 'Zebulon';
const SURNAME = 'Quattlebaum';
const DOB = '1961-07-23';
const PHONE = '(555) 867-5309';
const CANARIES = [NAME, SURNAME, DOB, '1961', '867-5309', '5309', '867', 'zebulon', 'quattlebaum'];

type Answer = { status: number; body: unknown };
let answer: Answer;
let server: Server;
let baseUrl: string;
let tdb: TestDatabase;
let db: Db;
const logged: string[] = [];
const log = pino(
  { level: 'trace' },
  new Writable({
    write(chunk: Buffer, _enc, done) {
      logged.push(chunk.toString('utf8'));
      done();
    },
  }),
);

const ECHOES: Record<string, Answer> = {
  '400': { status: 400, body: { error: `patient ${NAME} ${SURNAME} born ${DOB} phone ${PHONE} is invalid` } },
  '422 messages': {
    status: 422,
    body: {
      errors: {
        'prescription.patient.dob': [`${DOB} is not a valid date for ${NAME} ${SURNAME}`],
        'prescription.patient.primary_phone': [`${PHONE} must be a valid US phone`, `call ${PHONE.replace(/\D/g, '')}`],
      },
    },
  },
  '422 keys': { status: 422, body: { errors: { [`${NAME} ${SURNAME}`]: ['is invalid'], [`patient.${SURNAME.toLowerCase()}`]: 'x' } } },
  '422 taken': { status: 422, body: { errors: { 'prescription.external_id': ['has already been taken'] } } },
};

// A fragment of digits (the phone's last four, the birth year) is a leak when it stands as text, not
// when it is part of a longer number or a bare JSON number the process wrote itself: a log line's
// "pid":5309 or "durationMs":867 matched by chance and failed this test on a loaded machine.
const canaryPattern = (canary: string): RegExp =>
  /^\d+$/.test(canary) ? new RegExp(`(?<![\\d:])${canary}(?!\\d)`) : new RegExp(canary.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&'));

const noCanary = (text: string, where: string) => {
  for (const canary of CANARIES) expect(text, `${where} holds ${canary}`).not.toMatch(canaryPattern(canary));
};

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/intake_api/2024-12-10`;
  tdb = await createTestDatabase('operator_text_canary');
  db = tdb.database.db;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await tdb.drop();
});
beforeEach(async () => {
  await truncateStore(db);
  logged.length = 0;
});

describe('operator free text carrying PHI', () => {
  test.each(Object.keys(ECHOES))('%s: not in outbox.last_error, outbox_status or the log', async (label) => {
    answer = ECHOES[label]!;
    const prescription = samplePrescription(1, { prefix: 'canary' });
    await db.execute(sql`select intake_sync.send_prescription(${JSON.stringify(prescription)}::jsonb)`);
    const client = new IntakeClient({ baseUrl, apiKey: 'k', apiSecret: 's', timeoutMs: 2_000, logger: log, retry: { retries: 0 } });
    const deps = { db, feed: 'default', client, backoff: { baseMs: 60_000, capMs: 60_000 }, random: () => 0.5, log };
    for (const row of await dueRows(db, 'default', 10)) await deliverRow(deps, row, new AbortController().signal);
    const [row] = await queryRows<{ state: string; last_error: string | null; response_status: number }>(
      db,
      sql`select state, last_error, response_status from intake_sync.outbox_status`,
    );
    expect(row).toMatchObject({ state: 'failed', response_status: answer.status });
    noCanary(row?.last_error ?? '', 'outbox_status.last_error');
    const [stored] = await queryRows<{ last_error: string | null }>(db, sql`select last_error from intake_sync.outbox`);
    noCanary(stored?.last_error ?? '', 'outbox.last_error');
    noCanary(logged.join(''), 'the log');
    // what is kept still says what kind of problem it was
    if (label === '422 taken')
      expect(row?.last_error).toBe('422 from the operator: prescription.external_id has already been taken (by another prescription)');
    if (label === '422 messages') expect(row?.last_error).toContain('prescription.patient.primary_phone: … must be a valid US phone');
    if (label === '422 keys') expect(row?.last_error).toContain('(field): is invalid');
    if (label === '400') expect(row?.last_error).toBe('400 from the operator: patient … phone … is invalid');
  });

  test(
    'the CLI (`prescriptions send`) shows the paths and words, none of the values',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'canary-cli-'));
      try {
        const file = join(dir, 'rx.json');
        await writeFile(file, JSON.stringify(samplePrescription(2, { prefix: 'canary' })));
        const env = {
          INTAKE_API_BASE_URL: baseUrl,
          INTAKE_API_KEY: 'k',
          INTAKE_API_SECRET: 's',
          DATABASE_URL: tdb.url ?? '',
          LOG_LEVEL: 'trace',
        };
        for (const label of Object.keys(ECHOES)) {
          answer = ECHOES[label]!;
          const result = await runCli(['prescriptions', 'send', file], env);
          expect(result.code, `${label}: ${result.stderr}`).not.toBe(0);
          noCanary(result.stdout + result.stderr, `the CLI output (${label})`);
          if (label === '422 taken') expect(result.stderr).toContain('prescription.external_id: has already been taken');
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      // one CLI process per echo, each its own budget: at load average 10 a start alone takes 14 s
    },
    cliBudget(Object.keys(ECHOES).length),
  );
});
