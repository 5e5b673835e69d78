/** `subscriptions migrate` was asked for something it must not do; nothing was written or sent. */
export class MigrationArgumentError extends Error {
  override readonly name = 'MigrationArgumentError';
}
