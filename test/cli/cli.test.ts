import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/sandbox/clock.js';
import { identityOf, samplePrescription } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli } from '../support/cli/run-cli.js';

const FIVE_MINUTES = 5 * 60 * 1000;

let sandbox: Sandbox;
let clock: ManualClock;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  clock = new ManualClock();
  sandbox = await startSandbox({ clock });
  const credential = sandbox.credentials[0] ?? { key: '', secret: '' };
  dir = await mkdtemp(join(tmpdir(), 'intake-cli-'));
  // the local store: embedded PGlite in the temp folder
  env = { INTAKE_API_BASE_URL: sandbox.baseUrl, INTAKE_API_KEY: credential.key, INTAKE_API_SECRET: credential.secret, DATA_DIR: dir };
  // only migrate (or run) creates the store: a user runs it once, as the README's quick start does
  expect(await runCli(['migrate'], env)).toMatchObject({ code: 0 });
});
afterAll(async () => {
  await sandbox?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function fileWith(name: string, content: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}
const stored = () => sandbox.store.stats().credentials[0]?.prescriptions ?? 0;

// each case spawns up to three CLI processes (tsx start-up ~1-2 s each under a parallel run)
describe('intake-sync remote commands', { timeout: 90_000 }, () => {
  it('prescriptions send / get / cancel round-trip, readable view without patient PHI', async () => {
    const request = samplePrescription(1, { prefix: 'cli' });
    const file = await fileWith('rx.json', { prescription: request });

    const sent = await runCli(['prescriptions', 'send', file], env);
    expect(sent).toMatchObject({ code: 0, stderr: '' });
    expect(sent.stdout).toMatch(/^external_id\s+cli-1$/m);
    expect(sent.stdout).toMatch(/^cancellation_requested_at\s+-$/m);
    expect(sent.stdout).not.toContain(request.patient.last_name);

    const got = await runCli(['prescriptions', 'get', 'cli-1', '--json'], env);
    expect(got.code).toBe(0);
    expect(got.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(got.stdout)).toMatchObject({ external_id: 'cli-1', patient: { last_name: request.patient.last_name } });

    const cancelled = await runCli(['prescriptions', 'cancel', 'cli-1'], env);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toMatch(/^cancellation_requested_at\s+\d{4}-\d\d-\d\dT/m);

    // sent prescriptions are recorded locally (so their events match), cancellations mirrored
    const local = await runCli(['prescriptions', 'list', '--json'], env);
    expect(local.code).toBe(0);
    expect(JSON.parse(local.stdout)).toMatchObject({
      external_id: 'cli-1',
      status: null,
      cancellation_requested_at: expect.stringMatching(/^\d{4}-/),
    });
  });

  it('events list --json prints the page as one JSON line; events get reads one', async () => {
    await runCli(['prescriptions', 'send', await fileWith('rx2.json', samplePrescription(2, { prefix: 'cli' }))], env);
    clock.advance(FIVE_MINUTES);
    const listed = await runCli(['events', 'list', '--json', '--limit', '250'], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim().split('\n')).toHaveLength(1);
    const page = JSON.parse(listed.stdout) as { events: Array<{ id: string; name: string }>; meta: { done: boolean } };
    expect(page.meta.done).toBe(true);
    expect(page.events.length).toBeGreaterThan(0);
    const first = page.events[0];

    const readable = await runCli(['events', 'get', first?.id ?? ''], env);
    expect(readable.code).toBe(0);
    expect(readable.stdout).toMatch(new RegExp(`^id\\s+${first?.id}$`, 'm'));
    expect(readable.stdout).toMatch(/^name\s+accepted$/m);
    expect(readable.stdout).not.toContain('Testpat');
  });

  it('subscriptions create --backfill / get / cancel', async () => {
    const file = await fileWith('identity.json', identityOf(samplePrescription(3, { prefix: 'cli' })));
    const created = await runCli(['subscriptions', 'create', file, '--backfill', '--json'], env);
    expect(created.code).toBe(0);
    const subscription = JSON.parse(created.stdout) as { id: string; backfill_previous_events: boolean };
    expect(subscription.backfill_previous_events).toBe(true);

    const got = await runCli(['subscriptions', 'get', subscription.id], env);
    expect(got.stdout).toMatch(new RegExp(`^id\\s+${subscription.id}$`, 'm'));
    const cancelled = await runCli(['subscriptions', 'cancel', subscription.id, '--json'], env);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ id: subscription.id, cancelled_at: expect.any(String) });
  });

  it('a bad prescription file: exit 2, the file and each bad path named, nothing sent', async () => {
    const request = samplePrescription(4, { prefix: 'cli' });
    const bad = { ...request, patient: { ...request.patient, dob: '04/01/1980', address: { ...request.patient.address, zip: '123' } } };
    const file = await fileWith('bad.json', { prescription: bad });
    const before = stored();
    const result = await runCli(['prescriptions', 'send', file], env);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    // one line per problem, each naming the file and the field
    expect(result.stderr).toContain(`prescription file ${file}: patient.dob: must be a date in YYYY-MM-DD format (nothing sent)\n`);
    expect(result.stderr).toContain(`prescription file ${file}: patient.address.zip: must be five digits (nothing sent)\n`);
    expect(result.stderr).not.toContain('04/01/1980');
    expect(stored()).toBe(before);
  });

  it.each([
    [
      'a missing file',
      ['prescriptions', 'send', '/nonexistent/rx.json'],
      'cannot read prescription file /nonexistent/rx.json: no such file',
    ],
    ['a non-JSON file', ['subscriptions', 'create', 'NOT_JSON'], 'is not valid JSON'],
    ['a limit out of range', ['events', 'list', '--limit', '251'], '--limit must be an integer from 1 to 250'],
  ])('%s: exit 2 with a clear message', async (_label, args, message) => {
    const resolved = await Promise.all(args.map(async (a) => (a === 'NOT_JSON' ? fileWith('not.json', 'prescription_identity: x') : a)));
    const result = await runCli(resolved, env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it('no INTAKE_API_BASE_URL: exit 2 naming the variable', async () => {
    const result = await runCli(['events', 'list'], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('INTAKE_API_BASE_URL: is required for commands that call the intake API');
  });

  it('an API error: exit 1 with method, path and status', async () => {
    const result = await runCli(['prescriptions', 'get', 'cli-missing'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('GET /prescriptions/cli-missing: 404 Not Found');
  });
});
