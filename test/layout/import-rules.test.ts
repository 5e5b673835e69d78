import { readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult, type IConfiguration } from 'dependency-cruiser';
import { afterEach, describe, expect, it } from 'vitest';

// The rooms' import rules (.dependency-cruiser.cjs) must fail on an upward import, not merely pass on
// today's tree: each case plants one import into a small tree shaped like src/ and cruises it with the
// repo's own rules, resolving `.js` specifiers to `.ts` files as the real tree does (tsconfig NodeNext).
const rules = createRequire(import.meta.url)('../../.dependency-cruiser.cjs') as IConfiguration;

const TSCONFIG = JSON.stringify({
  compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2023', strict: true },
  include: ['src'],
});

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Writes `src/<from>.ts` importing `src/<to>.ts` (both made) and returns the names of the rules it breaks. */
async function brokenRules(from: string, to: string): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'import-rules-'));
  dirs.push(dir);
  const write = async (path: string, text: string) => {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  };
  await write('tsconfig.json', TSCONFIG);
  await write(`src/${to}.ts`, 'export const planted = 1;\n');
  const depth = from.split('/').length - 1;
  const specifier = `${'../'.repeat(depth) || './'}${to}.js`;
  await write(`src/${from}.ts`, `import { planted } from '${specifier}';\nexport const uses = planted;\n`);
  const { output } = await cruise(['src'], {
    baseDir: dir,
    validate: true,
    ruleSet: { forbidden: rules.forbidden ?? [] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  });
  const result = output as ICruiseResult;
  // the planted import must have been resolved, or no rule could see it
  const planted = result.modules.find((module) => module.source === `src/${from}.ts`);
  expect(planted?.dependencies.map((dependency) => dependency.resolved)).toEqual([`src/${to}.ts`]);
  return [...new Set(result.summary.violations.map((violation) => violation.rule.name))].sort();
}

describe('the import rules of the rooms', () => {
  it.each([
    ['daemon imports the CLI', 'daemon/run', 'cli/context/errors', ['cli-is-the-top', 'daemon-never-imports-cli']],
    ['the console imports the CLI', 'console/compose', 'cli/context/output', ['cli-is-the-top', 'console-stands-apart']],
    ['the console imports the daemon', 'console/compose', 'daemon/signals', ['console-stands-apart', 'only-cli-runs-the-daemon']],
    ['config imports the daemon', 'config/config', 'daemon/store-context', ['config-below-the-runners', 'only-cli-runs-the-daemon']],
    ['config imports the CLI', 'config/feeds-file', 'cli/context/feed-context', ['cli-is-the-top', 'config-below-the-runners']],
    ['the logger imports config', 'log/log', 'config/config', ['log-stands-alone']],
    ['telemetry imports the worker', 'telemetry/spans', 'sync/poll/poller', ['telemetry-stands-alone']],
    ['telemetry imports the logger', 'telemetry/sdk', 'log/log', ['telemetry-stands-alone']],
    ['the worker imports the daemon', 'sync/poll/poller', 'daemon/worker-settings', ['only-cli-runs-the-daemon', 'sync-takes-settings']],
    ['ops imports the daemon', 'ops/health-server', 'daemon/run', ['only-cli-runs-the-daemon', 'ops-reads-state']],
    [
      'a feed worker is built outside the daemon',
      'ops/metrics',
      'sync/compose-worker',
      ['front-doors-call-the-client', 'only-daemon-builds-workers', 'ops-reads-state'],
    ],
    [
      'the console calls the SQL API through the worker',
      'console/pages/finding',
      'sync/matching/rematch',
      ['console-stands-apart', 'front-doors-call-the-client'],
    ],
    [
      'ops calls the SQL API through the worker',
      'ops/quarantine-source',
      'sync/feed-admin/checkpoint-mover',
      ['front-doors-call-the-client'],
    ],
    [
      'the public API calls the SQL API through the worker',
      'api/intake-sync-api',
      'sync/matching/sent-prescriptions',
      ['api-without-worker', 'front-doors-call-the-client'],
    ],
    ['the SQL API client imports a front door', 'store-api/triage/finding-actions', 'console/sql-problem', ['store-api-is-the-client']],
    ['the SQL API client imports the worker', 'store-api/triage/quarantine-list', 'sync/apply/apply-page', ['store-api-is-the-client']],
    ['the worker runs a CLI operation', 'sync/outbox/delivery', 'operations/resync/resync', ['operations-serve-the-cli']],
    ['the daemon runs a CLI operation', 'daemon/embedded-demo', 'operations/resync/resync', ['operations-serve-the-cli']],
    ['a CLI operation reads config', 'operations/resync/resync', 'config/config', ['operations-are-handed-settings']],
    ['the CLI writes through the worker', 'cli/commands/quarantine/quarantine', 'sync/apply/page-statement', ['cli-calls-the-client']],
    ['the CLI reads the worker beyond its list', 'cli/commands/status/status', 'sync/state/worker-snapshot', ['cli-calls-the-client']],
    ['a CLI operation imports the worker beyond its list', 'operations/resync/resync', 'sync/outbox/store', ['cli-calls-the-client']],
  ])('%s: refused', async (_label, from, to, expected) => {
    expect(await brokenRules(from, to)).toEqual(expected);
  });

  it.each([
    ['the CLI imports the daemon', 'cli/commands/run/run', 'daemon/run'],
    ['the CLI imports its context', 'cli/commands/checkpoint/checkpoint', 'cli/context/operator'],
    ['the daemon imports config', 'daemon/run', 'config/config'],
    ['the daemon builds a worker', 'daemon/feed-workers', 'sync/compose-worker'],
    ['config imports the logger', 'config/config', 'log/log'],
    ['the console imports the logger', 'console/compose', 'log/log'],
    ['the console calls the SQL API client', 'console/pages/finding', 'store-api/triage/finding-actions'],
    ['the CLI calls the SQL API client', 'cli/commands/quarantine/quarantine', 'store-api/triage/finding-actions'],
    ['the CLI runs an operation', 'cli/commands/resync/resync', 'operations/resync/resync'],
    ['an operation calls the SQL API client', 'operations/resync/resync-plan', 'store-api/feeds/feed-store-facts'],
    ["the CLI runs the cleaner's pass", 'cli/commands/purge/purge', 'sync/retention/purge-pass'],
    ['the CLI names the cursor problem the worker publishes', 'cli/commands/status/lag', 'sync/state/cursor-problem'],
    ['an operation records a sent prescription as the outbox does', 'operations/resync/resync', 'sync/matching/sent-prescriptions'],
    ['ops reads what the worker publishes', 'ops/readiness', 'sync/state/worker-snapshot'],
    ['the worker reads the client vocabulary', 'sync/activity/activity-decisions', 'store-api/triage/vocabulary'],
    ['the operator contract traces its requests', 'intake/retry-runner', 'telemetry/spans'],
    ['the store sets the trace context', 'db/trace-context', 'telemetry/spans'],
  ])('%s: allowed', async (_label, from, to) => {
    expect(await brokenRules(from, to)).toEqual([]);
  });
});

