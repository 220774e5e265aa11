import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { forbiddenAddress } from './addresses';

/**
 * The SSRF guard: a callback URL is checked when it is registered and again at every delivery attempt, and the
 * connection goes to the address checked (pinned), so a DNS answer that changes between the check and the connect
 * (DNS rebinding) cannot send it elsewhere.
 */

export interface GuardSettings {
  /** Host names and addresses an operator allows even though they are private (a receiver on our own network, tests). */
  allowedHosts: readonly string[];
  /** http:// allowed (local use only); otherwise https:// is required. */
  allowHttp: boolean;
  maxUrlLength: number;
}

/** Where a callback may be sent: the URL and the one address the connection must use. */
export interface PinnedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

export class CallbackRefused extends Error {
  constructor(readonly why: string) {
    super(`callback URL refused: ${why}`);
  }
}

export type Resolve = (host: string) => Promise<{ address: string; family: number }[]>;

const systemResolve: Resolve = (host) => dnsLookup(host, { all: true, verbatim: true });

/** The URL's form alone (no lookup): scheme, length, no credentials, a host. Throws CallbackRefused. */
export function checkCallbackUrl(raw: string, settings: GuardSettings): URL {
  if (raw.length > settings.maxUrlLength) throw new CallbackRefused(`longer than ${settings.maxUrlLength} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CallbackRefused('not a URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && settings.allowHttp)) {
    throw new CallbackRefused(settings.allowHttp ? 'must be http:// or https://' : 'must be https://');
  }
  // Credentials in a URL end up in logs and listings; the signature is what authenticates us to the receiver.
  if (url.username !== '' || url.password !== '') throw new CallbackRefused('must not carry a user name or password');
  if (url.hostname === '') throw new CallbackRefused('has no host');
  url.hash = '';
  return url;
}

/**
 * Resolves the URL's host and returns the address to connect to. Every address the name resolves to must be allowed
 * (one private answer among public ones is how a rebinding attack starts), unless the allow-list names the host or
 * the address.
 */
export async function resolveCallbackTarget(raw: string, settings: GuardSettings, resolve: Resolve = systemResolve): Promise<PinnedTarget> {
  const url = checkCallbackUrl(raw, settings);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const allowed = new Set(settings.allowedHosts.map((h) => h.toLowerCase()));
  const literal = isIP(host) !== 0;
  let answers: { address: string; family: number }[];
  if (literal) answers = [{ address: host, family: isIP(host) }];
  else {
    try {
      answers = await resolve(host);
    } catch {
      throw new CallbackRefused('host does not resolve');
    }
  }
  if (answers.length === 0) throw new CallbackRefused('host does not resolve');
  for (const answer of answers) {
    if (allowed.has(host) || allowed.has(answer.address.toLowerCase())) continue;
    const why = forbiddenAddress(answer.address);
    // What our DNS says of a name is not for an owner to learn (mapping our network): only an address they wrote.
    if (why) throw new CallbackRefused(literal ? `${why} (${answer.address})` : `resolves to a ${why}`);
  }
  const first = answers[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
