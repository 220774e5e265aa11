import { z } from 'zod';
import type { SignalAccepted, SignalNoTargets } from '../signals/acceptance';
import type { SignalStatus } from '../signals/status';

/**
 * The response and error schemas of the published interface (spec §2.2–§2.5), for the OpenAPI document
 * (src/http/openapi.ts) and for the typed client, which parses the service's answers with them. They are checked at
 * compile time against the types the use cases return, so the document cannot silently drift from the code.
 */

const count = z.int().nonnegative();

export const signalAcceptedSchema = z
  .object({
    success: z.boolean().describe('Outcome flag: true on 202; false in the partial-acceptance 503.'),
    signalId: z.string().describe('Handle for the status poll (GET /v1/signals/{signalId}).'),
    correlationId: z
      .string()
      .describe(
        'Trace id of the request that was accepted (its logs and its workflow carry it): equals the X-Request-ID response header of that request. ' +
          "On an idempotent replay (Idempotent-Replayed: true) the body is the first answer replayed, so correlationId is the first request's id, " +
          'while the X-Request-ID header names this request.',
      ),
    accountsResolved: count.describe('Number of trading accounts the signal was routed to.'),
  })
  .describe('The signal is accepted for asynchronous execution (not executed yet). Poll signalId for the outcome.');

export const signalNoTargetsSchema = z
  .object({
    success: z.literal(false).describe('Always false.'),
    accountsResolved: z.literal(0).describe('Always 0.'),
    correlationId: z.string().describe('Trace id for support.'),
  })
  .describe('Authenticated, but the signal routed to zero eligible accounts. Terminal: there is no signalId and nothing to poll.');

export const signalOutcomeSchema = z
  .object({
    accountId: z.string().describe('Trading account id.'),
    outcome: z.enum(['filled', 'rejected']).describe('Terminal outcome on this account.'),
    ticket: z.string().nullable().optional().describe('Broker ticket when filled.'),
    reason: z.string().nullable().optional().describe('Rejection reason: a service code or a broker/EA diagnostic.'),
    occurredAt: z.iso.datetime({ offset: true }).describe('Time of the outcome.'),
    entry: z
      .enum(['position', 'order'])
      .optional()
      .describe(
        'Additive to the spec, on a filled entry only: "position" when a market entry opened a position (ticket is the position), ' +
          '"order" when a pending entry (limit, stop, stop-limit) was placed and waits at the broker (ticket is the order; not executed yet). ' +
          'Absent on rejections and on outcomes recorded before this field existed.',
      ),
    fill: z
      .object({
        price: z.number().describe('The price the position opened at, as the bridge reported it.'),
        volume: z.number().describe('The lots opened (after sizing by risk, the lots the bridge chose).'),
      })
      .optional()
      .describe('Additive to the spec, on entry "position" only, when the bridge reported both. A placed pending order has no fill.'),
  })
  .describe(
    "Per-account terminal outcome of an opening signal. accountId, outcome, ticket, reason and occurredAt are the spec's (§2.4); entry and fill are " +
      'optional additions a client may ignore. Exits (close, modify, cancel, breakeven) are never reported here: see the signal.exit_outcome callback.',
  );

export const signalStatusSchema = z
  .object({
    signalId: z.string().describe('The polled handle.'),
    status: z
      .enum(['pending_or_unknown', 'reported'])
      .describe('pending_or_unknown: outcome still in flight, or the handle is unknown. reported: at least one account has a terminal outcome.'),
    reported: count.optional().describe('Number of accounts with a terminal outcome (comparable with accountsResolved of the submit).'),
    accounts: z.array(signalOutcomeSchema).describe('Per-account outcomes, limited to the accounts granted to the API token.'),
  })
  .describe('Outcome report of an opening signal (market or pending entry); possibly still pending. Close, modify and cancel actions are not reported.');

export const validationDetailSchema = z.object({
  path: z.string().describe('Dotted path of the offending field ("" for the whole body; "X-Idempotency-Key" for the header).'),
  message: z.string(),
});

export const errorSchema = z
  .object({
    error: z.string().describe('Error text.'),
    correlationId: z
      .string()
      .optional()
      .describe(
        'Present on ingestion-path errors, including fairness-throttle 429s; omitted on 400 validation and route-limiter bodies ' +
          'and on the status poll (the X-Request-ID response header carries the trace id).',
      ),
    details: z.array(validationDetailSchema).optional().describe('On 400: one entry per problem found.'),
    installBridgeVersion: z
      .string()
      .optional()
      .describe(
        'On 412, when a newer bridge would run the action: the bridge version to install (MT5: the package at /downloads/mt5-bridge/latest.zip, ' +
          "or ready to run from the account's page of the dashboard; cTrader: the connector's version).",
      ),
  })
  .describe('An error.');

export const serviceUnavailableSchema = z
  .object({
    error: z
      .enum(['System under high load, retry later', 'service_unavailable'])
      .describe('"System under high load, retry later" (backpressure) or "service_unavailable" (rate-limit store failing closed).'),
    backpressure: z.boolean().optional().describe('true on the backpressure branch.'),
    retryAfterSeconds: count.optional().describe('Suggested wait (fail-closed limiter); also sent as a Retry-After header.'),
  })
  .describe('Not accepted at all (no signalId): safe to retry later.');

export const rateLimitErrorSchema = z
  .object({
    error: z
      .enum(['Rate limit exceeded', 'rate_limit_exceeded'])
      .describe('"Rate limit exceeded" (route limiter) or "rate_limit_exceeded" (fairness throttle / API token caps).'),
    scope: z
      .enum(['account_write', 'broadcast', 'account_read', 'ip'])
      .optional()
      .describe('Which limiter fired: account_write or broadcast (webhook fairness throttle); account_read or ip (token API).'),
    message: z.string().optional().describe('Human-readable hint.'),
    limit: count.optional().describe('Requests allowed per window, when reported.'),
    windowMs: count.optional().describe('Window size in milliseconds, when reported.'),
    correlationId: z.string().optional().describe('Present on fairness-throttle 429s; absent on route-limiter 429s.'),
  })
  .describe('Rate limit exceeded; slow down and retry later.');

export const tokenSuspendedSchema = z
  .object({
    error: z.literal('token_suspended'),
    suspendedUntil: z.iso.datetime({ offset: true }).describe('When the suspension ends.'),
  })
  .describe('The API token is temporarily suspended.');

// What the use cases return must be what the document promises (compile-time checks; no runtime effect).
type Conforms<Actual, Documented> = [Actual] extends [Documented] ? true : false;
const _conformance: [
  Conforms<SignalAccepted, z.infer<typeof signalAcceptedSchema>>,
  Conforms<SignalNoTargets, z.infer<typeof signalNoTargetsSchema>>,
  Conforms<SignalStatus, z.infer<typeof signalStatusSchema>>,
] = [true, true, true];
