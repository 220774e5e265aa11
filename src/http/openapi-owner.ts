import { z } from 'zod';
import { riskSettingsSchema, symbolMapSchema } from '../domain/risk-settings';
import { CALLBACK_EVENT_TYPES } from '../domain/callback';
import type { JsonSchema } from './openapi-signal';
import { addAccountSchema } from '../owners/add-account';

/**
 * The owner API in the OpenAPI document (docs/owners.md): the dashboard's pages use nothing else. Request bodies come
 * from the zod schemas the routes validate with; errors have the shapes of the rest of the API.
 */

const json = (schema: z.ZodType) => z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as JsonSchema;
const errorRef = { $ref: '#/components/schemas/Error' };
const anyObject: JsonSchema = { type: 'object', additionalProperties: true };

function answer(description: string, schema: JsonSchema = anyObject) {
  return { description, content: { 'application/json': { schema } } };
}

const ERRORS = {
  '400': answer('The request is invalid: `error` says why, `details` lists each field (path, message).', errorRef),
  '401': answer('No session, or an unknown or revoked owner API key.', errorRef),
  '403': answer('A browser session without its X-CSRF-Token on a change.', errorRef),
  '404': answer('Nothing of yours has this id (another owner’s is not found either).', errorRef),
  '409': answer(
    'It clashes with what exists or does not apply: at your account cap (`limit`, set by your operator; nothing was made), the cTrader account is linked to another owner’s, or the MT5 bridge package asked for a cTrader account.',
    errorRef,
  ),
  '502': answer('cTrader (its token endpoint or Open API) failed or did not answer in time; nothing was linked.', errorRef),
  '503': answer('The store cannot answer, or the dashboard is not configured (OWNER_SECRETS_KEY_FILE).', errorRef),
};

const SECURED = [{ ownerSession: [] }, { ownerApiKey: [] }];

interface Op {
  summary: string;
  ok: [status: string, description: string];
  /** The answer's media type when it is not JSON (the MT5 bridge package: application/zip). */
  okType?: string;
  body?: JsonSchema;
  params?: string[];
  query?: Record<string, JsonSchema>;
  public?: boolean;
  errors?: (keyof typeof ERRORS | '429')[];
}

export function operation(op: Op) {
  const errors = op.errors ?? ['400', '401', '403', '404', '503'];
  return {
    tags: ['Owners'],
    summary: op.summary,
    ...(op.public ? { security: [] } : { security: SECURED }),
    parameters: [
      ...(op.params ?? []).map((name) => ({ name, in: 'path', required: true, schema: { type: 'string', maxLength: 128 } })),
      ...Object.entries(op.query ?? {}).map(([name, schema]) => ({ name, in: 'query', required: false, schema })),
    ],
    ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: op.body } } } } : {}),
    responses: {
      [op.ok[0]]:
        op.ok[0] === '204'
          ? { description: op.ok[1] }
          : op.okType
            ? { description: op.ok[1], content: { [op.okType]: { schema: { type: 'string', contentMediaType: op.okType } } } }
            : answer(op.ok[1]),
      ...Object.fromEntries(
        errors.map((s) => [
          s,
          s === '429' ? answer('Too many failed attempts from this address (never the owner as such); see Retry-After.', errorRef) : ERRORS[s],
        ]),
      ),
    },
  };
}

const links = json(z.strictObject({ accounts: z.array(z.string()).min(1).max(1000) }));
export const str: JsonSchema = { type: 'string' };

