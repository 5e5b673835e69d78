import { z } from 'zod';
import { prescriptionIdentitySchema } from './identity.js';
import {
  MAX_ERX_MESSAGE_ID_LENGTH,
  MAX_EVENT_ID_LENGTH,
  MAX_EVENT_NAME_LENGTH,
  MAX_IDENTITY_FIELD_LENGTH,
  MAX_ITERATOR_LENGTH,
  MAX_SHORT_TEXT_LENGTH,
  MAX_SUBSCRIPTION_ID_LENGTH,
} from './limits.js';
import { isStorableText, STORABLE_TEXT_RULE } from './storable-text.js';

/** The event names the 2024-12-10 spec lists, in lifecycle order. */
export const KNOWN_EVENT_NAMES = ['accepted', 'rejected', 'ordered', 'dispensed', 'delivered'] as const;
export type KnownEventName = (typeof KNOWN_EVENT_NAMES)[number];

export function isKnownEventName(name: string): name is KnownEventName {
  return (KNOWN_EVENT_NAMES as readonly string[]).includes(name);
}

// the rule is named, never the value (an identity field is PHI); see limits.ts for each number
const bounded = (max: number) => z.string().max(max, { message: `longer than ${max} characters` });

/** PrescriptionIdentity inside an event: every field bounded, since each is stored and the key is indexed. */
const eventIdentitySchema = prescriptionIdentitySchema.extend({
  patient_first_name: bounded(MAX_IDENTITY_FIELD_LENGTH),
  patient_last_name: bounded(MAX_IDENTITY_FIELD_LENGTH),
  patient_state: bounded(MAX_IDENTITY_FIELD_LENGTH),
  patient_dob: bounded(MAX_IDENTITY_FIELD_LENGTH),
  erx_message_id: bounded(MAX_ERX_MESSAGE_ID_LENGTH).nullish(),
  prescriber_npi: bounded(MAX_IDENTITY_FIELD_LENGTH),
  written_date: bounded(MAX_IDENTITY_FIELD_LENGTH),
  drug_ndc: bounded(MAX_IDENTITY_FIELD_LENGTH),
});

/**
 * A published event. `name` is any non-empty string: the operator may add enum
 * values, and an unknown name is kept in history rather than failing the parse.
 * `occurred_at` must be a parseable timestamp because status ordering uses it.
 * Every string is bounded (limits.ts) before it can reach an index or a query.
 */
export const eventSchema = z.looseObject({
  id: z
    .string()
    .min(1)
    .max(MAX_EVENT_ID_LENGTH, { message: `longer than ${MAX_EVENT_ID_LENGTH} characters` }),
  name: z
    .string()
    .min(1)
    .max(MAX_EVENT_NAME_LENGTH, { message: `longer than ${MAX_EVENT_NAME_LENGTH} characters` }),
  prescription_identity: eventIdentitySchema,
  pharmacy_npi: bounded(MAX_SUBSCRIPTION_ID_LENGTH),
  // bounded before Date.parse reads it
  occurred_at: bounded(MAX_SHORT_TEXT_LENGTH).refine((s) => !Number.isNaN(Date.parse(s)), { message: 'must be a timestamp' }),
  api_version: bounded(MAX_SHORT_TEXT_LENGTH),
  subscription_id: bounded(MAX_SUBSCRIPTION_ID_LENGTH),
  // required by the spec ("an empty object when the event type has none"); z.unknown() alone would allow a missing key
  payload: z.custom<unknown>((v) => v !== undefined, { message: 'is required' }),
});
export type IntakeEvent = z.infer<typeof eventSchema>;

export const collectionMetaSchema = z.looseObject({
  limit: z.number().int(),
  // stored as the checkpoint and sent back in a query string: bounded, and text Postgres can store
  iterator: bounded(MAX_ITERATOR_LENGTH).refine(isStorableText, { message: STORABLE_TEXT_RULE }),
  done: z.boolean(),
});
export type CollectionMeta = z.infer<typeof collectionMetaSchema>;

/**
 * GET /events body. Events stay `unknown` here: each is validated on its own so
 * one malformed event is quarantined instead of failing the whole page.
 */
export const eventPageSchema = z.looseObject({
  events: z.array(z.unknown()),
  meta: collectionMetaSchema,
});
export type EventPage = z.infer<typeof eventPageSchema>;

export const eventEnvelopeSchema = z.looseObject({ event: eventSchema });
