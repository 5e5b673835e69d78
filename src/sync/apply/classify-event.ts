import type { z } from 'zod';
import { eventRuleViolations, eventShapeSchema, type IntakeEvent } from '../../intake/event.js';
import { MAX_DETAIL_LENGTH, MAX_IDENTITY_KEY_BYTES } from '../../intake/limits.js';
import { isSupportedApiVersion, SUPPORTED_API_VERSIONS } from '../../intake/versions.js';
import { identityKey, normaliseErx } from '../matching/identity-key.js';
import { statusRank } from '../matching/status-rank.js';

export type ClassifiedEvent =
  | {
      ok: true;
      event: IntakeEvent;
      /** identityKey() of the event's prescription_identity */
      key: string;
      erx: string | null;
      /** lifecycle rank, null for an unknown event name */
      rank: number | null;
      /** occurred_at as an ISO-8601 UTC timestamp Postgres accepts */
      occurredAt: string;
      /**
       * why the event is stored but not applied, decided before matching: its api_version is not one
       * this build reads (its shapes may differ: we do not guess). null for an applicable event
       */
      hold: { reason: 'unsupported_version'; detail: string } | null;
    }
  | { ok: false; reason: 'malformed'; detail: string };

/** zod issues as `path: rule` (paths and rules only: values can be PHI); `root` names a failing whole value. */
export function describeIssues(issues: readonly z.core.$ZodIssue[], root = '(event)'): string {
  const text = issues.map((issue) => `${issue.path.length ? issue.path.map(String).join('.') : root}: ${issue.message}`).join('; ');
  return boundedDetail(text);
}

/** A detail cut to MAX_DETAIL_LENGTH characters (it is stored and shown; an event may fail many rules). */
export function boundedDetail(text: string): string {
  return text.length <= MAX_DETAIL_LENGTH ? text : `${text.slice(0, MAX_DETAIL_LENGTH - 3)}...`;
}

// an ISO date-time without an offset would be read in the host's time zone: pin it to UTC
const ISO_WITHOUT_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;
const withZone = (timestamp: string) => (ISO_WITHOUT_ZONE.test(timestamp.trim()) ? `${timestamp.trim()}Z` : timestamp);

function malformed(detail: string): ClassifiedEvent {
  return { ok: false, reason: 'malformed', detail };
}

/** Validates one raw event as received and derives what matching and status need. */
export function classifyEvent(raw: unknown): ClassifiedEvent {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return malformed(`(event): must be a JSON object, got ${Array.isArray(raw) ? 'array' : raw === null ? 'null' : typeof raw}`);
  }
  // the shape by zod, then the rules in plain code: a zod refinement on every event of a drain costs as much as the shape
  const parsed = eventShapeSchema.safeParse(raw);
  if (!parsed.success) return malformed(describeIssues(parsed.error.issues));
  const event = parsed.data;
  const violations = eventRuleViolations(event);
  if (violations.length > 0) return malformed(boundedDetail(violations.map((v) => `${v.path.join('.')}: ${v.message}`).join('; ')));
  const occurred = new Date(withZone(event.occurred_at));
  const year = occurred.getUTCFullYear();
  // toISOString() leaves four-digit years only inside 0000-9999; Postgres must accept what we send
  if (year < 1 || year > 9999) return malformed('occurred_at: year outside 0001-9999');
  const key = identityKey(event.prescription_identity);
  // normalisation (NFC, lower case) may lengthen the fields; the key is an index entry (54000 past ~2.7 kB)
  if (key.length * 3 > MAX_IDENTITY_KEY_BYTES && Buffer.byteLength(key, 'utf8') > MAX_IDENTITY_KEY_BYTES) {
    return malformed(`prescription_identity: identity key longer than ${MAX_IDENTITY_KEY_BYTES} bytes`);
  }
  return {
    ok: true,
    event,
    key,
    erx: normaliseErx(event.prescription_identity.erx_message_id),
    rank: statusRank(event.name),
    occurredAt: occurred.toISOString(),
    hold: versionHold(event.api_version),
  };
}

/** The hold of an event published under a version this build does not read (see SUPPORTED_API_VERSIONS). */
export function versionHold(apiVersion: string): { reason: 'unsupported_version'; detail: string } | null {
  if (isSupportedApiVersion(apiVersion)) return null;
  // the version is operator-chosen text, not PHI; bounded so a hostile value cannot bloat the row
  const shown = apiVersion.length > 40 ? `${apiVersion.slice(0, 40)}...` : apiVersion;
  return {
    reason: 'unsupported_version',
    detail: `api_version ${JSON.stringify(shown)} is not one this build reads (${SUPPORTED_API_VERSIONS.join(', ')})`,
  };
}
