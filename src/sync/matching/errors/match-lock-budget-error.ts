/**
 * One item (a prescription of a registration, an identity key of a rematch) exceeded the match-lock
 * statement budget alone, after its batch was halved down to it: the batches before it committed,
 * nothing of it did. The message names the item by identifier (external_id, held event ids), never PHI.
 */
export class MatchLockBudgetError extends Error {
  override readonly name = 'MatchLockBudgetError';

  constructor(
    /** the item, by identifier */
    readonly item: string,
    readonly budgetMs: number,
    options?: ErrorOptions,
  ) {
    super(
      `${item} alone exceeded the ${budgetMs} ms statement budget of a batch holding the match lock; ` +
        'the batches before it committed. Look for a slow plan (EXPLAIN, docs/performance.md) or a lock on its rows, then run it again',
      options,
    );
  }
}
