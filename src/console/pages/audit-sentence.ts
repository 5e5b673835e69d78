// The audit trail in words (issue 34 §6): each row as a sentence a support person reads, and its
// details as labelled values: no raw JSON, no internal ids (the reveal's transaction id, backend
// pids). Identifiers, codes, counts and times only, as the audit trail holds them.

import type { AuditRow as StoreAuditRow } from '../../store-api/audit/audit-trail.js';

/** What a sentence is made of: the fields of an audit_trail row (the client's AuditRow) it reads. */
export type AuditRow = Pick<StoreAuditRow, 'actor' | 'on_behalf_of' | 'action' | 'feed' | 'subject' | 'detail'>;

/** Detail keys that are internal plumbing, never shown (a transaction id, a backend's pid). */
const INTERNAL = new Set(['xact', 'xid', 'txid', 'backend_pid', 'holder_pid', 'pid', 'test_stub']);

/** Labels of the detail keys; a key without one is shown with its underscores as spaces. */
const LABELS: Record<string, string> = {
  reason: 'Reason',
  finding_reason: 'Finding reason',
  subscription_id: 'Subscription',
  with_event_id: 'Closed with finding',
  dismiss_all: 'Dismiss all matching',
  external_id: 'External id',
  events_applied: 'Events applied',
  outbox_id: 'Outbox row',
  seen_count: 'Times seen',
  local_row: 'Local row',
  phase: 'Phase',
};

const text = (value: unknown): string => {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return value.map(text).join(', ');
  return Object.entries(value as Record<string, unknown>)
    .filter(([k]) => !INTERNAL.has(k))
    .map(([k, v]) => `${k.replaceAll('_', ' ')} ${text(v)}`)
    .join(', ');
};

/** The details of a row as [label, value] pairs, internal ids left out. Pure. */
export function auditDetails(detail: unknown, shownInSentence: readonly string[] = []): [string, string][] {
  if (detail === null || typeof detail !== 'object' || Array.isArray(detail)) return detail == null ? [] : [['Detail', text(detail)]];
  return Object.entries(detail as Record<string, unknown>)
    .filter(([k]) => !INTERNAL.has(k) && !shownInSentence.includes(k))
    .map(([k, v]) => [LABELS[k] ?? k.charAt(0).toUpperCase() + k.slice(1).replaceAll('_', ' '), text(v)]);
}

/** One audit row as a sentence and its remaining details. Pure. */
export function auditSentence(row: AuditRow): { sentence: string; details: [string, string][] } {
  const d = (row.detail !== null && typeof row.detail === 'object' ? row.detail : {}) as Record<string, unknown>;
  const who = row.on_behalf_of ? `${row.actor} (for ${row.on_behalf_of})` : row.actor;
  const inFeed = row.feed ? ` in feed ${row.feed}` : '';
  const subject = row.subject ?? '—';
  const s = (sentence: string, shown: string[] = []) => ({ sentence, details: auditDetails(row.detail, shown) });
  switch (row.action) {
    case 'quarantine.dismiss':
      return s(
        `${who} dismissed finding ${subject}${inFeed} as ${text(d.reason)}${d.dismiss_all === true ? ' (Dismiss all matching)' : d.with_event_id ? ` (the whole subscription, with finding ${text(d.with_event_id)})` : ''}.`,
        ['reason', 'dismiss_all', 'with_event_id'],
      );
    case 'quarantine.resolve': {
      // its `reason` is the finding's reason (a dismissal's `reason` is the dismissal code)
      const { reason, ...rest } = d;
      return {
        sentence: `${who} resolved finding ${subject}${inFeed} to prescription ${text(d.external_id)}, applying ${text(d.events_applied)} events.`,
        details: auditDetails({ ...(reason === undefined ? {} : { finding_reason: reason }), ...rest }, ['external_id', 'events_applied']),
      };
    }
    case 'quarantine.reveal_requested':
      // its role is the actor's own login (the sentence names it)
      return s(`${who} asked to reveal the identity held by finding ${subject}${inFeed}.`, ['role']);
    case 'quarantine.show':
      return s(`${who} was shown the identity held by finding ${subject}${inFeed}.`);
    case 'quarantine.expire':
      return s(`Finding ${subject}${inFeed} expired under the retention rules (${who}).`);
    case 'prescription.register':
      return s(`${who} registered prescription ${subject}${inFeed}.`);
    case 'prescription.import':
      return s(`${who} imported local prescriptions${inFeed}.`);
    case 'prescription.send':
    case 'outbox.send':
      return s(`${who} sent prescription ${subject}${inFeed} to the operator.`);
    case 'prescription.cancel':
    case 'outbox.cancel':
      return s(`${who} asked the operator to cancel prescription ${subject}${inFeed}.`);
    case 'checkpoint.reset':
      return s(`${who} reset the position of feed ${row.feed ?? subject}.`);
    case 'feed.resync':
      return s(`${who} resynchronised feed ${row.feed ?? subject}${d.phase ? ` (${text(d.phase)})` : ''}.`, ['phase']);
    case 'event.skip':
      return s(`${who} skipped event ${subject}${inFeed}.`);
    case 'rematch.run':
      return s(`${who} matched held events again${inFeed}.`);
    case 'purge.run':
    case 'audit.purge':
      return s(`${who} removed data past its retention${inFeed}.`);
    case 'role.grant':
      return s(`${who} granted role ${subject} its console and API rights${inFeed}.`);
    case 'subscriptions.migrate':
      return s(`${who} migrated the subscriptions of feed ${row.feed ?? subject}.`);
    case 'schema.reassign_owner':
      return s(`${who} gave the schema a new owner (${subject}).`);
    default:
      return s(`${who}: ${row.action.replaceAll('.', ' ').replaceAll('_', ' ')}${row.subject ? ` ${row.subject}` : ''}${inFeed}.`);
  }
}
