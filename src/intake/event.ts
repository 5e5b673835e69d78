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

// Every string of an event is bounded (limits.ts) before it can reach an index, a query or Date.parse. The
// bounds are checked in ONE pass once the shape is right, not as a zod check per field: eleven checks on every
// event of a drain cost about as much again as the whole shape (measured: safeParse 0.21 ms per 250-event page
// without bounds, 0.40 with per-field .max(), ~0.24 with this one pass). The rule is named, never the value.
const EVENT_STRING_BOUNDS: ReadonlyArray<readonly [field: string, max: number]> = [
  ['id', MAX_EVENT_ID_LENGTH],
  ['name', MAX_EVENT_NAME_LENGTH],
  ['pharmacy_npi', MAX_SUBSCRIPTION_ID_LENGTH],
  ['occurred_at', MAX_SHORT_TEXT_LENGTH],
  ['api_version', MAX_SHORT_TEXT_LENGTH],
  ['subscription_id', MAX_SUBSCRIPTION_ID_LENGTH],
];

/** PrescriptionIdentity inside an event: every field bounded, since each is stored and the key is indexed. */
const IDENTITY_STRING_BOUNDS: ReadonlyArray<readonly [field: string, max: number]> = [
  ['patient_first_name', MAX_IDENTITY_FIELD_LENGTH],
  ['patient_last_name', MAX_IDENTITY_FIELD_LENGTH],
  ['patient_state', MAX_IDENTITY_FIELD_LENGTH],
  ['patient_dob', MAX_IDENTITY_FIELD_LENGTH],
  ['erx_message_id', MAX_ERX_MESSAGE_ID_LENGTH],
  ['prescriber_npi', MAX_IDENTITY_FIELD_LENGTH],
  ['written_date', MAX_IDENTITY_FIELD_LENGTH],
  ['drug_ndc', MAX_IDENTITY_FIELD_LENGTH],
];

const tooLong = (max: number) => `longer than ${max} characters`;

/** A rule an event breaks, as a field path and the rule (never the value). */
export interface EventRuleViolation {
  path: string[];
  message: string;
}

/**
 * What the shape alone cannot say about a well-typed event: a string over its bound, an `occurred_at`
 * that is no timestamp (read by Date.parse only once bounded). Empty when the event keeps every rule.
 */
export function eventRuleViolations(event: IntakeEvent): EventRuleViolation[] {
  const violations: EventRuleViolation[] = [];
  const fields = event as Record<string, unknown>;
  for (const [field, max] of EVENT_STRING_BOUNDS) {
    const value = fields[field];
    if (typeof value === 'string' && value.length > max) violations.push({ path: [field], message: tooLong(max) });
  }
  const identity = event.prescription_identity as Record<string, unknown>;
  for (const [field, max] of IDENTITY_STRING_BOUNDS) {
    const value = identity[field];
    if (typeof value === 'string' && value.length > max) violations.push({ path: ['prescription_identity', field], message: tooLong(max) });
  }
  if (event.occurred_at.length <= MAX_SHORT_TEXT_LENGTH && Number.isNaN(Date.parse(event.occurred_at))) {
    violations.push({ path: ['occurred_at'], message: 'must be a timestamp' });
  }
  return violations;
}

/**
 * A published event's shape: the type of every field, no bound. `name` is any non-empty string: the
 * operator may add enum values, and an unknown name is kept in history rather than failing the parse.
 * The page apply checks eventRuleViolations() after it; anything else parses with eventSchema.
 */
export const eventShapeSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string().min(1),
  prescription_identity: prescriptionIdentitySchema,
  pharmacy_npi: z.string(),
  occurred_at: z.string(),
  api_version: z.string(),
  subscription_id: z.string(),
  // required by the spec ("an empty object when the event type has none"); z.unknown() alone would allow a missing key
  payload: z.custom<unknown>((v) => v !== undefined, { message: 'is required' }),
});

/**
 * A published event: its shape plus the rules (eventRuleViolations). `occurred_at` must be a parseable
 * timestamp because status ordering uses it; every string is bounded (limits.ts) before it can reach an
 * index or a query. The refinement runs only once every field has its type.
 */
export const eventSchema = eventShapeSchema.superRefine((event, ctx) => {
  for (const { path, message } of eventRuleViolations(event)) ctx.addIssue({ code: 'custom', path, message });
});
export type IntakeEvent = z.infer<typeof eventShapeSchema>;

export const collectionMetaSchema = z.looseObject({
  limit: z.number().int(),
  // stored as the checkpoint and sent back in a query string: bounded, and text Postgres can store
  iterator: z
    .string()
    .max(MAX_ITERATOR_LENGTH, { message: tooLong(MAX_ITERATOR_LENGTH) })
    .refine(isStorableText, { message: STORABLE_TEXT_RULE }),
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
