import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError, durationSetting, type Config } from './config.js';
import { RETENTION_CLASSES, type RetentionClass } from '../sync/retention/retention-classes.js';
import { baseUrlProblem, canonicalBaseUrl } from '../intake/base-url.js';
import { SUPPORTED_API_VERSIONS } from '../intake/versions.js';
import { DEFAULT_FEED, FEED_NAME_PATTERN, FEED_NAME_RULE } from '../db/feed-name.js';
import { deadlineSetting } from './overdue-deadlines.js';
import { OVERDUE_STAGES, type OverdueStage } from '../store-api/overdue/stages.js';
import { SecretFileReader } from './secret-file.js';
import { terminalSafe } from '../lib/terminal-text.js';

/** Why a FEEDS_FILE could not be read, with what to do about it. Pure. */
function fileErrorText(code: unknown): string {
  if (code === 'ENOENT') return 'no such file: give the path of the JSON file listing the feeds';
  if (code === 'EACCES') return 'permission denied: let the service user read it';
  if (code === 'EISDIR') return 'a directory: give the path of the JSON file listing the feeds';
  return typeof code === 'string' ? code : 'unreadable';
}

/** One operator account this deployment consumes. */
export interface FeedConfig {
  name: string;
  /** undefined: the built-in sandbox (single-feed deployments without INTAKE_API_BASE_URL only) */
  baseUrl: string | undefined;
  apiKey: string | undefined;
  apiSecret: string | undefined;
  /** this feed's own retention (FEEDS_FILE `retain`), per class in ms (null: forever); the rest follow RETAIN_* */
  retain?: Partial<Record<RetentionClass, number | null>>;
  /** this feed's own stage deadlines (FEEDS_FILE `overdue`), in ms (null: off); the rest follow OVERDUE_* */
  overdue?: Partial<Record<OverdueStage, number | null>>;
}

// `"overdue": {"sent": "4h", "dispensed": "off"}`: the OVERDUE_* variables of one feed, lower case
const overdueSchema = z
  .object(
    Object.fromEntries(OVERDUE_STAGES.map((s) => [s, deadlineSetting.optional()])) as Record<
      OverdueStage,
      z.ZodOptional<typeof deadlineSetting>
    >,
    { error: (issue) => (issue.code === 'invalid_type' ? 'must be an object of durations' : undefined) },
  )
  .strict();

// `"retain": {"event_bodies": "7d", "audit": "forever"}`: the RETAIN_* variables of one feed, lower case
const retainSchema = z
  .object(
    Object.fromEntries(RETENTION_CLASSES.map((c) => [c, durationSetting.optional()])) as Record<
      RetentionClass,
      z.ZodOptional<typeof durationSetting>
    >,
    { error: (issue) => (issue.code === 'invalid_type' ? 'must be an object of durations' : undefined) },
  )
  .strict();

// `env:VAR` reads the value from the environment, `file:/path` from a file (a mounted Secret), so secrets stay out of the file
const ENV_REF = /^env:([A-Za-z_][A-Za-z0-9_]*)$/;
const FILE_REF = /^file:(.+)$/;

/** One entry of a FEEDS_FILE (its keys are documented in docs/configuration.md; a test checks them). */
export const feedEntrySchema = (env: NodeJS.ProcessEnv, secrets: SecretFileReader = new SecretFileReader()) => {
  const value = z
    .string({ message: 'must be a string' })
    .min(1, { message: 'must not be empty' })
    .transform((raw, ctx) => {
      const file = FILE_REF.exec(raw);
      if (file) {
        const read = secrets.read(file[1]!);
        if ('problem' in read) {
          ctx.addIssue({ code: 'custom', message: `names the file ${file[1]!.slice(0, 256)}, which ${read.problem}` });
          return z.NEVER;
        }
        return read.value;
      }
      const ref = ENV_REF.exec(raw);
      if (!ref) return raw;
      const resolved = env[ref[1]!];
      if (resolved === undefined || resolved === '') {
        ctx.addIssue({ code: 'custom', message: `names the environment variable ${ref[1]}, which is not set` });
        return z.NEVER;
      }
      return resolved;
    });
  return z
    .object(
      {
        name: z.string({ message: 'must be a string' }).regex(FEED_NAME_PATTERN, { message: FEED_NAME_RULE }),
        base_url: value.pipe(
          z.string().superRefine((url, ctx) => {
            const problem = baseUrlProblem(url, SUPPORTED_API_VERSIONS);
            if (problem) ctx.addIssue({ code: 'custom', message: problem });
          }),
        ),
        api_key: value,
        api_secret: value,
        retain: retainSchema.optional(),
        overdue: overdueSchema.optional(),
      },
      { error: (issue) => (issue.code === 'invalid_type' ? 'must be an object' : undefined) },
    )
    .strict();
};

