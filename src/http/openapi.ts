import { z } from 'zod';
import { formatBytes, SPEC_LIMITS } from '../domain/limits';
import { ACTIONS, requiresIdempotencyKey } from '../domain/actions';
import { externalSignalShape } from '../domain/signal';
import { OWNER_SECURITY_SCHEMES, ownerPaths } from './openapi-owner';
import { ownerTradePaths } from './openapi-trades';
import { actionConditions, externalSignalDescription, type JsonSchema } from './openapi-signal';
import {
  errorSchema,
  rateLimitErrorSchema,
  serviceUnavailableSchema,
  signalAcceptedSchema,
  signalNoTargetsSchema,
  signalOutcomeSchema,
  signalStatusSchema,
  tokenSuspendedSchema,
  validationDetailSchema,
} from './openapi-schemas';

/**
 * The published interface description (spec §9: version 1.0.0), served at GET /openapi.json.
 * Every schema is generated from a zod schema: ExternalSignal from the very schema the ingress validates with, and
 * its per-action conditions from the same action table (ACTION_RULES, src/http/openapi-signal.ts). The response
 * schemas (src/http/openapi-schemas.ts) are checked at compile time against the types the use cases return, so the
 * document cannot silently drift from the code.
 */

// The response schemas are part of this module's interface: importers reach them through it.
export * from './openapi-schemas';

const OPENAPI_VERSION = '3.1.0';
export const API_VERSION = '1.0.0';

// The spec's numbers (§8). The running service reads them from config, which only tests shorten.
const IDEMPOTENCY_KEY_MAX_LENGTH = SPEC_LIMITS.idempotencyKeyMaxLength;
const BODY_LIMIT = formatBytes(SPEC_LIMITS.bodyLimitBytes);
const REPLAY_WINDOW = '45 seconds';

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
      'The body is read as JSON whatever the Content-Type (TradingView posts JSON as text/plain); a text/plain body that is not JSON is read as ' +
      'a one-line alert, `secret,action[,symbol][,key=value…]` with the ExternalSignal field names as keys, exactly equivalent to the JSON body ' +
      '(docs/integrations/tradingview.md, "One-line alerts"). ' +
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
      '412': response(
        'The connected EA/cBot version does not support the action; update the bridge and retry. When a newer bridge would run it, installBridgeVersion names the version to install.',
        ref('Error'),
      ),
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
    tags: [
      { name: 'Signals', description: 'Submit trade signals and read their outcomes.' },
      { name: 'Owners', description: 'The owners’ dashboard API: accounts, credentials, signal log, callbacks (docs/owners.md).' },
      { name: 'Bridges', description: 'The MT5 bridge package, as the account page hands it out (docs/mt5-bridge.md).' },
    ],
    paths: {
      '/webhook/custom': { post: submitOperation(false) },
      '/webhook/custom/{accountId}': { post: submitOperation(true) },
      '/v1/signals/{signalId}': { get: statusOperation() },
      ...ownerPaths(),
      ...ownerTradePaths(),
    },
    components: {
      schemas: componentSchemas(),
      headers: HEADERS,
      securitySchemes: {
        ...OWNER_SECURITY_SCHEMES,
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
