import { z } from 'zod';
import { helloSchema } from './bridge-protocol';

/**
 * The multi-account session (protocol 1.7, docs/bridge-protocol.md): one bridge process speaks for many accounts on a
 * fixed number of connections. Each account is admitted by its own bridge token at the session's hello; the session
 * token it gets back only ever names the accounts admitted that way.
 */

/** The capability a service announces (in every hello answer) when it serves multi-account sessions. */
export const MULTI_ACCOUNT_CAPABILITY = 'multi_account_session';
/** At most this many accounts in one session (one more is a 400): the per-poll Redis work is bounded by it. */
export const MAX_SESSION_ACCOUNTS = 10_000;
/** At most this many accounts' reports (or trade events and books) in one session reports (or trades) call. */
const MAX_SESSION_REPORT_ACCOUNTS = 1_000;

/** The bounds a service announces in its session hello's answer, so a bridge splits its accounts and batches to fit. */
export const SESSION_LIMITS = { accountsPerSession: MAX_SESSION_ACCOUNTS, accountsPerCall: MAX_SESSION_REPORT_ACCOUNTS } as const;

const bridgeTokenSchema = z.string().min(1).max(256);

/** `POST /bridge/v1/session/hello`: each account's hello, with that account's own bridge token. */
export const sessionHelloSchema = z.strictObject({
  /** A session of this bridge's to add the admitted accounts to (a late account, a lost one again); else a new one. */
  session: z.string().min(1).max(256).optional(),
  accounts: z
    .array(helloSchema.extend({ accountId: z.string().min(1).max(128), bridgeToken: bridgeTokenSchema }))
    .min(1)
    .max(MAX_SESSION_ACCOUNTS, `at most ${MAX_SESSION_ACCOUNTS} accounts in one session`),
});

/**
 * `POST /bridge/v1/session/reports`: each account's reports body (protocol 1.0 to 1.4), named by its accountId; the
 * same envelope carries `POST /bridge/v1/session/trades` (each account's trades body, protocol 1.5).
 */
export const sessionReportsSchema = z.strictObject({
  accounts: z
    .array(z.strictObject({ accountId: z.string().min(1).max(128), body: z.unknown() }))
    .min(1)
    .max(MAX_SESSION_REPORT_ACCOUNTS, `at most ${MAX_SESSION_REPORT_ACCOUNTS} accounts in one call`)
    .refine((items) => new Set(items.map((i) => i.accountId)).size === items.length, { message: 'each account at most once per call' }),
});
