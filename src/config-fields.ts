import { isIP } from 'node:net';
import { z } from 'zod';

/** The building blocks of the config's environment schema (src/config.ts). */

/** A whole decimal number; an empty variable counts as unset (so its default applies), never as 0. */
export const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.preprocess(
    (v) => (v === undefined || (typeof v === 'string' && v.trim() === '') ? String(def) : v),
    z
      .string()
      .regex(/^\s*\d+\s*$/, 'must be a whole number')
      .transform(Number)
      .pipe(z.number().int().min(min).max(max)),
  );

/** A whole number of proxies, or addresses / CIDR ranges / Express's names for them, of the proxies in front. */
const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];
export const trustProxy = z
  .string()
  .optional()
  .transform((raw, ctx): false | number | string[] => {
    const v = (raw ?? '').trim();
    if (v === '' || /^(false|off|0)$/i.test(v)) return false;
    if (/^\d+$/.test(v)) {
      const hops = Number(v);
      if (hops > 10) ctx.addIssue({ code: 'custom', message: 'at most 10 proxy hops' });
      return hops;
    }
    if (/^(true|on|yes)$/i.test(v)) {
      // Express would then believe any X-Forwarded-For a caller sends, and every per-IP limit could be dodged.
      ctx.addIssue({ code: 'custom', message: 'trusting every proxy is refused: give the number of proxies in front, or their addresses' });
      return false;
    }
    const entries = v.split(',').map((e) => e.trim());
    const bad = entries.filter((e) => !PROXY_NAMES.includes(e) && !isAddressOrRange(e));
    if (bad.length > 0) ctx.addIssue({ code: 'custom', message: `not an address, a CIDR range or one of ${PROXY_NAMES.join(', ')}: ${bad.join(', ')}` });
    return entries;
  });

function isAddressOrRange(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}