const feedsFileSchema = (env: NodeJS.ProcessEnv, secrets: SecretFileReader) =>
  z
    .array(feedEntrySchema(env, secrets), { message: 'must be a JSON array of feeds' })
    .min(1, { message: 'must name at least one feed' })
    .superRefine((feeds, ctx) => {
      const seen = new Map<string, number>();
      feeds.forEach((feed, index) => {
        const first = seen.get(feed.name);
        if (first !== undefined) ctx.addIssue({ code: 'custom', path: [index, 'name'], message: `repeats the name of feed [${first}]` });
        else seen.set(feed.name, index);
      });
    });

/** A field path as the errors print it: `[1].base_url`. */
const pathText = (path: readonly PropertyKey[]) =>
  path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
    .join('')
    .replace(/^\./, '');

/**
 * Parses a FEEDS_FILE's text. Throws ConfigError naming the file and each bad field path; a
 * message never carries a value (secrets, and `env:` values, stay unprinted).
 */
export function parseFeedsFile(
  text: string,
  file: string,
  env: NodeJS.ProcessEnv,
  secrets: SecretFileReader = new SecretFileReader(),
): FeedConfig[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigError(`FEEDS_FILE: ${terminalSafe(file)} is not valid JSON`);
  }
  const result = feedsFileSchema(env, secrets).safeParse(json);
  if (!result.success) {
    const lines = result.error.issues.map(
      (issue) => `FEEDS_FILE: ${terminalSafe(file)}${issue.path.length ? ` ${terminalSafe(pathText(issue.path))}` : ''}: ${issue.message}`,
    );
    throw new ConfigError(lines);
  }
  return result.data.map((feed) => ({
    name: feed.name,
    baseUrl: canonicalBaseUrl(feed.base_url),
    apiKey: feed.api_key,
    apiSecret: feed.api_secret,
    ...(feed.retain ? { retain: Object.fromEntries(Object.entries(feed.retain).filter(([, v]) => v !== undefined)) } : {}),
    ...(feed.overdue ? { overdue: Object.fromEntries(Object.entries(feed.overdue).filter(([, v]) => v !== undefined)) } : {}),
  }));
}

/**
 * The feeds this deployment consumes: FEEDS_FILE's, or (without it) the one feed the single-feed
 * variables describe, named FEED_NAME (`default` unless set).
 */
export function resolveFeeds(
  config: Config,
  env: NodeJS.ProcessEnv = process.env,
  secrets: SecretFileReader = new SecretFileReader(),
): FeedConfig[] {
  if (!config.FEEDS_FILE) {
    return [
      { name: config.FEED_NAME, baseUrl: config.INTAKE_API_BASE_URL, apiKey: config.INTAKE_API_KEY, apiSecret: config.INTAKE_API_SECRET },
    ];
  }
  // FEED_NAME names the one feed of the single-feed variables; beside the file it would be ignored
  if (env.FEED_NAME) throw new ConfigError('FEED_NAME: must not be set with FEEDS_FILE (the file names each feed: unset FEED_NAME)');
  let text: string;
  try {
    text = readFileSync(config.FEEDS_FILE, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new ConfigError(`FEEDS_FILE: cannot read ${terminalSafe(config.FEEDS_FILE)} (${fileErrorText(code)})`);
  }
  return parseFeedsFile(text, config.FEEDS_FILE, env, secrets);
}

/**
 * `--feed NAME` of a CLI command: that feed, which must be configured. Without it: the only
 * configured feed, else the feed `default` when configured; otherwise refused, naming the feeds.
 */
export function selectFeed(feeds: readonly FeedConfig[], requested: string | undefined): FeedConfig {
  const known = feeds.map((f) => f.name).join(', ');
  if (requested === undefined) {
    if (feeds.length === 1) return feeds[0]!;
    const fallback = feeds.find((f) => f.name === DEFAULT_FEED);
    if (fallback) return fallback;
    throw new ConfigError(`--feed: required when several feeds are configured and none is named ${DEFAULT_FEED} (known feeds: ${known})`);
  }
  const feed = feeds.find((f) => f.name === requested);
  // the name is echoed only once it matched the feed-name rule: nothing else of the input is printed
  const shown = FEED_NAME_PATTERN.test(requested) ? JSON.stringify(requested) : 'the name given';
  if (!feed) throw new ConfigError(`--feed: ${shown} is not a configured feed (known feeds: ${known})`);
  return feed;
}

/**
 * The names of the configured feeds without their secrets: FEEDS_FILE's names (a file whose `env:`
 * values are not set here still names its feeds: `migrate` runs without the operator secrets), else
 * FEED_NAME. ConfigError for a file that cannot be read or holds no valid names.
 */
export function configuredFeedNames(config: Config): string[] {
  if (!config.FEEDS_FILE) return [config.FEED_NAME];
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(config.FEEDS_FILE, 'utf8'));
  } catch {
    throw new ConfigError(`FEEDS_FILE: cannot read ${terminalSafe(config.FEEDS_FILE)} as JSON`);
  }
  const names = z
    .array(z.object({ name: z.string().regex(FEED_NAME_PATTERN) }))
    .min(1)
    .safeParse(json);
  if (!names.success) throw new ConfigError(`FEEDS_FILE: ${terminalSafe(config.FEEDS_FILE)}: every feed needs a valid name`);
  return names.data.map((feed) => feed.name);
}
