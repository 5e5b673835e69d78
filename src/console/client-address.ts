import { type BlockList, isIP } from 'node:net';
import { isTrustedPeer } from './sso/trusted-proxies.js';

/** The longest X-Forwarded-For read (a proxy chain, not a list of every address on the internet). */
const XFF_MAX_CHARS = 1024;

/** An address as written, with IPv4-mapped IPv6 (::ffff:a.b.c.d) unwrapped; undefined when not an IP. Pure. */
export function plainAddress(raw: string | undefined): string | undefined {
  const value = raw?.trim().replace(/^\[(.*)\]$/, '$1');
  if (!value) return undefined;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(value);
  const address = mapped?.[1] ?? value;
  return isIP(address) === 0 ? undefined : address;
}

/**
 * The client's address: the socket's peer, unless the peer is a trusted proxy (CONSOLE_TRUSTED_PROXIES),
 * then the right-most X-Forwarded-For entry that is not itself a trusted proxy. An untrusted peer's
 * header is never read (anyone can write one). A malformed entry stops the walk at the proxy that
 * sent it, so a forged left part cannot choose the key. Pure.
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | undefined, proxies: BlockList | undefined): string {
  const socket = plainAddress(peer) ?? 'unknown';
  if (!proxies || !forwardedFor || !isTrustedPeer(proxies, socket)) return socket;
  const hops = forwardedFor.slice(0, XFF_MAX_CHARS).split(',').reverse();
  let client = socket;
  for (const hop of hops) {
    const address = plainAddress(hop);
    if (!address) return client;
    client = address;
    if (!isTrustedPeer(proxies, address)) return address;
  }
  return client;
}

/** The rate limit's key of an address: IPv4 as is, IPv6 by its /64 (one host's whole allotment). Pure. */
export function addressKey(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
