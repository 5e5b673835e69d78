import { z } from 'zod';
import { prescriptionIdentityRequestSchema, prescriptionIdentitySchema } from './identity.js';

/** POST /subscriptions body. */
export const createSubscriptionBodySchema = z.object({
  subscription: z.object({
    backfill_previous_events: z.boolean().nullish(),
    prescription_identity: prescriptionIdentityRequestSchema,
  }),
});
export type CreateSubscriptionBody = z.input<typeof createSubscriptionBodySchema>;

export const subscriptionSchema = z.looseObject({
  id: z.string().min(1),
  backfill_previous_events: z.boolean().nullable(),
  api_version: z.string(),
  cancelled_at: z.string().nullish(),
  prescription_identity: prescriptionIdentitySchema,
});
export type Subscription = z.infer<typeof subscriptionSchema>;

export const subscriptionEnvelopeSchema = z.looseObject({ subscription: subscriptionSchema });
