import { qualified, type RunnerSource, runnerOf } from '../runner.js';

/**
 * status_changes_since(): up to `maxRows` status changes after `cursor` (null: from the start), in
 * commit order, as the SQL returns them. `prepare`: a named prepared statement (a follower reads
 * the same statement again and again on its own connection).
 */
export async function statusChangesSince(
  source: RunnerSource,
  cursor: string | null,
  maxRows: number,
  options: { prepare?: boolean } = {},
): Promise<Record<string, unknown>[]> {
  const runner = runnerOf(source);
  return runner.query<Record<string, unknown>>(
    `select * from ${qualified(runner, 'status_changes_since')}($1::text, $2::integer)`,
    [cursor, maxRows],
    options,
  );
}

/**
 * LISTEN on the channel the SQL API notifies after each commit of status changes (statusChannel,
 * src/api/status-channel.ts), on the runner's own connection: a follower's wake-up.
 */
export async function listenForStatusChanges(source: RunnerSource, channel: string): Promise<void> {
  if (!/^[^"\0]{1,63}$/.test(channel)) throw new RangeError('channel: 1-63 characters, no double quote');
  await runnerOf(source).query(`listen "${channel}"`);
}
