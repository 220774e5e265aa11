import { z } from 'zod';

/**
 * What the two tools return as structuredContent, declared so an MCP host can check and show it (the SDK validates
 * every non-error result against it). Loose objects: a newer service may add fields; an agent keys on `kind`/`status`.
 */

export const submitSignalOutput = z.looseObject({
  kind: z
    .enum(['accepted', 'partially_accepted', 'no_targets', 'refused', 'gave_up'])
    .describe(
      'accepted: queued for execution (not executed), poll signalId. partially_accepted: some accounts run, poll before anything else. ' +
        'no_targets: authenticated but no eligible account; nothing runs. refused: the service said no; resending the same request gets the same answer. ' +
        'gave_up: no definite answer; resend only with the same idempotencyKey within 45 s, and only if mayHaveRun allows it.',
    ),
  idempotencyKey: z.string().describe('The X-Idempotency-Key every attempt carried: reuse it (within 45 s) to retry this same action.'),
  attempts: z.int().describe('HTTP requests made; 0 when refused before sending.'),
  signalId: z.string().optional().describe('Handle for get_signal_status (accepted, partially_accepted).'),
  correlationId: z.string().optional(),
  accountsResolved: z.int().optional().describe('Accounts the signal was routed to: the expectAccounts of get_signal_status.'),
  replayed: z.boolean().optional().describe('True when an earlier attempt with this key had been accepted; nothing new ran.'),
  status: z.int().optional().describe('HTTP status of a refusal.'),
  error: z.string().optional(),
  details: z.array(z.looseObject({})).optional().describe('Field-level validation problems of a 400.'),
  local: z.boolean().optional().describe('Refused by this server before sending (the signal was invalid).'),
  reason: z.enum(['max_attempts', 'deadline']).optional(),
  lastStatus: z.union([z.literal(429), z.literal(500), z.literal(503), z.null()]).optional(),
  retryAfterSeconds: z.number().optional(),
  mayHaveRun: z.boolean().optional().describe('gave_up only: an attempt may have reached the service without a definite answer.'),
});

export const getSignalStatusOutput = z.looseObject({
  signalId: z.string(),
  status: z.enum(['pending_or_unknown', 'reported']).describe('reported: at least one account has an outcome.'),
  reported: z.int().describe('Accounts with an outcome that the API token may read.'),
  accounts: z.array(
    z.looseObject({
      accountId: z.string(),
      outcome: z.enum(['filled', 'rejected']),
      ticket: z.string().nullable().describe('The broker ticket of a fill.'),
      reason: z.string().nullable().describe('Why it was rejected (docs/reason-codes.md).'),
      occurredAt: z.string(),
      entry: z
        .enum(['position', 'order'])
        .optional()
        .describe('On a fill: position (a market entry opened it) or order (a pending order was placed; not executed yet).'),
      fill: z.object({ price: z.number(), volume: z.number() }).optional().describe('The price and lots a position opened at, when the bridge reported them.'),
    }),
  ),
  expectAccounts: z.int().describe('How many outcomes were waited for.'),
  complete: z.boolean().describe('Every expected account has reported.'),
  signalIdKnown: z
    .enum(['submitted_in_this_session', 'not_submitted_in_this_session'])
    .describe(
      'Whether this MCP session submitted the signalId. The service answers pending_or_unknown alike for a signal still running and for an id ' +
        'it never issued, so a signalId not submitted in this session that stays pending may be mistyped.',
    ),
});