// cli-calls-the-client lets the CLI and src/operations import only the worker code they run too, file by file
// (WORKER_CODE_THE_CLI_RUNS): the list must be exactly what they import, so a file that stops being run from
// the CLI, or moves out of src/sync, leaves it rather than staying allowed unseen.
describe("the CLI's list of worker code", () => {
  const ROOT = fileURLToPath(new URL('../../', import.meta.url));

  it('names exactly the src/sync files that the CLI and its operations import', async () => {
    const rule = (rules.forbidden ?? []).find((candidate) => candidate.name === 'cli-calls-the-client');
    const allowed = new RegExp(String(rule && 'to' in rule ? rule.to.pathNot : undefined));
    const syncFiles = readdirSync(join(ROOT, 'src/sync'), { recursive: true, encoding: 'utf8' })
      .map((path) =>
        relative(ROOT, join(ROOT, 'src/sync', path))
          .split('\\')
          .join('/'),
      )
      .filter((path) => path.endsWith('.ts'));
    const { output } = await cruise(['src/cli', 'src/operations'], {
      baseDir: ROOT,
      // the CLI's own imports are all this needs: resolved, not followed into the rooms below
      doNotFollow: { path: '^(node_modules|src/(?!cli/|operations/))' },
      tsPreCompilationDeps: true,
      tsConfig: { fileName: 'tsconfig.json' },
    });
    const imported = new Set(
      (output as ICruiseResult).modules
        .filter((module) => /^src\/(cli|operations)\//.test(module.source))
        .flatMap((module) => module.dependencies.map((dependency) => dependency.resolved))
        .filter((path) => path.startsWith('src/sync/')),
    );
    expect([...imported].sort()).toEqual(syncFiles.filter((path) => allowed.test(path)).sort());
    // the TypeScript resolver over the CLI's files: about ten seconds on a loaded 2-core machine, so its own budget
  }, 60_000);
});
