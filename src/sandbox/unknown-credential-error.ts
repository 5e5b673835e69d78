/** A store operation named a credential key the sandbox does not know. */
export class UnknownCredentialError extends Error {
  override readonly name = 'UnknownCredentialError';

  constructor(
    readonly key: string,
    options?: ErrorOptions,
  ) {
    super(`no sandbox credential with key ${key}`, options);
  }
}
