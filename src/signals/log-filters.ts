import { z } from 'zod';
import { ACCOUNT_ID_PATTERN } from '../domain/account';
import { ACTIONS } from '../domain/actions';
import { SIGNAL_ID_PATTERN } from '../domain/ids';
import { SYMBOL_PATTERN } from '../domain/symbol';
import type { RunPosition } from './account-runs';
import { Refusal } from '../refusal';

/** What an owner may ask of their signal log, bounded; as query parameters, so numbers may come as text. */

export const SIGNAL_LOG_MAX_PAGE = 100;
const SIGNAL_LOG_DEFAULT_PAGE = 25;
const SIGNAL_LOG_OUTCOMES = ['filled', 'done', 'rejected', 'pending'] as const;
/** A page token is small (a time and a signalId); anything longer is not one of ours. */
const PAGE_TOKEN_MAX = 200;

const instant = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

const signalLogQuerySchema = z
  .strictObject({
    accountId: z.string().regex(ACCOUNT_ID_PATTERN).optional(),
    action: z.enum(ACTIONS).optional(),
    symbol: z.string().regex(SYMBOL_PATTERN).optional(),
    outcome: z.enum(SIGNAL_LOG_OUTCOMES).optional(),
    /** Received at or after. */
    from: instant.optional(),
    /** Received before. */
    to: instant.optional(),
    pageSize: z.coerce.number().int().min(1).max(SIGNAL_LOG_MAX_PAGE).default(SIGNAL_LOG_DEFAULT_PAGE),
    pageToken: z.string().min(1).max(PAGE_TOKEN_MAX).optional(),
  })
  .refine((q) => q.from === undefined || q.to === undefined || q.from < q.to, { message: 'from must be before to', path: ['from'] });

export type SignalLogQuery = z.infer<typeof signalLogQuerySchema>;

/** The owner's id as the registry holds it (src/domain/account.ts). */
export const ownerIdSchema = z.string().min(1).max(128);

export function parseSignalLogQuery(input: unknown): SignalLogQuery {
  const parsed = signalLogQuerySchema.safeParse(input ?? {});
  if (!parsed.success) {
    throw new Refusal('invalid', 'Invalid signal log query', {
      details: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  return parsed.data;
}

const tokenSchema = z.strictObject({ r: z.iso.datetime(), s: z.string().regex(SIGNAL_ID_PATTERN) });

/**
 * The next page starts after the last signal of this one. The token says only where (a time and a signalId): the
 * owner is never in it, so a forged token can move the page, never widen whose signals it lists.
 */
export function encodePageToken(position: RunPosition): string {
  return Buffer.from(JSON.stringify({ r: position.receivedAt.toISOString(), s: position.signalId })).toString('base64url');
}

export function decodePageToken(token: string): RunPosition {
  const parsed = tokenSchema.safeParse(tokenJson(token));
  if (!parsed.success) throw new Refusal('invalid', 'Invalid page token', { details: [{ path: 'pageToken', message: 'not a token this log issued' }] });
  return { receivedAt: new Date(parsed.data.r), signalId: parsed.data.s };
}

function tokenJson(token: string): unknown {
  try {
    return JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}
