import { z } from 'zod';
import { formatBytes, SPEC_LIMITS } from '../domain/limits';
import { ACTIONS, requiresIdempotencyKey, type Action } from '../domain/actions';
import type { SignalAccepted, SignalNoTargets } from '../signals/accept';
import { ACTION_RULES, externalSignalShape, META_MAX_BYTES, META_MAX_DEPTH } from '../domain/signal';
import type { SignalStatus } from '../signals/status';

/**
 * The published interface description (spec §9: version 1.0.0), served at GET /openapi.json.
 * Every schema is generated from a zod schema: ExternalSignal from the very schema the ingress validates with, and
 * its per-action conditions from the same action table (ACTION_RULES). The response schemas below are checked at
 * compile time against the types the use cases return, so the document cannot silently drift from the code.
 */

export const OPENAPI_VERSION = '3.1.0';
export const API_VERSION = '1.0.0';

// The spec's numbers (§8). The running service reads them from config, which only tests shorten.
const IDEMPOTENCY_KEY_MAX_LENGTH = SPEC_LIMITS.idempotencyKeyMaxLength;
const BODY_LIMIT = formatBytes(SPEC_LIMITS.bodyLimitBytes);
const REPLAY_WINDOW = '45 seconds';

// ---------------------------------------------------------------------------------------------------------------
// Response schemas (spec §2.2–§2.5)
// ---------------------------------------------------------------------------------------------------------------

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
  })
  .describe('Per-account terminal outcome of an opening signal.');

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

// ---------------------------------------------------------------------------------------------------------------
// ExternalSignal (spec §2.1): shape from externalSignalShape, conditions from ACTION_RULES
// ---------------------------------------------------------------------------------------------------------------

type JsonSchema = z.core.JSONSchema.BaseSchema;
type SignalField = keyof typeof externalSignalShape.shape;

/**
 * The fields the action table governs: those some action requires or allows. Every other field (secret, action,
 * meta, ...) describes the request rather than the order, and any action may carry it.
 */
const GOVERNED = new Set<string>(ACTIONS.flatMap((a) => [...ACTION_RULES[a].required, ...ACTION_RULES[a].optional, ...(ACTION_RULES[a].oneOf ?? [])]));
const ACTION_FIELDS: readonly SignalField[] = (Object.keys(externalSignalShape.shape) as SignalField[]).filter((f) => GOVERNED.has(f));

/** Actions that share one rule, in ACTIONS order. */
function actionGroups(): { actions: Action[]; rule: (typeof ACTION_RULES)[Action] }[] {
  const groups = new Map<string, { actions: Action[]; rule: (typeof ACTION_RULES)[Action] }>();
  for (const action of ACTIONS) {
    const rule = ACTION_RULES[action];
    const key = JSON.stringify(rule);
    const group = groups.get(key);
    if (group) group.actions.push(action);
    else groups.set(key, { actions: [action], rule });
  }
  return [...groups.values()];
}

const present = (f: string): JsonSchema => ({ required: [f] });
const forbidden = (fields: readonly string[]): Record<string, JsonSchema | boolean> => Object.fromEntries(fields.map((f) => [f, false]));

/**
 * The per-action table and the cross-field rules of externalSignalSchema() as JSON Schema 2020-12 conditions.
 * The one rule JSON Schema cannot state (an expiry must be in the future) is in the description.
 */
function actionConditions(): JsonSchema[] {
  const conditions: JsonSchema[] = actionGroups().map(({ actions, rule }) => {
    const allowed = new Set<string>([...rule.required, ...rule.optional]);
    const then: JsonSchema = {};
    if (rule.required.length > 0) then.required = [...rule.required];
    const unused = ACTION_FIELDS.filter((f) => !allowed.has(f));
    if (unused.length > 0) then.properties = forbidden(unused);
    if (rule.oneOf) then.anyOf = rule.oneOf.map(present);
    return { if: { properties: { action: { enum: actions } }, required: ['action'] }, then };
  });
  // close: a positionId, or a filtered close by at least one of its other fields, never both (see externalSignalSchema).
  const closeFilters = ACTION_RULES.close.optional.filter((f) => f !== 'positionId');
  conditions.push({
    if: { properties: { action: { const: 'close' } }, required: ['action'] },
    then: {
      oneOf: [
        { required: ['positionId'], properties: forbidden(closeFilters) },
        { properties: forbidden(['positionId']), anyOf: closeFilters.map(present) },
      ],
    },
  });
  conditions.push({ not: { required: ['sl', 'slPips'] } }, { not: { required: ['tp', 'tpPips'] } });
  return conditions;
}

