import type { Command } from 'commander';
import { terminalSafe } from '../../../lib/terminal-text.js';
import { type Config, loadConfig } from '../../../config/config.js';
import { resolveFeeds, selectFeed, type FeedConfig } from '../../../config/feeds-file.js';
import { VERSION } from '../../../version.js';
import { checkDatabase, checkGrants, checkLease, checkOperator, checkSchema, type CheckResult } from './checks.js';
import { printJson } from '../../context/output.js';
import { decideRunMode } from '../../../daemon/demo-gate.js';
import { runDemoChecks } from './demo.js';
import { checkConnections, checkFeedRecords } from './connections.js';

/** Registers `intake-sync doctor [--feed F] [--json]`. */
export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description(
      'check the deployment without changing anything: configuration, database (TLS, pooler), schema version, grants, lease URL, connections against max_connections, feed records of dropped roles, and each operator with its credentials; exit 0 only when every check passes',
    )
    .option('--feed <name>', 'check only this feed at the operator (default: every configured feed)')
    .option('--json', 'print {"ok", "version", "checks": [{check, ok, detail}]} as one JSON line')
    .action(async (options: { feed?: string; json?: boolean }) => {
      const checks = await runChecks(options.feed);
      const ok = checks.every((c) => c.ok);
      if (options.json) printJson({ ok, version: VERSION, checks });
      else for (const c of checks) process.stdout.write(`${c.ok ? 'ok  ' : 'FAIL'}  ${c.check.padEnd(16)}  ${terminalSafe(c.detail)}\n`);
      process.exitCode = ok ? 0 : 1;
    });
}

/** Every check in order; a check that cannot run without an earlier one is reported as failed, saying why. */
async function runChecks(requestedFeed: string | undefined): Promise<CheckResult[]> {
  let config: Config;
  let feeds: FeedConfig[];
  try {
    config = loadConfig();
    // what `run` would refuse, doctor reports; with nothing configured it checks the demo's own setup
    if (decideRunMode(config, { demo: false }) === 'demo') return await runDemoChecks(config);
    feeds = resolveFeeds(config);
  } catch (error) {
    return [{ check: 'configuration', ok: false, detail: error instanceof Error ? error.message.replace(/\n\s*/g, ' ') : String(error) }];
  }
  // an unknown --feed is a usage error (exit 2), not a failed check
  const selected = requestedFeed === undefined ? feeds : [selectFeed(feeds, requestedFeed)];
  const checks: CheckResult[] = [
    {
      check: 'configuration',
      ok: true,
      detail: `version ${VERSION}, ${feeds.length} feed(s): ${feeds.map((f) => f.name).join(', ')}; schema ${config.DATABASE_SCHEMA}; poll every ${config.POLL_INTERVAL_MS} ms`,
    },
  ];
  const { result, reach } = await checkDatabase(config);
  checks.push(result);
  if (reach) {
    try {
      checks.push(await checkSchema(reach.database));
      checks.push(await checkGrants(reach.database));
      checks.push(await checkLease(config, reach));
      checks.push(await checkConnections(config, reach.database));
      checks.push(await checkFeedRecords(reach.database));
    } finally {
      await reach.database.close().catch(() => {});
    }
  } else {
    for (const check of ['schema', 'grants', 'lease', 'connections', 'feed records'])
      checks.push({ check, ok: false, detail: 'not checked: the database is unreachable' });
  }
  for (const feed of selected) checks.push(await checkOperator(config, feed));
  return checks;
}
