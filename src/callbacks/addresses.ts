import { BlockList, isIP } from 'node:net';

/**
 * Which addresses a callback may never reach (the SSRF guard's table, docs/callbacks.md): a callback URL is the
 * owner's to choose, so without this a URL could make our worker POST into our own network (Redis, Temporal, the
 * cloud's metadata service). Pure: no lookups here (src/callbacks/guard.ts resolves the host).
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
blocked.addSubnet('192.168.0.0', 16, 'ipv4'); // RFC 1918
blocked.addSubnet('198.18.0.0', 15, 'ipv4'); // benchmarking
blocked.addSubnet('198.51.100.0', 24, 'ipv4'); // documentation
blocked.addSubnet('203.0.113.0', 24, 'ipv4'); // documentation
blocked.addSubnet('224.0.0.0', 4, 'ipv4'); // multicast
blocked.addSubnet('240.0.0.0', 4, 'ipv4'); // reserved, and the broadcast 255.255.255.255
blocked.addAddress('168.63.129.16', 'ipv4'); // Azure's wire server: public-looking, answers only inside Azure
// IPv6 (addresses embedding an IPv4 one are judged by it: see embeddedIPv4)
blocked.addAddress('::', 'ipv6'); // unspecified
blocked.addAddress('::1', 'ipv6'); // loopback
blocked.addSubnet('100::', 64, 'ipv6'); // discard-only
blocked.addSubnet('2001:db8::', 32, 'ipv6'); // documentation
blocked.addSubnet('fc00::', 7, 'ipv6'); // unique local (ULA), including AWS's metadata fd00:ec2::254
blocked.addSubnet('fe80::', 10, 'ipv6'); // link-local
blocked.addSubnet('fec0::', 10, 'ipv6'); // site-local (deprecated, still routed by some)
blocked.addSubnet('ff00::', 8, 'ipv6'); // multicast

/** Why an address is refused, or undefined when a callback may go there. Anything that is not an address is refused. */
export function forbiddenAddress(address: string): string | undefined {
  // A zone index (fe80::1%eth0) only exists for link-local and interface-scoped addresses.
  if (address.includes('%')) return 'scoped address';
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4') ? 'private or reserved address' : undefined;
  if (family !== 6) return 'not an IP address';
  const words = ipv6Words(address);
  if (!words) return 'not an IP address';
  const v4 = embeddedIPv4(words);
  if (v4 !== undefined) return forbiddenAddress(v4);
  return blocked.check(address, 'ipv6') ? 'private or reserved address' : undefined;
}

/**
 * The IPv4 address an IPv6 one carries and is routed to: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d),
 * IPv4-translated (::ffff:0:a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002:AABB:CCDD::). `::ffff:127.0.0.1` reaches
 * 127.0.0.1 on a dual-stack socket, so it must be judged as that.
 */
export function embeddedIPv4(words: number[]): string | undefined {
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zeros = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  if (zeros(0, 5) && words[5] === 0xffff) return v4(words[6]!, words[7]!);
  if (zeros(0, 4) && words[4] === 0xffff && words[5] === 0) return v4(words[6]!, words[7]!);
  // ::a.b.c.d, but not :: and ::1 themselves (the block list judges those).
  if (zeros(0, 6) && (words[6] !== 0 || words[7]! > 1)) return v4(words[6]!, words[7]!);
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return v4(words[6]!, words[7]!);
  if (words[0] === 0x2002) return v4(words[1]!, words[2]!);
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
