import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { postgresReachable } from '../support/db.js';
import { expectNoLeaks } from '../support/faults/leaks.js';
import { openScenario, type ScenarioDatabase, type ScenarioKit } from '../support/faults/scenario-kit.js';
import { rowCounts } from '../support/faults/store.js';
import { recordSkip, runScenario } from '../support/faults/trials.js';
import { runCommand } from '../support/faults/worker.js';

const SCENARIO = '9. bad input at the edges: missing/malformed files, bad env values, bad --to';

interface BadInputCase {
  label: string;
  args: string[];
  env?: Record<string, string>;
  /** the message must name the problem: each pattern must match stderr */
  names: RegExp[];
}

const available = await postgresReachable();

describe.skipIf(!available)(SCENARIO, () => {
  test('a clear message naming the problem, a non-zero exit, nothing written', async () => {
    await runScenario(SCENARIO, async (trial) => {
      const kit = await openScenario('badinput');
      try {
        const db = await kit.database('main');
        const cases = badInputCases(kit);
        const failures: string[] = [];
        // cases run a few at a time (each is a CLI start-up); "nothing written" is checked
        // around the whole batch, and a batch that wrote is replayed one by one to name the culprit
        let writes = 0;
        for (let start = 0; start < cases.length; start += CONCURRENCY) {
          const batch = cases.slice(start, start + CONCURRENCY);
          const before = await observe(kit, db);
          const outcomes = await Promise.all(batch.map((c) => runCase(kit, db, c)));
          const after = await observe(kit, db);
          failures.push(...outcomes.filter((o) => o !== undefined));
          if (JSON.stringify(after) === JSON.stringify(before)) continue;
          for (const c of batch) {
            const alone = await observe(kit, db);
            await runCase(kit, db, c);
            const then = await observe(kit, db);
            if (JSON.stringify(then) !== JSON.stringify(alone)) {
              writes++;
              failures.push(`${c.label}: wrote ${JSON.stringify(alone)} -> ${JSON.stringify(then)}`);
            }
          }
        }
        trial.set({ trials: cases.length, duplicated: writes, note: `${cases.length - failures.length}/${cases.length} cases clean` });
        expect(failures).toEqual([]);
        expectNoLeaks(kit.capture, kit.needles());
      } finally {
        await kit.close();
      }
    });
  });
});

const CONCURRENCY = 3;

/** Runs one case; returns what is wrong with its answer, or undefined. */
async function runCase(kit: ScenarioKit, db: ScenarioDatabase, c: BadInputCase): Promise<string | undefined> {
  const result = await runCommand(kit.setup(db, c.env), c.args, 30_000);
  const problems: string[] = [];
  if (result.code === 0) problems.push('exit 0');
  for (const pattern of c.names) if (!pattern.test(result.stderr)) problems.push(`stderr does not match ${pattern}`);
  if (/^\s+at .+:\d+:\d+\)?$/m.test(result.stderr)) problems.push('a stack trace instead of a message');
  if (problems.length === 0) return undefined;
  return `${c.label} (intake-sync ${c.args.join(' ')}): ${problems.join('; ')}; stderr: ${result.stderr.trim().slice(0, 300)}`;
}

/** Local row counts and the sandbox's per-credential counts: "nothing written" on either side. */
async function observe(kit: ScenarioKit, db: ScenarioDatabase): Promise<unknown> {
  return { local: await rowCounts(db.sql), operator: (await kit.sandbox.admin.stats()).credentials };
}

