import type { Command } from 'commander';
import { loadConfig, type Config } from '../../config/config.js';
import { resolveFeeds, selectFeed, type FeedConfig } from '../../config/feeds-file.js';
import type { IntakeClient } from '../../intake/client.js';
import { createLogger, type Logger } from '../../log/log.js';
import type { Db } from '../../db/connection.js';
import { currentSourceBaseUrl } from '../../sync/version-migration/feed-sources.js';
import { requireRemoteConfig, type RemoteConfig } from './client-context.js';
import { intakeClientFor } from '../../config/intake-client.js';

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

/** The feed's account and operator: its FEEDS_FILE entry, or the INTAKE_API_* variables (each missing one named). */
export function feedRemote(config: Config, feed: FeedConfig): RemoteConfig {
  // the single-feed variables keep their own messages (naming each missing variable)
  if (!config.FEEDS_FILE || !feed.baseUrl || !feed.apiKey || !feed.apiSecret) return requireRemoteConfig(config);
  return {
    baseUrl: feed.baseUrl,
    apiKey: feed.apiKey,
    apiSecret: feed.apiSecret,
    timeoutMs: config.HTTP_TIMEOUT_MS,
    maxResponseBytes: config.MAX_RESPONSE_BYTES,
  };
}

/** An IntakeClient for the feed's account at its configured base URL. */
export function feedClient(config: Config, feed: FeedConfig, logger?: Logger): IntakeClient {
  return intakeClientFor(config, feedRemote(config, feed), { logger });
}

/**
 * The client of the feed's CURRENT source: the base URL `subscriptions migrate` recorded as current when
 * the feed has recorded sources, else the configured one. Every command that creates a subscription at
 * the operator (POST /prescriptions creates one too) goes through it: the configured URL stays the old
 * version's until the operator edits the config, and a subscription created there after a migration
 * started would never be moved, its events unread once the old source retires.
 */
export async function currentSourceClient(config: Config, feed: FeedConfig, db: Db, logger?: Logger): Promise<IntakeClient> {
  return (await currentSource(config, feed, db, logger)).client;
}

/** currentSourceClient with the base URL it reads, for a caller that must know where a request went. */
export async function currentSource(
  config: Config,
  feed: FeedConfig,
  db: Db,
  logger?: Logger,
): Promise<{ client: IntakeClient; baseUrl: string }> {
  const remote = feedRemote(config, feed);
  const baseUrl = (await currentSourceBaseUrl(db, feed.name)) ?? remote.baseUrl;
  return { client: intakeClientFor(config, { ...remote, baseUrl }, { logger }), baseUrl };
}

/** For remote-only commands: the client of the feed `--feed` names, environment parsed once, logs (retries) on stderr. */
export function clientForFeedOption(requested: string | undefined): IntakeClient {
  const config = loadConfig();
  return feedClient(config, commandFeed(config, requested), createLogger({ level: config.LOG_LEVEL }));
}
