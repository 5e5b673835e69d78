import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultConfig, TransportFault } from './faults.js';
import type { Random } from './prng.js';
import { sendJson } from './http.js';

const HTML_HEADERS = { 'content-type': 'text/html; charset=utf-8' };

/**
 * Acts out a transport fault. `hang` deliberately does nothing: the socket stays
 * open until the client gives up or the sandbox closes.
 */
export function actOutTransportFault(
  fault: TransportFault,
  req: IncomingMessage,
  res: ServerResponse,
  config: FaultConfig,
  random: Random,
): void {
  switch (fault) {
    case 'drop':
      req.socket.destroy();
      return;
    case 'hang':
      return;
    case 'rate-limit':
      sendJson(res, 429, { error: 'rate limit exceeded (injected fault)' }, { 'retry-after': String(config.retryAfterSeconds) });
      return;
    case 'server-error': {
      // a gateway in front of the API answers in HTML, the API itself in JSON
      const pick = Math.floor(random() * 3);
      if (pick === 0) return sendJson(res, 500, { error: 'internal server error (injected fault)' });
      const status = pick === 1 ? 502 : 503;
      const headers = status === 503 ? { ...HTML_HEADERS, 'retry-after': String(config.retryAfterSeconds) } : HTML_HEADERS;
      res.writeHead(status, headers);
      res.end(
        `<html><head><title>${status}</title></head><body><h1>${status} ${status === 502 ? 'Bad Gateway' : 'Service Unavailable'}</h1></body></html>`,
      );
      return;
    }
  }
}