function badInputCases(kit: ScenarioKit): BadInputCase[] {
  const file = (name: string, text: string) => {
    const path = join(kit.tempDir, name);
    writeFileSync(path, text);
    return path;
  };
  const missing = join(kit.tempDir, 'does-not-exist.json');
  const notJson = file('not-json.txt', 'this is { not json\n<html>\n');
  const wrongShapeNdjson = file(
    'wrong-shape.ndjson',
    '{"external_id": "x-1"}\n{"prescription_identity": {"patient_first_name": 3}}\n[1,2]\n',
  );
  const wrongShapeJson = file('wrong-shape.json', '{"prescription": {"external_id": 7, "patient": "nobody"}}\n');
  const wrongShapeIdentity = file('wrong-identity.json', '{"subscription": {"prescription_identity": {"patient_dob": 19500101}}}\n');
  const fileCases: BadInputCase[] = [
    ...[
      ['prescriptions', 'import'],
      ['prescriptions', 'send'],
      ['subscriptions', 'create'],
    ].flatMap(([group, command]) => [
      {
        label: `${group} ${command}: missing file`,
        args: [group!, command!, missing],
        names: [/does-not-exist\.json/, /ENOENT|not found|no such file|cannot read/i],
      },
      { label: `${group} ${command}: not JSON`, args: [group!, command!, notJson], names: [/JSON/i] },
    ]),
    {
      label: 'prescriptions import: wrong shape',
      args: ['prescriptions', 'import', wrongShapeNdjson],
      names: [/:1\b|line 1/i, /:3\b|line 3/i, /prescription_identity/],
    },
    { label: 'prescriptions send: wrong shape', args: ['prescriptions', 'send', wrongShapeJson], names: [/external_id|patient/] },
    {
      label: 'subscriptions create: wrong shape',
      args: ['subscriptions', 'create', wrongShapeIdentity],
      names: [/patient_dob|prescription_identity|patient_first_name/],
    },
  ];
  const envCases: BadInputCase[] = [
    { label: 'POLL_INTERVAL_MS=abc', args: ['run', '--once'], env: { POLL_INTERVAL_MS: 'abc' }, names: [/POLL_INTERVAL_MS/] },
    { label: 'HEALTH_PORT=99999', args: ['run'], env: { HEALTH_PORT: '99999' }, names: [/HEALTH_PORT/] },
    { label: 'DATABASE_URL=mysql://x', args: ['run', '--once'], env: { DATABASE_URL: 'mysql://x' }, names: [/DATABASE_URL/] },
    { label: 'DATABASE_URL=mysql://x (status)', args: ['status', '--json'], env: { DATABASE_URL: 'mysql://x' }, names: [/DATABASE_URL/] },
    { label: 'LOG_LEVEL=loud', args: ['run', '--once'], env: { LOG_LEVEL: 'loud' }, names: [/LOG_LEVEL/] },
    { label: 'FEED_NAME with spaces', args: ['run', '--once'], env: { FEED_NAME: 'Main Feed!' }, names: [/FEED_NAME/] },
    { label: 'DATABASE_SCHEMA=public', args: ['run', '--once'], env: { DATABASE_SCHEMA: 'public' }, names: [/DATABASE_SCHEMA/, /public/] },
    { label: 'DATABASE_SCHEMA=pg_sync', args: ['migrate'], env: { DATABASE_SCHEMA: 'pg_sync' }, names: [/DATABASE_SCHEMA/, /pg_/] },
    {
      label: 'DATABASE_SCHEMA not lowercase',
      args: ['status', '--json'],
      env: { DATABASE_SCHEMA: 'Intake-Sync' },
      names: [/DATABASE_SCHEMA/, /lowercase/],
    },
    { label: 'MIGRATE_ON_START=yes', args: ['run', '--once'], env: { MIGRATE_ON_START: 'yes' }, names: [/MIGRATE_ON_START/] },
    {
      label: 'INTAKE_API_BASE_URL not a URL',
      args: ['run', '--once'],
      env: { INTAKE_API_BASE_URL: 'not a url' },
      names: [/INTAKE_API_BASE_URL/],
    },
  ];
  const iteratorCases: BadInputCase[] = [
    { label: '--to empty', args: ['checkpoint', 'reset', '--to', ''], names: [/--to/] },
    { label: '--to without a value', args: ['checkpoint', 'reset', '--to'], names: [/--to/] },
    { label: '--to with whitespace', args: ['checkpoint', 'reset', '--to', ' p1 '], names: [/--to/, /whitespace/i] },
    { label: '--to and --beginning', args: ['checkpoint', 'reset', '--beginning', '--to', 'abc'], names: [/--beginning/, /--to/] },
    { label: 'reset without a target', args: ['checkpoint', 'reset'], names: [/--beginning|--to/] },
  ];
  return [...fileCases, ...envCases, ...iteratorCases];
}

if (!available) recordSkip(SCENARIO, 'no PostgreSQL at 127.0.0.1:5432');