export function ownerPaths() {
  const credential = (kind: string, path: string) => ({
    [`/v1/owner/${path}`]: {
      get: operation({ summary: `List your ${kind}s (ids and linked accounts, never the values)`, ok: ['200', `Your ${kind}s.`] }),
      post: operation({
        summary: `Create a ${kind} linked to accounts of yours; its value is in this answer only`,
        ok: ['201', `The new ${kind}, with its value.`],
        body: links,
      }),
    },
    [`/v1/owner/${path}/{id}/accounts`]: {
      put: operation({ summary: `Replace the accounts a ${kind} links`, ok: ['200', `The ${kind}.`], body: links, params: ['id'] }),
    },
    [`/v1/owner/${path}/{id}`]: { delete: operation({ summary: `Revoke a ${kind}`, ok: ['204', 'Revoked.'], params: ['id'] }) },
  });
  return {
    '/v1/owner/setup/begin': {
      post: operation({
        summary: 'Open the operator’s setup link: the TOTP seed (and its QR code) to enrol',
        ok: ['200', 'owner, totpSeed, totpUri, totpQr (a data: URI).'],
        body: json(z.strictObject({ token: z.string().max(256) })),
        public: true,
        errors: ['400', '404', '429', '503'],
      }),
    },
    '/v1/owner/setup/complete': {
      post: operation({
        summary: 'Set the password and prove the authenticator app; signs in (Set-Cookie)',
        ok: ['201', 'owner and csrfToken.'],
        body: json(
          z.strictObject({
            token: z.string().max(256),
            password: z
              .string()
              .min(12)
              .max(256)
              .describe(
                'Refused (400 `password: <the rule>`) when only spaces, containing the owner id, of fewer than 5 different characters, one part repeated, mostly a sequence, or a common password (docs/owners.md).',
              ),
            code: z.string().regex(/^\d{6}$/),
          }),
        ),
        public: true,
        errors: ['400', '404', '429', '503'],
      }),
    },
    '/v1/owner/session': {
      post: operation({
        summary: 'Sign in with password and a TOTP code (each code works once)',
        ok: ['201', 'owner and csrfToken; the session cookie is set.'],
        body: json(z.strictObject({ owner: z.string().max(128), password: z.string().max(256), code: z.string().max(16) })),
        public: true,
        errors: ['400', '401', '429', '503'],
      }),
      get: operation({
        summary: 'Who is signed in, and the session’s CSRF token',
        ok: ['200', 'owner and csrfToken (null for an API key).'],
        errors: ['401', '503'],
      }),
      delete: operation({ summary: 'Sign out everywhere: every session of the owner ends', ok: ['200', 'sessionsEnded.'], errors: ['401', '403', '503'] }),
    },
    '/v1/owner/accounts': {
      get: operation({
        summary: 'Your trading accounts: bridge online, last seen, version, figures, the latest stop-out, risk rules',
        ok: ['200', 'accounts.'],
      }),
      post: operation({
        summary:
          'Add a trading account: its id is made for it, it is locked until a bridge with its token says hello, and the bridge ' +
          'token is in this answer only (docs/owners.md)',
        ok: ['201', '`account` (as GET shows it: status locked, lockedUntilBridge true) and `bridgeToken` (shown once).'],
        body: json(addAccountSchema),
        errors: ['400', '401', '403', '409', '503'],
      }),
    },
    '/v1/owner/accounts/{accountId}': {
      get: operation({ summary: 'One of your accounts', ok: ['200', 'The account.'], params: ['accountId'] }),
      patch: operation({
        summary: 'Replace its risk rules or symbol map (effective for the next signal; audited)',
        ok: ['200', 'The account.'],
        params: ['accountId'],
        body: json(z.strictObject({ risk: riskSettingsSchema.optional(), symbols: symbolMapSchema.optional() })),
      }),
    },
    '/v1/owner/accounts/{accountId}/bridge-token': {
      post: operation({ summary: 'A new bridge token (shown once); the old one stops at once', ok: ['201', 'accountId and value.'], params: ['accountId'] }),
    },
    ...mt5PackagePaths(),
    ...credential('webhook secret', 'secrets'),
    ...credential('API token', 'tokens'),
    '/v1/owner/api-keys': {
      get: operation({ summary: 'Your owner API keys (for scripts and n8n)', ok: ['200', 'apiKeys.'] }),
      post: operation({
        summary: 'Create an owner API key (shown once)',
        ok: ['201', 'id, name, createdAt, value.'],
        body: json(z.strictObject({ name: z.string().min(1).max(64) })),
      }),
    },
    '/v1/owner/api-keys/{id}': { delete: operation({ summary: 'Revoke an owner API key', ok: ['204', 'Revoked.'], params: ['id'] }) },
    '/v1/owner/audit': {
      get: operation({ summary: 'Your audit log, newest first', ok: ['200', 'entries.'], query: { limit: { type: 'integer', minimum: 1, maximum: 1000 } } }),
    },
    '/v1/owner/signals': {
      get: operation({
        summary: 'Your signals, newest first, filtered and paged (read from Temporal visibility)',
        ok: ['200', 'signals and nextPageToken.'],
        query: {
          accountId: str,
          action: str,
          symbol: str,
          outcome: { enum: ['filled', 'done', 'rejected', 'pending'] },
          from: str,
          to: str,
          pageSize: { type: 'integer', minimum: 1, maximum: 100 },
          pageToken: str,
        },
      }),
    },
    '/v1/owner/signals/{signalId}': {
      get: operation({
        summary:
          'One signal: what was sent (sent: its order fields, never the secret) and each of your accounts’ timeline (accepted, delivered, ' +
          'outcome with a rejection’s reason and reasonText, what the bridge did: lots, price, its message)',
        ok: ['200', 'The signal.'],
        params: ['signalId'],
      }),
    },
    '/v1/owner/callbacks': {
      get: operation({ summary: 'Your callback endpoints (with the event types each gets; none listed: the signals’ outcomes)', ok: ['200', 'callbacks.'] }),
      post: operation({
        summary: 'Add a callback endpoint; its signing secret is in this answer only',
        ok: ['201', 'The endpoint and its secret.'],
        body: json(
          z.strictObject({
            url: z.string().max(2048),
            eventTypes: z
              .array(z.enum(CALLBACK_EVENT_TYPES))
              .min(1)
              .optional()
              .describe(
                'The event types this endpoint gets (docs/callbacks.md); omitted: signal.outcome and signal.exit_outcome (trade events only when listed).',
              ),
          }),
        ),
      }),
    },
    '/v1/owner/callbacks/attempts': {
      get: operation({
        summary: 'Recent delivery attempts, newest first',
        ok: ['200', 'attempts.'],
        query: { limit: { type: 'integer', minimum: 1, maximum: 500 } },
      }),
    },
    '/v1/owner/callbacks/{id}': { delete: operation({ summary: 'Remove a callback endpoint', ok: ['204', 'Removed.'], params: ['id'] }) },
    '/v1/owner/ctrader': {
      get: operation({ summary: 'Whether Connect with cTrader is set up on this service', ok: ['200', 'connectEnabled.'] }),
    },
    '/v1/owner/ctrader/authorizations': {
      post: operation({
        summary: 'Start Connect with cTrader: the URL of cTrader’s granting-access page, with a state bound to this session (10 minutes, one use)',
        ok: ['201', 'authorizeUrl and expiresAt.'],
        errors: ['401', '403', '503'],
      }),
    },
    '/v1/owner/ctrader/callback': {
      post: operation({
        summary: 'The code and state cTrader sent back: exchanged server-side, the token’s trading accounts listed (nothing linked yet)',
        ok: ['200', 'connection (for the pick), accounts (ctidTraderAccountId, environment, traderLogin, broker, linkedTo) and expiresAt.'],
        body: json(z.strictObject({ code: z.string().min(1).max(2048), state: z.string().min(20).max(128) })),
        errors: ['400', '401', '403', '502', '503'],
      }),
    },
    '/v1/owner/ctrader/links': {
      post: operation({
        summary: 'Link the picked cTrader accounts (new accounts under your account cap, all or none; yours already get the new tokens)',
        ok: ['201', 'linked: accountId, ctidTraderAccountId, environment, created.'],
        body: json(z.strictObject({ connection: z.string().min(20).max(128), accounts: z.array(z.number().int().positive()).min(1).max(100) })),
        errors: ['400', '401', '403', '409', '503'],
      }),
    },
  };
}

