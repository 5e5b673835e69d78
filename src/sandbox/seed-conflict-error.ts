/** A bulk seed would reuse an external_id the credential already has. */
export class SeedConflictError extends Error {
  override readonly name = 'SeedConflictError';

  constructor(
    readonly externalId: string,
    options?: ErrorOptions,
  ) {
    super(`seed would duplicate external_id ${externalId}; use another prefix`, options);
  }
}