function actionTable(): string {
  const list = (fields: readonly string[]) => (fields.length > 0 ? fields.join(', ') : '—');
  const rows = actionGroups().map(({ actions, rule }) => {
    const required = rule.oneOf ? `${list(rule.required)}; at least one of ${rule.oneOf.join(', ')}` : list(rule.required);
    return `| ${actions.join(', ')} | ${required} | ${list(rule.optional.filter((f) => !rule.oneOf?.includes(f)))} |`;
  });
  return ['| Action | Required | Optional |', '|---|---|---|', ...rows].join('\n');
}

function externalSignalDescription(): string {
  return [
    "A trade signal for the caller's own trading account(s). `secret` (the webhook secret) authenticates it; there is no header signature scheme.",
    '',
    'Fields an action does not use are refused (400), so a mistaken template is caught:',
    '',
    actionTable(),
    '',
    '- close takes a `positionId`, or a filter by `symbol` / `side` / `pnl` (a filtered close), not both; use close_all to close everything.',
    '- Give `sl` or `slPips`, and `tp` or `tpPips`, not both.',
    '- `expiry` must be in the future (not expressible in JSON Schema).',
    `- \`meta\` is free-form; it never changes routing or execution. It may nest at most ${META_MAX_DEPTH} levels (meta itself is level 1) and take at most ${META_MAX_BYTES} bytes as JSON (else 400). Only \`meta.origin\` is kept with the signal (it shows in the Temporal UI); the rest is dropped after validation.`,
    '- Stop-limit entries and the modify_pending family need a recent MT5 bridge (EA) and may be unavailable on some venues; an outdated bridge yields 412.',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// Components
// ---------------------------------------------------------------------------------------------------------------

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function componentSchemas(): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  const named: [string, z.ZodType][] = [
    ['ExternalSignal', externalSignalShape],
    ['SignalAccepted', signalAcceptedSchema],
    ['SignalNoTargets', signalNoTargetsSchema],
    ['SignalStatus', signalStatusSchema],
    ['SignalOutcome', signalOutcomeSchema],
    ['ValidationDetail', validationDetailSchema],
    ['Error', errorSchema],
    ['ServiceUnavailable', serviceUnavailableSchema],
    ['RateLimitError', rateLimitErrorSchema],
    ['TokenSuspended', tokenSuspendedSchema],
  ];
  for (const [id, schema] of named) registry.add(schema, { id });
  // Input side: a response schema stays open to additive fields (spec §9.2); ExternalSignal is strict either way.
  const { schemas } = z.toJSONSchema(registry, { target: 'draft-2020-12', io: 'input', uri: (id) => `#/components/schemas/${id}` });
  const out: Record<string, JsonSchema> = {};
  for (const [id] of named) {
    // OpenAPI 3.1's dialect is 2020-12 by default; a fragment $id is not allowed, and refs resolve against the document.
    const { $schema: _dialect, $id: _id, ...schema } = schemas[id]!;
    out[id] = schema;
  }
  out.ExternalSignal = { ...out.ExternalSignal, description: externalSignalDescription(), allOf: actionConditions() };
  return out;
}

const HEADERS = {
  'X-Request-ID': {
    description: 'Trace id of the request (the correlationId): a well-formed incoming X-Request-ID is echoed, otherwise one is generated.',
    schema: { type: 'string' },
  },
  'Idempotent-Replayed': {
    description: `"true" when this answer replays the first request made with the same X-Idempotency-Key inside the ${REPLAY_WINDOW} replay window; no new action was taken.`,
    schema: { type: 'string', enum: ['true'] },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 0 },
  },
  RateLimit: {
    description: 'Remaining quota of the route limiter (IETF draft-ietf-httpapi-ratelimit-headers-08 format).',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description: 'Quota policy of the route limiter (IETF draft-ietf-httpapi-ratelimit-headers-08 format).',
    schema: { type: 'string' },
  },
} as const;