/** The MT5 bridge package (docs/mt5-bridge.md): public downloads, and the owner's personal copy. */
function mt5PackagePaths() {
  const download = (summary: string) => ({
    ...operation({ summary, ok: ['200', 'The zip.'], okType: 'application/zip', public: true, errors: ['404', '503'] }),
    tags: ['Bridges'],
  });
  return {
    '/v1/owner/accounts/{accountId}/mt5-package': {
      post: operation({
        summary:
          'The MT5 bridge package for this MT5 account, ready to run: its es-mt5-bridge.ini holds the service URL and a NEW bridge token. ' +
          'Each download replaces the account’s bridge token (the previous one, and a bridge running with it, stop at once); the token is in this zip only. Audited.',
        ok: ['200', 'The zip (Content-Disposition names it mt5-bridge-<version>-<accountId>.zip).'],
        okType: 'application/zip',
        params: ['accountId'],
        errors: ['401', '403', '404', '409', '503'],
      }),
    },
    '/v1/owner/mt5-package': {
      get: operation({
        summary:
          'What the MT5 package’s config will hold: serviceUrl (PUBLIC_URL, or null when it cannot go into the config) and warning ' +
          '(a text when serviceUrl is a loopback address, which a bridge on another PC cannot reach; else null)',
        ok: ['200', 'serviceUrl and warning.'],
        errors: ['401'],
      }),
    },
    '/downloads/mt5-bridge/latest.zip': { get: download('The current MT5 bridge package, its config a template to fill in') },
    '/downloads/mt5-bridge/{file}': {
      get: {
        ...download('The current MT5 bridge package under its versioned name, mt5-bridge-<version>.zip (only the current version is served)'),
        parameters: [{ name: 'file', in: 'path', required: true, schema: { type: 'string', maxLength: 128 } }],
      },
    },
    '/downloads/mt5-bridge/latest.json': {
      get: {
        ...operation({
          summary: 'The current MT5 bridge version: version, file, url, sha256',
          ok: ['200', 'The current package.'],
          public: true,
          errors: ['503'],
        }),
        tags: ['Bridges'],
      },
    },
  };
}

export const OWNER_SECURITY_SCHEMES = {
  ownerSession: { type: 'apiKey', in: 'cookie', name: '__Host-es_session', description: 'The dashboard’s session cookie; changes also need X-CSRF-Token.' },
  ownerApiKey: { type: 'http', scheme: 'bearer', description: 'An owner API key: `Authorization: Bearer oak_…`.' },
};
