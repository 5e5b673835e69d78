import type { Command } from 'commander';
import { loadConfig, type Config } from '../config.js';
import { resolveFeeds, selectFeed, type FeedConfig } from '../feeds-file.js';
import { IntakeClient } from '../intake/client.js';
import { createLogger, type Logger } from '../log.js';
import { clientFromConfig } from './client-context.js';

/** Adds `--feed NAME` to a command that touches one feed's rows, checkpoint or outbox. */
export function withFeedOption(command: Command): Command {
  return command.option('--feed <name>', 'the feed (default: the only configured one, else the feed named default)');
}

/**
 * The feed a command acts on: `--feed`, which must be configured (FEEDS_FILE, or the single feed
 * FEED_NAME); without it the only feed, else `default`. An unknown name is refused (exit 2) naming
 * `--feed` and the known feeds, before anything is read or written.
 */
export function commandFeed(config: Config, requested: string | undefined): FeedConfig {
  return selectFeed(resolveFeeds(config), requested);
}

/** An IntakeClient for the feed's account: its FEEDS_FILE entry, or the INTAKE_API_* variables. */
export function feedClient(config: Config, feed: FeedConfig, logger?: Logger): IntakeClient {
  // the single-feed variables keep their own messages (naming each missing variable)
  if (!config.FEEDS_FILE || !feed.baseUrl || !feed.apiKey || !feed.apiSecret) return clientFromConfig(config, logger);
  return new IntakeClient({ baseUrl: feed.baseUrl, apiKey: feed.apiKey, apiSecret: feed.apiSecret, timeoutMs: config.HTTP_TIMEOUT_MS, logger });
}

/** For remote-only commands: the client of the feed `--feed` names, environment parsed once, logs (retries) on stderr. */
export function clientForFeedOption(requested: string | undefined): IntakeClient {
  const config = loadConfig();
  return feedClient(config, commandFeed(config, requested), createLogger({ level: config.LOG_LEVEL }));
}
