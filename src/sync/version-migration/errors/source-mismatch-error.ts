/**
 * The configured base URL of a feed is none of the sources `subscriptions migrate` recorded for it:
 * a deployment pointed at yet another operator URL would read a feed whose position we do not keep.
 */
export class SourceMismatchError extends Error {
  override readonly name = 'SourceMismatchError';

  constructor(
    readonly feed: string,
    readonly configured: string,
    readonly recorded: readonly string[],
  ) {
    super(
      `feed ${feed}: the configured base URL ${configured} is none of the feed's recorded sources (${recorded.join(', ')}); ` +
        'configure one of them (after a migration: the current one)',
    );
  }
}
