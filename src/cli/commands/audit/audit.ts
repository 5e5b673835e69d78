import type { Command } from 'commander';
import { loadConfig } from '../../../config/config.js';
import { listAudit, type AuditFilter } from '../../../store-api/audit/audit-entries.js';
import { FEED_NAME_PATTERN, FEED_NAME_RULE } from '../../../db/feed-name.js';
import { parseSince } from './since.js';
import { CliUsageError } from '../../context/errors.js';
import { printJson, printTable } from '../../context/output.js';
import { withStore } from '../../context/store-context.js';

const ACTION = /^[a-z][a-z_.]{0,63}$/;
const ACTION_NOUN = /^[a-z][a-z_]{0,61}\.\*$/;
export const AUDIT_LIST_MAX = 10_000;

interface AuditListOptions {
  since?: string;
  action?: string;
  feed?: string;
  limit?: string;
  json?: boolean;
}

/** The options of `audit list`, checked: a bad one is a usage error naming it (exit 2). */
export function auditFilterOf(options: AuditListOptions, now: Date): AuditFilter {
  const filter: AuditFilter = { limit: 100 };
  if (options.since !== undefined) filter.since = parseSince(options.since, now);
  if (options.action !== undefined) {
    if (!ACTION.test(options.action) && !ACTION_NOUN.test(options.action)) {
      throw new CliUsageError(`--action ${JSON.stringify(options.action)}: an action (outbox.send) or every action of a noun (outbox.*)`);
    }
    filter.action = options.action;
  }
  if (options.feed !== undefined) {
    // not checked against the configured feeds: the trail keeps entries of feeds removed since
    if (!FEED_NAME_PATTERN.test(options.feed)) throw new CliUsageError(`--feed ${JSON.stringify(options.feed)}: ${FEED_NAME_RULE}`);
    filter.feed = options.feed;
  }
  if (options.limit !== undefined) {
    const limit = /^[0-9]{1,5}$/.test(options.limit) ? Number(options.limit) : Number.NaN;
    if (!(limit >= 1 && limit <= AUDIT_LIST_MAX)) {
      throw new CliUsageError(`--limit ${JSON.stringify(options.limit)}: a whole number from 1 to ${AUDIT_LIST_MAX}`);
    }
    filter.limit = limit;
  }
  return filter;
}

/** Registers `audit list`: the audit trail (view audit_log), newest first. */
export function registerAuditCommands(program: Command): void {
  const audit = program.command('audit').description('the audit trail: who changed what, when (docs/security.md)');
  audit
    .command('list')
    .description('entries of the audit trail, newest first (identifiers and counts only: it holds no PHI)')
    .option('--since <when>', 'only entries since a duration back (90s, 15m, 12h, 30d, 2w) or a timestamp (2024-12-10T08:00:00Z)')
    .option('--action <action>', 'only this action (outbox.send) or every action of a noun (outbox.*)')
    .option('--feed <feed>', 'only entries of this feed')
    .option('--limit <n>', `at most this many entries, the newest (default 100, at most ${AUDIT_LIST_MAX})`)
    .option('--json', 'one JSON object per line')
    .action(async (options: AuditListOptions) => {
      const filter = auditFilterOf(options, new Date());
      const config = loadConfig();
      const rows = await withStore(config, (database) => listAudit(database.db, database.names, filter));
      if (options.json) {
        for (const row of rows) printJson(row);
        return;
      }
      printTable(
        ['at', 'actor', 'client_addr', 'action', 'feed', 'subject', 'detail'],
        rows.map((r) => ({ ...r, detail: JSON.stringify(r.detail) })),
      );
    });
}
