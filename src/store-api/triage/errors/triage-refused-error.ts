/**
 * A triage function (resolve_quarantined, dismiss_quarantined, show_quarantined) refused its
 * arguments and wrote nothing: a missing or malformed argument, an unknown finding or prescription,
 * a finding already closed. The message is the function's own (it names the argument, never a value).
 */
export class TriageRefusedError extends Error {
  override readonly name = 'TriageRefusedError';

  constructor(
    message: string,
    /** the SQLSTATE the function raised: 23502, 22023, P0002 or 55000 */
    readonly sqlState: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
