import { embeddedIPv4, forbiddenAddress, ipv6Words } from '../../src/callbacks/addresses';
import { CallbackRefused, checkCallbackUrl, resolveCallbackTarget, type GuardSettings, type Resolve } from '../../src/callbacks/guard';
import { parseAllowedOrigin } from '../../src/callbacks/origins';

const settings: GuardSettings = { allowedOrigins: [], allowHttp: false, maxUrlLength: 512 };
const allowing = (...origins: string[]): GuardSettings => ({ ...settings, allowHttp: true, allowedOrigins: origins.map(parseAllowedOrigin) });

describe('forbiddenAddress: the SSRF table', () => {
  const refused: [string, string][] = [
    ['127.0.0.1', 'IPv4 loopback'],
    ['127.255.255.254', 'IPv4 loopback, end of the range'],
    ['10.0.0.1', 'RFC 1918 10/8'],
    ['172.16.0.1', 'RFC 1918 172.16/12, start'],
    ['172.31.255.255', 'RFC 1918 172.16/12, end'],
    ['192.168.1.1', 'RFC 1918 192.168/16'],
    ['169.254.169.254', 'link-local: the cloud metadata service'],
    ['169.254.0.1', 'link-local'],
    ['100.64.0.1', 'CGNAT'],
    ['100.100.100.200', "CGNAT: Alibaba's metadata"],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', '"this network"'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast (SSDP)'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.192', "IETF assignments: Oracle's metadata"],
    ['168.63.129.16', "Azure's wire server"],
    ['198.18.0.1', 'benchmarking'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['fe80::1', 'IPv6 link-local'],
    ['fe80::1%eth0', 'IPv6 link-local with a zone'],
    ['fc00::1', 'ULA fc00::/7'],
    ['fd12:3456::1', 'ULA fd00::/8'],
    ['fd00:ec2::254', "AWS's IPv6 metadata"],
    ['ff02::1', 'IPv6 multicast'],
    ['fec0::1', 'site-local'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback in hex'],
    ['::ffff:10.0.0.1', 'IPv4-mapped RFC 1918'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
    ['::ffff:0:192.168.0.1', 'IPv4-unavailableOnBackpressure RFC 1918'],
    ['::127.0.0.1', 'IPv4-compatible loopback'],
    ['64:ff9b::a00:1', 'NAT64 of 10.0.0.1'],
    ['2002:a9fe:a9fe::1', '6to4 of 169.254.169.254'],
    ['not-an-address', 'a name, not an address'],
    ['192.88.99.1', '6to4 relay anycast (deprecated)'],
  ];
  it.each(refused)('refuses %s (%s)', (address) => {
    expect(forbiddenAddress(address)).toBeDefined();
  });

  // Issue 25 finding 5: each IPv6 form of IANA's special-purpose registry, and the deprecated IPv4 embeddings, one by one.
  const refusedV6: [string, string][] = [
    ['64:ff9b:1::a9fe:a9fe', 'local-use NAT64 64:ff9b:1::/48 (carrying 169.254.169.254)'],
    ['64:ff9b:1::808:808', 'local-use NAT64, even carrying a public address'],
    ['2001::1', 'Teredo 2001::/32'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo, a real-looking one'],
    ['2001:1::1', 'IETF protocol assignments 2001::/23 (PCP anycast)'],
    ['2001:2::1', 'benchmarking 2001:2::/48'],
    ['2001:10::1', 'ORCHID 2001:10::/28'],
    ['2001:20::1', 'ORCHIDv2 2001:20::/28'],
    ['2001:1ff:ffff::1', 'the end of 2001::/23'],
    ['2001:db8::1', 'documentation 2001:db8::/32'],
    ['3fff::1', 'documentation 3fff::/20'],
    ['2002:7f00:1::1', '6to4 of 127.0.0.1'],
    ['2002:808:808::1', '6to4 of a public address (deprecated, routed through any relay)'],
    ['::8.8.8.8', 'IPv4-compatible (deprecated), even of a public address'],
    ['::ffff:0:8.8.8.8', 'IPv4-unavailableOnBackpressure, even of a public address'],
    ['100::1', 'discard-only 100::/64'],
    ['100:0:0:1::1', 'dummy prefix 100:0:0:1::/64'],
    ['5f00::1', 'segment-routing SIDs 5f00::/16'],
    ['4000::1', 'unallocated, outside 2000::/3'],
    ['::2', 'the reserved ::/8, not an embedding'],
  ];
  it.each(refusedV6)('refuses %s (%s)', (address) => {
    expect(forbiddenAddress(address)).toBeDefined();
  });

  const allowed: [string, string][] = [
    ['93.184.216.34', 'public IPv4'],
    ['8.8.8.8', 'public IPv4'],
    ['172.32.0.1', 'just past 172.16/12'],
    ['100.128.0.1', 'just past CGNAT'],
    ['2606:4700:4700::1111', 'public IPv6'],
    ['::ffff:8.8.8.8', 'IPv4-mapped public'],
    ['64:ff9b::808:808', 'NAT64 of a public address'],
    ['2001:4860:4860::8888', 'public IPv6 in 2001::/16, past the IETF block 2001::/23'],
    ['2001:200::1', 'the first address past 2001::/23'],
    ['2a00:1450:4001::1', 'public IPv6'],
  ];
  it.each(allowed)('allows %s (%s)', (address) => {
    expect(forbiddenAddress(address)).toBeUndefined();
  });

  it('reads IPv6 words, with and without an IPv4 tail', () => {
    expect(ipv6Words('::ffff:127.0.0.1')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]);
    expect(ipv6Words('2001:db8::1')).toEqual([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]);
    expect(ipv6Words('1:2:3:4:5:6:7:8')).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(embeddedIPv4(ipv6Words('::ffff:a9fe:a9fe')!)).toBe('169.254.169.254');
    expect(embeddedIPv4(ipv6Words('::1')!)).toBeUndefined();
  });
});

describe('the callback URL', () => {
  const refusal = (raw: string, s: GuardSettings = settings) => {
    try {
      checkCallbackUrl(raw, s);
      return undefined;
    } catch (err) {
      return err instanceof CallbackRefused ? err.why : String(err);
    }
  };
  it('requires https unless http is allowed', () => {
    expect(refusal('http://example.com/hook')).toBe('must be https://');
    expect(refusal('http://example.com/hook', { ...settings, allowHttp: true })).toBeUndefined();
    expect(refusal('ftp://example.com/hook', { ...settings, allowHttp: true })).toBe('must be http:// or https://');
    expect(refusal('https://example.com/hook')).toBeUndefined();
  });
  it('is bounded, a URL, and carries no credentials', () => {
    expect(refusal(`https://example.com/${'a'.repeat(512)}`)).toMatch(/longer than 512/);
    expect(refusal('not a url')).toBe('not a URL');
    expect(refusal('https://user:pass@example.com/')).toMatch(/user name or password/);
  });
});

describe('resolveCallbackTarget', () => {
  const dns =
    (table: Record<string, string[]>): Resolve =>
    async (host) => {
      const answers = table[host];
      if (!answers) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
      return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
  const resolver = dns({
    'hooks.example.com': ['93.184.216.34'],
    'internal.example.com': ['10.1.2.3'],
    'rebind.example.com': ['93.184.216.34', '127.0.0.1'],
    'v6.example.com': ['::ffff:169.254.169.254'],
    'receiver.test': ['127.0.0.1'],
  });
  const why = async (raw: string, s: GuardSettings = settings) =>
    resolveCallbackTarget(raw, s, resolver).then(
      () => undefined,
      (err: unknown) => (err instanceof CallbackRefused ? err.why : String(err)),
    );

  it('pins the address the name resolved to', async () => {
    await expect(resolveCallbackTarget('https://hooks.example.com/x', settings, resolver)).resolves.toMatchObject({ address: '93.184.216.34', family: 4 });
  });
  it('refuses a name with any forbidden answer (DNS rebinding), IPv4-mapped too, and literal addresses', async () => {
    // What our DNS answers for a name is not repeated to the owner, nor whether it answers at all; an address they wrote is.
    expect(await why('https://internal.example.com/x')).toBe('host does not resolve to a public address');
    expect(await why('https://rebind.example.com/x')).toBe('host does not resolve to a public address');
    expect(await why('https://v6.example.com/x')).toBe('host does not resolve to a public address');
    expect(await why('https://nowhere.example.com/x')).toBe('host does not resolve to a public address');
    expect(await why('https://127.0.0.1:8443/x')).toBe('private or reserved address (127.0.0.1)');
    expect(await why('https://[::1]/x')).toMatch(/private or reserved/);
    expect(await why('https://[::ffff:10.0.0.1]/x')).toMatch(/private or reserved/);
  });
  it('keeps the DNS answer for the operator only', async () => {
    const refused = await resolveCallbackTarget('https://internal.example.com/x', settings, resolver).catch((err: unknown) => err as CallbackRefused);
    expect(refused).toMatchObject({ why: 'host does not resolve to a public address', detail: 'resolves to a private or reserved address (10.1.2.3)' });
  });
  it('lets an allowed origin name a private host or address, on its scheme and port only', async () => {
    expect(await why('http://receiver.test:8080/x', allowing('http://receiver.test:8080'))).toBeUndefined();
    // An address entry holds wherever a name resolves to it, and however the URL spells it.
    expect(await why('http://receiver.test:8080/x', allowing('http://127.0.0.1:8080'))).toBeUndefined();
    expect(await why('http://127.0.0.1:8080/x', allowing('http://127.0.0.1:8080'))).toBeUndefined();
    expect(await why('http://[0:0::1]:8080/x', allowing('http://[::1]:8080'))).toBeUndefined();
    // Issue 25 finding 4: allowing the receiver's port of 127.0.0.1 opened Redis, Temporal and the admin port beside it.
    for (const other of ['http://127.0.0.1:6379/', 'http://127.0.0.1:7233/', 'http://127.0.0.1:9464/readyz', 'http://receiver.test:6379/']) {
      expect([other, await why(other, allowing('http://127.0.0.1:8080'))]).toEqual([
        other,
        expect.stringMatching(/private or reserved|does not resolve to a public/),
      ]);
    }
    // The scheme is part of the origin: https on the same port is another origin.
    expect(await why('https://127.0.0.1:8080/x', allowing('http://127.0.0.1:8080'))).toMatch(/private or reserved/);
    // Without a port, an entry is the scheme's default port only.
    expect(await why('http://receiver.test/x', allowing('http://receiver.test'))).toBeUndefined();
    expect(await why('http://receiver.test:80/x', allowing('http://receiver.test'))).toBeUndefined();
    expect(await why('http://receiver.test:8080/x', allowing('http://receiver.test'))).toMatch(/does not resolve to a public/);
    expect(await why('https://receiver.test/x', allowing('receiver.test'))).toBeUndefined();
    expect(await why('https://receiver.test:8443/x', allowing('receiver.test'))).toMatch(/does not resolve to a public/);
    // Allowing one address allows that one only.
    expect(await why('http://internal.example.com:8080/x', allowing('http://127.0.0.1:8080'))).toMatch(/does not resolve to a public/);
  });
});

describe('parseAllowedOrigin: CALLBACK_ALLOWED_ORIGINS entries', () => {
  it.each([
    ['https://receiver.internal', { scheme: 'https', host: 'receiver.internal', port: 443 }],
    ['http://127.0.0.1:8080', { scheme: 'http', host: '127.0.0.1', port: 8080 }],
    ['HTTP://Receiver.Internal:80/', { scheme: 'http', host: 'receiver.internal', port: 80 }],
    ['http://[FD00::5]:8443', { scheme: 'http', host: 'fd00::5', port: 8443 }],
    ['receiver.internal', { scheme: 'https', host: 'receiver.internal', port: 443 }],
    ['127.0.0.1', { scheme: 'https', host: '127.0.0.1', port: 443 }],
    ['127.0.0.1:8443', { scheme: 'https', host: '127.0.0.1', port: 8443 }],
    ['::1', { scheme: 'https', host: '::1', port: 443 }],
  ])('reads %s', (text, origin) => {
    expect(parseAllowedOrigin(text)).toEqual(origin);
  });
  it.each([
    'ftp://receiver.internal',
    'https://receiver.internal/hooks',
    'https://u:p@receiver.internal',
    'https://receiver.internal?x=1',
    'https://',
    'http://a b',
  ])('refuses %s', (text) => {
    expect(() => parseAllowedOrigin(text)).toThrow(/origin/);
  });
});
