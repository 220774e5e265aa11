import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { forbiddenAddress } from './addresses';
import { hostOf, originAllows, type AllowedOrigin } from './origins';

/** The longest callback URL accepted: any real receiver's URL fits; a longer one is data smuggled in a URL. */
export const CALLBACK_URL_MAX_LENGTH = 512;

/**
 * The SSRF guard: a callback URL is checked when it is registered and again at every delivery attempt, and the
 * connection goes to the address checked (pinned), so a DNS answer that changes between the check and the connect
 * (DNS rebinding) cannot send it elsewhere.
 */

export interface GuardSettings {
  /**
   * Origins (scheme, host, port) an operator allows even though their address is private: a receiver on our own
   * network, the tests' loopback receivers. Only that port of that host (src/callbacks/origins.ts).
   */
  allowedOrigins: readonly AllowedOrigin[];
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

/** `why` is for the owner; `detail`, for the operator's log, may say what our DNS answered. */
export class CallbackRefused extends Error {
  constructor(
    readonly why: string,
    readonly detail: string = why,
  ) {
    super(`callback URL refused: ${why}`);
  }
}

export type Resolve = (host: string) => Promise<{ address: string; family: number }[]>;

const systemResolve: Resolve = (host) => dnsLookup(host, { all: true, order: 'verbatim' });

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
 * (one private answer among public ones is how a rebinding attack starts), unless an allowed origin names the URL's
 * scheme, port and its host or that address.
 */
export async function resolveCallbackTarget(raw: string, settings: GuardSettings, resolve: Resolve = systemResolve): Promise<PinnedTarget> {
  const url = checkCallbackUrl(raw, settings);
  const host = hostOf(url);
  const literal = isIP(host) !== 0;
  let answers: { address: string; family: number }[];
  if (literal) answers = [{ address: host, family: isIP(host) }];
  else {
    try {
      answers = await resolve(host);
    } catch {
      throw new CallbackRefused(UNREACHABLE_NAME, 'host does not resolve');
    }
  }
  if (answers.length === 0) throw new CallbackRefused(UNREACHABLE_NAME, 'host does not resolve');
  for (const answer of answers) {
    if (originAllows(settings.allowedOrigins, url, answer.address)) continue;
    const why = forbiddenAddress(answer.address);
    // What our DNS says of a name is not for an owner to learn (which internal names exist): a name that does not
    // resolve and one that resolves to a private address are refused alike. Only an address they wrote is repeated.
    if (why)
      throw literal ? new CallbackRefused(`${why} (${answer.address})`) : new CallbackRefused(UNREACHABLE_NAME, `resolves to a ${why} (${answer.address})`);
  }
  const first = answers[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}

const UNREACHABLE_NAME = 'host does not resolve to a public address';
