import { isIP } from 'node:net';
import { z } from 'zod';
import { ipv6Words } from './addresses';

/**
 * The operator's allow-list of private callback receivers, as origins: scheme, host and port. An entry opens that one
 * port of that one host, never the host's other ports (Redis, Temporal, the admin listener beside a receiver on
 * 127.0.0.1: issue 25 finding 4). Pure.
 */
export interface AllowedOrigin {
  scheme: 'http' | 'https';
  /** Lower case, an IPv6 address without its brackets. */
  host: string;
  port: number;
}

const DEFAULT_PORT = { http: 80, https: 443 } as const;

/**
 * One entry of CALLBACK_ALLOWED_ORIGINS: `https://receiver.internal`, `http://127.0.0.1:8080`, `https://[fd00::5]:8443`.
 * Without a scheme it is https; without a port, the scheme's default port only. Throws a message fit for the config
 * error (it names the rule, not the value).
 */
export function parseAllowedOrigin(text: string): AllowedOrigin {
  let raw = text.trim();
  // A bare IPv6 address (::1) cannot carry a port; brackets make it a URL host.
  if (isIP(raw) === 6) raw = `[${raw}]`;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) raw = `https://${raw}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('an origin such as https://receiver.internal or http://127.0.0.1:8080');
  }
  const scheme = url.protocol.slice(0, -1);
  if (scheme !== 'http' && scheme !== 'https') throw new Error('an origin with http:// or https://');
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || (url.pathname !== '/' && url.pathname !== '')) {
    throw new Error('an origin only (scheme, host, port): no path, query or credentials');
  }
  if (url.hostname === '') throw new Error('an origin with a host');
  return { scheme, host: hostOf(url), port: portOf(url) };
}

/** The URL's host as the allow-list keeps it: lower case, without an IPv6 address's brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

/** The port a URL connects to: its own, or its scheme's default (URL drops a default port it was given). */
function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'http:' ? DEFAULT_PORT.http : DEFAULT_PORT.https;
}

/**
 * Whether an entry lets the URL reach this address although it is private: the same scheme and port, and either the
 * URL's host as written or the address it resolved to (an address entry holds wherever a name resolves to it).
 */
export function originAllows(origins: readonly AllowedOrigin[], url: URL, address: string): boolean {
  const scheme = url.protocol.slice(0, -1);
  const port = portOf(url);
  const host = hostOf(url);
  return origins.some((o) => o.scheme === scheme && o.port === port && (o.host === host || sameAddress(o.host, address)));
}

/** Two spellings of one IP address (`::1` and `0:0::1`); a name is never an address. */
function sameAddress(a: string, b: string): boolean {
  const family = isIP(a);
  if (family === 0 || family !== isIP(b)) return false;
  if (family === 4) return a === b;
  return ipv6Words(a)?.join(':') === ipv6Words(b)?.join(':');
}

/** CALLBACK_ALLOWED_ORIGINS (and its old name) as the config reads it: comma-separated, at most 64 entries. */
export const allowedOriginsSchema = z
  .string()
  .optional()
  .transform((raw) =>
    (raw ?? '')
      .split(',')
      .map((h) => h.trim())
      .filter((h) => h !== ''),
  )
  .pipe(
    z
      .array(
        z
          .string()
          .max(300)
          .transform((text, ctx) => {
            try {
              return parseAllowedOrigin(text);
            } catch (err) {
              ctx.addIssue({ code: 'custom', message: (err as Error).message });
              return z.NEVER;
            }
          }),
      )
      .max(64),
  );
