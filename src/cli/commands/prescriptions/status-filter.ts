import { STATUS_RANKS } from '../../../sync/matching/status-rank.js';
import { CliUsageError } from '../../context/errors.js';

/** The statuses a local prescription can be in (the spec's five event names), in lifecycle order. */
export const PRESCRIPTION_STATUSES = Object.keys(STATUS_RANKS);

/**
 * `prescriptions list --status`: one of the statuses, or a usage error (exit 2) saying which are
 * valid and what was given, like `quarantine list --reason`. undefined when the option is absent.
 */
export function parseStatusFilter(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (PRESCRIPTION_STATUSES.includes(value)) return value;
  throw new CliUsageError(`--status must be one of ${PRESCRIPTION_STATUSES.join(', ')} (got ${JSON.stringify(value)})`);
}
