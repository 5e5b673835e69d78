import { z } from 'zod';
import { prescriptionIdentitySchema } from './identity.js';

/** The event names the 2024-12-10 spec lists, in lifecycle order. */
export const KNOWN_EVENT_NAMES = ['accepted', 'rejected', 'ordered', 'dispensed', 'delivered'] as const;
export type KnownEventName = (typeof KNOWN_EVENT_NAMES)[number];

export function isKnownEventName(name: string): name is KnownEventName {
  return (KNOWN_EVENT_NAMES as readonly string[]).includes(name);
}

/**
 * A published event. `name` is any non-empty string: the operator may add enum
 * values, and an unknown name is kept in history rather than failing the parse.
 * `occurred_at` must be a parseable timestamp because status ordering uses it.
 */
export const eventSchema = z.looseObject({
  id: z.string().min(1),
  name: z.string().min(1),
  prescription_identity: prescriptionIdentitySchema,
  pharmacy_npi: z.string(),
  occurred_at: z.string().refine((s) => !Number.isNaN(Date.parse(s)), { message: 'must be a timestamp' }),
  api_version: z.string(),
  subscription_id: z.string(),
  // required by the spec ("an empty object when the event type has none"); z.unknown() alone would allow a missing key
  payload: z.custom<unknown>((v) => v !== undefined, { message: 'is required' }),
});
export type IntakeEvent = z.infer<typeof eventSchema>;

export const collectionMetaSchema = z.looseObject({
  limit: z.number().int(),
  iterator: z.string(),
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
