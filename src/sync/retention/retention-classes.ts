/**
 * What retention removes, one class per kind of row, in the order a pass runs them: open findings
 * expire first (their events' bodies become purgeable in the same pass), bodies go before the rows
 * that carried them, audit rows last. The setting of each class is its environment variable.
 */
export const RETENTION_CLASSES = [
  'open_findings',
  'quarantine',
  'event_bodies',
  'events',
  'outbox_bodies',
  'terminal_identities',
  'status_changes',
  'audit',
] as const;
export type RetentionClass = (typeof RETENTION_CLASSES)[number];

/** The environment variable (and FEEDS_FILE `retain` key, lower case without RETAIN_) of each class. */
export const RETENTION_SETTING: Readonly<Record<RetentionClass, string>> = {
  open_findings: 'RETAIN_OPEN_FINDINGS',
  quarantine: 'RETAIN_QUARANTINE',
  event_bodies: 'RETAIN_EVENT_BODIES',
  events: 'RETAIN_EVENTS',
  outbox_bodies: 'RETAIN_OUTBOX_BODIES',
  terminal_identities: 'RETAIN_TERMINAL_IDENTITIES',
  status_changes: 'RETAIN_STATUS_CHANGES',
  audit: 'RETAIN_AUDIT',
};

/** How long each class is kept, in ms; null: forever (never purged). */
export type RetentionPolicy = Readonly<Record<RetentionClass, number | null>>;

/** Rows removed (or, in a dry run, due) per class. */
export type RetentionCounts = Record<RetentionClass, number>;

export const zeroCounts = (): RetentionCounts => Object.fromEntries(RETENTION_CLASSES.map((c) => [c, 0])) as RetentionCounts;
