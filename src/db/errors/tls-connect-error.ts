/**
 * The TLS handshake with the database failed or was refused: the server does not offer TLS, its
 * certificate is not signed by the configured CA, or does not name the host. The message names
 * the variable and the setting to look at; the TLS error is the cause.
 */
export class TlsConnectError extends Error {
  override readonly name = 'TlsConnectError';
  readonly code = 'TLS_CONNECT';
}
