/** The feed of a single-feed deployment, and the SQL API's default `feed` argument. */
export const DEFAULT_FEED = 'default';

/** What FEED_NAME, FEEDS_FILE names and the SQL functions' `feed` argument accept. */
export const FEED_NAME_PATTERN = /^[a-z0-9_-]{1,64}$/;
export const FEED_NAME_RULE = 'must be 1-64 of a-z 0-9 _ -';
