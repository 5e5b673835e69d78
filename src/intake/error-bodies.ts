import { z } from 'zod';

/** 400/401/404 body. */
export const errorBodySchema = z.looseObject({ error: z.string() });
/** 422 body: `errors` keyed by field path (structure not fixed by the spec). */
export const validationErrorBodySchema = z.looseObject({ errors: z.record(z.string(), z.unknown()) });
