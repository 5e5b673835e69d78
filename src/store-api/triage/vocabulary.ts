/**
 * The triage words every front door shares: the finding reasons (the SQL owns the list too:
 * quarantine_reasons(), sql/api/triage/quarantine_reasons.sql, and a test checks the two agree),
 * the dismissal codes the console offers, and the shapes of a finding's identifiers.
 */

/** Why an event was held: the SQL's quarantine_reasons(), in its order. */
export const QUARANTINE_REASONS = ['malformed', 'unmatched', 'ambiguous', 'unsupported_version'] as const;
export type QuarantineReason = (typeof QUARANTINE_REASONS)[number];

/** The dismissal codes the console offers (dismiss_quarantined and dismiss_matching take any code of the rule). */
export const DISMISS_REASONS = ['not_ours', 'operator_test', 'reported_to_operator', 'duplicate'] as const;

/** An event id, a quarantine key, a subscription id or an external_id: 1-512 visible ASCII characters. */
export const IDENTIFIER_PATTERN = /^[\x21-\x7e]{1,512}$/;

/** An event's name as the filter takes it. */
export const EVENT_NAME_PATTERN = /^[a-z0-9_.-]{1,64}$/i;