type HeaderName = keyof typeof HEADERS;
const headerRef = (name: HeaderName) => ({ $ref: `#/components/headers/${name}` });

function response(description: string, schema: object, extraHeaders: HeaderName[] = []) {
  const names: HeaderName[] = ['X-Request-ID', 'RateLimit', 'RateLimit-Policy', ...extraHeaders];
  return {
    description,
    headers: Object.fromEntries(names.map((n) => [n, headerRef(n)])),
    content: { 'application/json': { schema } },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Operations (spec §4)
// ---------------------------------------------------------------------------------------------------------------

function idempotencyKeyRequiredFor(): string {
  const needs = ACTIONS.filter((action) => requiresIdempotencyKey({ action }));
  return needs.map((a) => (a === 'close' ? 'a filtered close (close without positionId)' : a)).join(', ');
}

function submitOperation(perAccount: boolean) {
  const parameters: object[] = [
    {
      name: 'X-Idempotency-Key',
      in: 'header',
      required: false,
      description:
        `Required for ${idempotencyKeyRequiredFor()}; without it these are rejected with 400. Optional for every other request. ` +
        `Reuse the same key when retrying the same action: a retry inside the ${REPLAY_WINDOW} replay window is deduplicated; ` +
        'after the window a reused key runs as a new action; a new key is always a new action.',
      schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH },
    },
  ];
  if (perAccount) {
    parameters.unshift({ name: 'accountId', in: 'path', required: true, description: 'The trading-account id.', schema: { type: 'string' } });
  }
  return {
    operationId: perAccount ? 'submitSignalToAccount' : 'submitSignalToAllAccounts',
    tags: ['Signals'],
    summary: perAccount ? 'Send a signal to one trading account' : 'Send a signal to every account linked to the webhook secret',
    description:
      (perAccount
        ? 'Sends a signal to the single trading account `accountId`; the webhook secret in the body must be linked to that account.'
        : 'Same contract as POST /webhook/custom/{accountId} without the path parameter: the signal fans out to every trading account linked to the webhook secret.') +
      '\n\nAuthentication: the webhook secret in the JSON body field `secret` (no header scheme). ' +
      'Submission is asynchronous: 202 means accepted for execution, not executed; read the outcome with GET /v1/signals/{signalId}. ' +
      'The body is read as JSON whatever the Content-Type (TradingView posts JSON as text/plain). ' +
      'Two conveniences beyond the specification, kept because TradingView alerts can set neither a header nor a Content-Type: ' +
      'the text/plain body, and the `idempotencyKey` body field standing in for the X-Idempotency-Key header.',
    security: [],
    parameters,
    requestBody: {
      required: true,
      description: `An ExternalSignal as JSON, at most ${BODY_LIMIT}.`,
      content: {
        'application/json': { schema: ref('ExternalSignal') },
        'text/plain': { schema: ref('ExternalSignal') },
      },
    },
    responses: {
      '200': response('Authenticated, but the signal routed to zero eligible accounts. Terminal; nothing to poll.', ref('SignalNoTargets')),
      '202': response('Accepted for asynchronous execution.', ref('SignalAccepted'), ['Idempotent-Replayed']),
      '400': response(
        'Malformed body, or missing/invalid fields for the chosen action; also a missing X-Idempotency-Key where required, ' +
          'or a key reused with a different request inside the replay window. No correlationId in the body.',
        ref('Error'),
      ),
      '401': response('Missing or invalid webhook secret, or an account the secret does not link (a 401 whatever else is wrong with the body).', ref('Error')),
      '403': response('Target account is locked or not entitled to execute the signal.', ref('Error')),
      '409': response('Account type does not accept the signal (e.g. a copy-only master account).', ref('Error')),
      '412': response('The connected EA/cBot version does not support the action; update the bridge and retry.', ref('Error')),
      '413': response(`JSON body exceeds ${BODY_LIMIT}.`, ref('Error')),
      '429': response(
        'Rate limit exceeded. Route limiter (keyed by target account, then secret, then IP; an account or secret is counted only for a sender with a valid secret for it, ' +
          'and requests that fail to authenticate are counted per IP): error "Rate limit exceeded", limit, windowMs, no correlationId. ' +
          'Fairness throttle (per target account on the per-account URL, per account owner on the broadcast URL): error "rate_limit_exceeded", scope, message, correlationId.',
        ref('RateLimitError'),
        ['Retry-After'],
      ),
      '500': response('Unexpected ingestion error; safe to retry (reuse the same X-Idempotency-Key where applicable).', ref('Error')),
      '503': response(
        'Two cases, told apart by the presence of `signalId`. (1) Partial acceptance: at least one execution region failed to enqueue; ' +
          'SignalAccepted body with success false and a live, pollable signalId. Poll the status endpoint before resending; a retry with the same ' +
          `X-Idempotency-Key is deduplicated only within the ${REPLAY_WINDOW} replay window. (2) Not accepted at all (system backpressure, or the ` +
          'rate-limit store failing closed): ServiceUnavailable body with no signalId; safe to retry later.',
        { oneOf: [ref('SignalAccepted'), ref('ServiceUnavailable')] },
        ['Idempotent-Replayed', 'Retry-After'],
      ),
    },
  };
}

function statusOperation() {
  return {
    operationId: 'getSignalStatus',
    tags: ['Signals'],
    summary: 'Read the per-account outcome of an opening signal',
    description:
      'Reports the per-account terminal outcome (filled / rejected) of a previously accepted opening signal (market or pending entry). ' +
      'Results are scoped to the accounts granted to the API token. A handle with no recorded outcome (or an unknown one) returns status pending_or_unknown with 200. ' +
      'Results of close, modify and cancel actions are not reported.',
    security: [{ bearerAuth: [] }],
    parameters: [{ name: 'signalId', in: 'path', required: true, description: 'The signalId from the 202 body.', schema: { type: 'string' } }],
    responses: {
      '200': response('Outcome report, possibly still pending.', ref('SignalStatus')),
      '401': response('Missing or invalid API token.', ref('Error')),
      '403': response('Token temporarily suspended.', ref('TokenSuspended')),
      '429': response(
        'A token-API cap fired: the pre-auth per-IP cap (scope ip) or the per-account read cap (scope account_read, with limit and windowMs).',
        ref('RateLimitError'),
        ['Retry-After'],
      ),
      '500': response('Internal error reading outcomes; safe to retry.', ref('Error')),
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The document
// ---------------------------------------------------------------------------------------------------------------

export type OpenApiDocument = ReturnType<typeof build>;

function build() {
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'External Signals API',
      version: API_VERSION,
      description: [
        "Executes the caller's own trade signals on the caller's own broker account(s) (MT5 or cTrader), with the account owner's risk rules applied to every order. " +
          'The service is not a broker and provides no trading signals or investment advice.',
        '',
        'Webhook secrets and API tokens are created, and secrets linked to trading accounts, in the External Signals dashboard.',
        '',
        'Versioning: read endpoints are versioned in the URL path (current: /v1). The webhook ingress path /webhook/custom is a stable, additive-only contract: ' +
          'fields and actions are added, never changed or removed in place. A breaking change ships under a new versioned path while the old path keeps working. ' +
          'A deprecated operation is announced at least 90 days before shutdown through Deprecation and Sunset response headers and in this document. Nothing is deprecated at present.',
      ].join('\n'),
    },
    servers: [{ url: '/', description: 'The base address the service is deployed at.' }],
    tags: [{ name: 'Signals', description: 'Submit trade signals and read their outcomes.' }],
    paths: {
      '/webhook/custom': { post: submitOperation(false) },
      '/webhook/custom/{accountId}': { post: submitOperation(true) },
      '/v1/signals/{signalId}': { get: statusOperation() },
    },
    components: {
      schemas: componentSchemas(),
      headers: HEADERS,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'API token created in the External Signals dashboard: `Authorization: Bearer <API_TOKEN>`. Results are limited to the accounts granted to the token.',
        },
      },
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

let cached: OpenApiDocument | undefined;

/** The OpenAPI 3.1 document, built once and frozen (every caller shares it). */
export function buildOpenApiDocument(): OpenApiDocument {
  cached ??= deepFreeze(build());
  return cached;
}
