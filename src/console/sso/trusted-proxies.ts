import { BlockList, isIP } from 'node:net';

/**
 * CONSOLE_TRUSTED_PROXIES: a comma list of IPv4/IPv6 addresses and CIDRs, the only TCP peers whose
 * identity header is believed. Parsed into a BlockList; any bad entry throws naming the setting. Pure.
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
