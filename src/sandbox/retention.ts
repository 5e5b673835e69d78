import { z } from 'zod';

/**
 * What the operator answers for an iterator that points before the oldest retained event:
 * `error` a 400 with an `{error}` body, `jump` the page from the oldest retained event, as if
 * nothing were missing (the client is not told).
 */
export const EXPIRED_ITERATOR_MODES = ['error', 'jump'] as const;
export type ExpiredIteratorMode = (typeof EXPIRED_ITERATOR_MODES)[number];

/** Retention of the simulated feed: entries published more than `ms` ago (sandbox clock) are gone. */
export const retentionSchema = z.strictObject({
  ms: z.number().int().positive(),
  expiredIterator: z.enum(EXPIRED_ITERATOR_MODES),
});
export type Retention = z.infer<typeof retentionSchema>;

/** The 400 body's text for an expired iterator: it names the cause, so a client can tell it from other 400s. */
export const EXPIRED_ITERATOR_MESSAGE = 'iterator has expired: the events it points at are no longer retained';

export type StartDecision = { ok: true; start: number; jumped: boolean } | { ok: false; reason: 'invalid' | 'expired' };

/**
 * Where a GET /events page starts. Pure. `requested` is the decoded iterator (null: none given,
 * undefined: not decodable), `oldest` the position of the oldest retained entry, `length` the feed's.
 * No iterator starts at the oldest retained entry: a new consumer cannot have missed anything.
 */
export function decidePageStart(
  requested: number | null | undefined,
  oldest: number,
  length: number,
  mode: ExpiredIteratorMode,
): StartDecision {
  if (requested === undefined || (requested !== null && requested > length)) return { ok: false, reason: 'invalid' };
  if (requested === null) return { ok: true, start: oldest, jumped: false };
  if (requested >= oldest) return { ok: true, start: requested, jumped: false };
  return mode === 'error' ? { ok: false, reason: 'expired' } : { ok: true, start: oldest, jumped: true };
}
