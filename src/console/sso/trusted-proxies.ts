import { BlockList, isIP } from 'node:net';

/** The widest range CONSOLE_TRUSTED_PROXIES accepts: a /16 of IPv4 (a cluster's pod network), a /48 of IPv6. */
export const WIDEST_PROXY_PREFIX = { ipv4: 16, ipv6: 48 } as const;

/**
 * CONSOLE_TRUSTED_PROXIES: a comma list of IPv4/IPv6 addresses and CIDRs, the only TCP peers whose
 * identity header and X-Forwarded-For are believed. Parsed into a BlockList; any bad entry throws
 * naming the setting, and so does a range wider than WIDEST_PROXY_PREFIX (0.0.0.0/0 or ::/0 would
 * let every client claim any identity). Pure.
 */
export function parseTrustedProxies(value: string, variable = 'CONSOLE_TRUSTED_PROXIES'): BlockList {
  const entries = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (entries.length === 0) throw new Error(`${variable}: must list at least one IP address or CIDR`);
  if (entries.length > 64) throw new Error(`${variable}: at most 64 entries`);
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', bits, extra] = entry.split('/');
    const family = isIP(address);
    if (family === 0 || extra !== undefined) throw new Error(`${variable}: "${entry.slice(0, 64)}" is not an IP address or CIDR`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) {
      list.addAddress(address, type);
      continue;
    }
    const prefix = /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
    if (!(prefix >= 0 && prefix <= (family === 4 ? 32 : 128)))
      throw new Error(`${variable}: "${entry.slice(0, 64)}" has a bad prefix length`);
    // an IPv4-mapped range (::ffff:a.b.c.d/n) is an IPv4 range in disguise: the IPv4 bound, 96 bits on
    const mapped = type === 'ipv6' && /^::ffff:/i.test(address);
    const widest = mapped ? 96 + WIDEST_PROXY_PREFIX.ipv4 : WIDEST_PROXY_PREFIX[type];
    if (prefix < widest) {
      throw new Error(
        `${variable}: "${entry.slice(0, 64)}" is wider than /${mapped ? WIDEST_PROXY_PREFIX.ipv4 : widest}: list the proxies' own addresses or their subnet (at most a /${WIDEST_PROXY_PREFIX.ipv4} of IPv4, a /${WIDEST_PROXY_PREFIX.ipv6} of IPv6)`,
      );
    }
    list.addSubnet(address, prefix, type);
  }
  return list;
}

/** Whether a socket's peer address is a trusted proxy; IPv4-mapped IPv6 (::ffff:a.b.c.d) counts as IPv4. Pure. */
export function isTrustedPeer(list: BlockList, peer: string | undefined): boolean {
  if (!peer) return false;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(peer);
  const address = mapped?.[1] ?? peer;
  const family = isIP(address);
  if (family === 0) return false;
  return list.check(address, family === 4 ? 'ipv4' : 'ipv6');
}
