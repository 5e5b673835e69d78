/** A postgres:// URL's TLS settings cannot be honoured (unknown sslmode, half a client certificate, an unreadable file). */
export class TlsSettingsError extends Error {
  override readonly name = 'TlsSettingsError';
}
