import { BlockList, isIP } from 'node:net';

/**
 * Which addresses a callback may never reach (the SSRF guard's table, docs/callbacks.md): a callback URL is the
 * owner's to choose, so without this a URL could make our worker POST into our own network (Redis, Temporal, the
 * cloud's metadata service). Checked against IANA's IPv4 and IPv6 special-purpose address registries. Pure: no lookups
 * here (src/callbacks/guard.ts resolves the host).
 */

const blocked = new BlockList();
// IPv4
blocked.addSubnet('0.0.0.0', 8, 'ipv4'); // "this network", including the unspecified 0.0.0.0
blocked.addSubnet('10.0.0.0', 8, 'ipv4'); // RFC 1918
blocked.addSubnet('100.64.0.0', 10, 'ipv4'); // CGNAT (also Alibaba's metadata 100.100.100.200)
blocked.addSubnet('127.0.0.0', 8, 'ipv4'); // loopback
blocked.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local (AWS, GCP, Azure metadata 169.254.169.254)
blocked.addSubnet('172.16.0.0', 12, 'ipv4'); // RFC 1918
blocked.addSubnet('192.0.0.0', 24, 'ipv4'); // IETF protocol assignments (Oracle's metadata 192.0.0.192)
blocked.addSubnet('192.0.2.0', 24, 'ipv4'); // documentation
blocked.addSubnet('192.88.99.0', 24, 'ipv4'); // 6to4 relay anycast (deprecated, RFC 7526): a relay into anywhere
blocked.addSubnet('192.168.0.0', 16, 'ipv4'); // RFC 1918
blocked.addSubnet('198.18.0.0', 15, 'ipv4'); // benchmarking
blocked.addSubnet('198.51.100.0', 24, 'ipv4'); // documentation
blocked.addSubnet('203.0.113.0', 24, 'ipv4'); // documentation
blocked.addSubnet('224.0.0.0', 4, 'ipv4'); // multicast
blocked.addSubnet('240.0.0.0', 4, 'ipv4'); // reserved, and the broadcast 255.255.255.255
blocked.addAddress('168.63.129.16', 'ipv4'); // Azure's wire server: public-looking, answers only inside Azure

/**
 * IPv6 is judged the other way round: only global unicast (2000::/3, the one block IANA allocates to the internet)
 * may be reached, and within it not the special-purpose blocks below. Everything outside 2000::/3 is loopback,
 * unspecified, link-local, unique local, multicast, discard-only (100::/64), the dummy prefix (100:0:0:1::/64),
 * local-use NAT64 (64:ff9b:1::/48), segment-routing SIDs (5f00::/16), a deprecated IPv4 embedding or unallocated:
 * an allow-list cannot miss the next such block the way a block list can.
 */
const globalUnicast = new BlockList();
globalUnicast.addSubnet('2000::', 3, 'ipv6');
const blockedGlobal = new BlockList();
// IETF protocol assignments: Teredo 2001::/32 (tunnels to an IPv4 address it hides), benchmarking 2001:2::/48,
// ORCHID 2001:10::/28 and ORCHIDv2 2001:20::/28, and a few anycast services no webhook receiver lives on.
blockedGlobal.addSubnet('2001::', 23, 'ipv6');
blockedGlobal.addSubnet('2001:db8::', 32, 'ipv6'); // documentation
blockedGlobal.addSubnet('2002::', 16, 'ipv6'); // 6to4 (deprecated, RFC 7526): routed to the IPv4 address it embeds, via any relay
blockedGlobal.addSubnet('3fff::', 20, 'ipv6'); // documentation (RFC 9637)

const REFUSED = 'private or reserved address';

/** Why an address is refused, or undefined when a callback may go there. Anything that is not an address is refused. */
export function forbiddenAddress(address: string): string | undefined {
  // A zone index (fe80::1%eth0) only exists for link-local and interface-scoped addresses.
  if (address.includes('%')) return 'scoped address';
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4') ? REFUSED : undefined;
  if (family !== 6) return 'not an IP address';
  const words = ipv6Words(address);
  if (!words) return 'not an IP address';
  const v4 = embeddedIPv4(words);
  if (v4 !== undefined) return forbiddenAddress(v4);
  if (!globalUnicast.check(address, 'ipv6') || blockedGlobal.check(address, 'ipv6')) return REFUSED;
  return undefined;
}

/**
 * The IPv4 address an IPv6 one carries and is routed to, for the two forms still in use: IPv4-mapped
 * (::ffff:a.b.c.d, what a dual-stack socket turns into a connection to a.b.c.d) and the well-known NAT64 prefix
 * (64:ff9b::/96, what DNS64 answers on an IPv6-only network). `::ffff:127.0.0.1` reaches 127.0.0.1, so it must be
 * judged as that. The other embeddings (IPv4-compatible, IPv4-unavailableOnBackpressure, local-use NAT64, 6to4, Teredo) are
 * deprecated or local and refused whatever they carry.
 */
export function embeddedIPv4(words: number[]): string | undefined {
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zeros = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  if (zeros(0, 5) && words[5] === 0xffff) return v4(words[6]!, words[7]!);
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return v4(words[6]!, words[7]!);
  return undefined;
}

/** The eight 16-bit words of an IPv6 address (with or without an IPv4 tail); undefined when it is not one. */
export function ipv6Words(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.toLowerCase();
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = rest === undefined || rest === '' ? [] : rest.split(':');
  const missing = 8 - left.length - right.length;
  const all = rest === undefined ? left : [...left, ...Array<string>(missing).fill('0'), ...right];
  return all.length === 8 ? all.map((w) => parseInt(w, 16)) : undefined;
}
