import { OPERATOR_PHARMACY_NPI, type PrescriptionIdentity } from '../intake/index.js';

/** What an event needs from the subscription it is published for; `eventTail` is serialized once per subscription. */
export interface EventSubscription {
  readonly id: string;
  readonly apiVersion: string;
  readonly eventTail: string;
}

/** The parts of a published event apart from its id. */
export interface EventParts {
  name: string;
  occurredAtIso: string;
  /** serialized once per prescription (see serializeIdentity) and shared by all its events */
  identityJson: string;
  subscription: EventSubscription;
}

/** Serializes an identity once per prescription; events embed the string. */
export function serializeIdentity(identity: PrescriptionIdentity): string {
  return JSON.stringify({
    patient_first_name: identity.patient_first_name,
    patient_last_name: identity.patient_last_name,
    patient_state: identity.patient_state,
    patient_dob: identity.patient_dob,
    erx_message_id: identity.erx_message_id ?? null,
    prescriber_npi: identity.prescriber_npi,
    written_date: identity.written_date,
    drug_ndc: identity.drug_ndc,
  });
}

// Array.join yields a flat string; template literals and `+` yield ropes of
// 32-byte nodes, which for a million stored events costs ~110 bytes per event.
const HEAD_END = `","pharmacy_npi":"${OPERATOR_PHARMACY_NPI}","prescription_identity":`;

/** The closing part of every event published for a subscription (stored once per subscription). */
export function eventTail(apiVersion: string, subscriptionId: string): string {
  return [',"api_version":"', apiVersion, '","subscription_id":"', subscriptionId, '","payload":{}}'].join('');
}

/**
 * One feed entry as JSON text: a flat per-event head, then the identity and
 * subscription tail strings shared with the prescription's other events (the
 * result is a two-node rope over them), so a million stored events cost ~230
 * bytes each and a page is answered by joining entries. Ids, names and versions
 * are sandbox-generated and need no escaping. `id` stays the first key (Feed.entryById).
 */
export function serializeEvent(id: string, parts: EventParts): string {
  const head = ['{"id":"', id, '","name":"', parts.name, '","occurred_at":"', parts.occurredAtIso, HEAD_END].join('');
  return head + parts.identityJson + parts.subscription.eventTail;
}

export const MALFORMED_VARIANTS = [
  'missing-id',
  'missing-name',
  'missing-identity',
  'wrong-types',
  'bad-occurred-at',
  'not-an-object',
] as const;
export type MalformedVariant = (typeof MALFORMED_VARIANTS)[number];

/** A feed entry that violates the event shape in one specific way (hostile-feed fault). */
export function serializeMalformedEvent(id: string, parts: EventParts, variant: MalformedVariant): string {
  const event: Record<string, unknown> = {
    id,
    name: parts.name,
    prescription_identity: JSON.parse(parts.identityJson) as unknown,
    pharmacy_npi: OPERATOR_PHARMACY_NPI,
    occurred_at: parts.occurredAtIso,
    api_version: parts.subscription.apiVersion,
    subscription_id: parts.subscription.id,
    payload: {},
  };
  switch (variant) {
    case 'missing-id':
      delete event.id;
      break;
    case 'missing-name':
      delete event.name;
      break;
    case 'missing-identity':
      delete event.prescription_identity;
      break;
    case 'wrong-types':
      event.name = 42;
      event.subscription_id = { id: parts.subscription.id };
      event.prescription_identity = 'not an identity';
      break;
    case 'bad-occurred-at':
      event.occurred_at = 'yesterday-ish';
      break;
    case 'not-an-object':
      return JSON.stringify(`event ${id} ${parts.name}`);
  }
  return JSON.stringify(event);
}
