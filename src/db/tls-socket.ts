import { terminalSafe } from '../lib/terminal-text.js';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { TlsConnectError } from './errors/tls-connect-error.js';
import { TlsSettingsError } from './errors/tls-settings-error.js';
import type { TlsSettings } from './tls.js';

/** PostgreSQL's SSLRequest message: length 8, code 80877103. */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);

/** Certificate errors that mean "not signed by a CA we trust": the fix is the CA setting. */
const UNTRUSTED_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
]);

/** The files a TLS connection presents or trusts, read once per client. */
export interface TlsFiles {
  ca: Buffer | undefined;
  cert: Buffer | undefined;
  key: Buffer | undefined;
}

/** Reads the files the settings name; a file that cannot be read fails naming its setting. */
export function readTlsFiles(settings: TlsSettings): TlsFiles {
  const read = (file: string | undefined, setting: string | undefined): Buffer | undefined => {
    if (file === undefined) return undefined;
    try {
      return readFileSync(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      // DATABASE_CA_FILE is a variable of its own; sslrootcert, sslcert and sslkey are parameters of the URL
      const where = setting !== undefined && /^[A-Z_]+$/.test(setting) ? setting : `${settings.variable}: its ${setting}`;
      const reason = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied: let the service user read it' : code;
      throw new TlsSettingsError(`${where}: cannot read ${terminalSafe(file)} (${reason})`, { cause: error });
    }
  };
  return {
    ca: read(settings.rootCertFile, settings.rootCertSetting),
    cert: read(settings.certFile, 'sslcert'),
    key: read(settings.keyFile, 'sslkey'),
  };
}

/**
 * A postgres.js `socket` option: connects, asks the server for TLS (SSLRequest) and completes the
 * handshake with exactly what the settings say, then hands postgres.js a ready socket. Failures
 * name the variable and the setting to change (postgres.js alone reports a bare OpenSSL code).
 */
export function tlsSocketFactory(
  settings: TlsSettings,
  files: TlsFiles,
  connectTimeoutMs: number,
): (options: { host: string[]; port: number[] }) => Promise<net.Socket> {
  return async ({ host, port }) => {
    const where = `${host[0]}:${port[0]}`;
    const plain = net.connect({ host: host[0] ?? settings.host, port: port[0] ?? 5432 });
    const timer = setTimeout(
      () => plain.destroy(new TlsConnectError(`${settings.variable}: connecting to ${where} timed out after ${connectTimeoutMs} ms`)),
      connectTimeoutMs,
    );
    try {
      await once(plain, 'connect');
      plain.write(SSL_REQUEST);
      const answer = await firstByte(plain);
      if (answer !== 'S') {
        // allow/prefer: go on in plaintext on the same socket, as libpq does
        if (settings.mode === 'allow' || settings.mode === 'prefer') return plain;
        plain.destroy();
        throw new TlsConnectError(
          `${settings.variable}: the server at ${where} does not accept TLS connections (sslmode=${settings.mode}): turn ssl on in the server, or say sslmode=disable in the URL to connect in plaintext`,
        );
      }
      const verify = settings.mode === 'verify-ca' || settings.mode === 'verify-full';
      const secure = tls.connect({
        socket: plain,
        // SNI takes names only: an address as servername is refused by RFC 6066
        servername: net.isIP(settings.host) ? undefined : settings.host,
        rejectUnauthorized: verify,
        ca: files.ca,
        cert: files.cert,
        key: files.key,
        passphrase: settings.keyPassword,
        // verify-ca trusts any name the CA signed; verify-full checks the URL's host (names and addresses)
        checkServerIdentity: (_name, cert) => (settings.mode === 'verify-full' ? tls.checkServerIdentity(settings.host, cert) : undefined),
      });
      try {
        await once(secure, 'secureConnect');
      } catch (error) {
        secure.destroy();
        throw describeHandshakeError(settings, where, error);
      }
      return secure;
    } catch (error) {
      plain.destroy();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  };
}

function describeHandshakeError(settings: TlsSettings, where: string, error: unknown): TlsConnectError {
  const code = (error as { code?: string }).code ?? '';
  const reason = error instanceof Error ? error.message : String(error);
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return new TlsConnectError(
      `${settings.variable}: the server's certificate does not name ${settings.host} (sslmode=verify-full checks the host name): ${reason}. Connect by a name the certificate lists, or use sslmode=verify-ca`,
      { cause: error },
    );
  }
  if (UNTRUSTED_CODES.has(code)) {
    const trusted = settings.rootCertFile
      ? `the CA in ${settings.rootCertSetting}=${settings.rootCertFile}`
      : "the system's CAs (no sslrootcert or DATABASE_CA_FILE given)";
    return new TlsConnectError(
      `${settings.variable}: the server's certificate at ${where} is not signed by ${trusted} (sslmode=${settings.mode}, ${code})`,
      { cause: error },
    );
  }
  return new TlsConnectError(`${settings.variable}: the TLS handshake with ${where} failed (sslmode=${settings.mode}): ${code || reason}`, {
    cause: error,
  });
}

/** Resolves on `event`, rejects on the socket's error or close. */
function once(socket: net.Socket, event: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      socket.off(event, onEvent);
      socket.off('error', onError);
      socket.off('close', onClose);
    };
    const onEvent = () => {
      cleanup();
      resolve();
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onClose = () => {
      cleanup();
      reject(new Error('the connection closed during the TLS negotiation'));
    };
    socket.on(event, onEvent);
    socket.on('error', onError);
    socket.on('close', onClose);
  });
}

/** The server's one-byte answer to SSLRequest ('S' or 'N'). */
function firstByte(socket: net.Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      cleanup();
      // nothing may follow the answer before the handshake: bytes injected there would be read as if
      // they came over TLS (CVE-2021-23222)
      if (chunk.length > 1) reject(new Error('the server sent unexpected data after its answer to the TLS request'));
      else resolve(String.fromCharCode(chunk[0] ?? 0));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onClose = () => {
      cleanup();
      reject(new Error('the server closed the connection before answering the TLS request'));
    };
    const cleanup = () => {
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', onClose);
    };
    socket.on('data', onData);
    socket.on('error', onError);
    socket.on('close', onClose);
  });
}
