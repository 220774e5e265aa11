import { z } from 'zod';

/** Spotware's granting-access page and token endpoint: the only ones there are (tests point a Config at a stand-in). */
export const CTRADER_AUTHORIZE_URL = 'https://id.ctrader.com/my/settings/openapi/grantingaccess/';
export const CTRADER_TOKEN_URL = 'https://openapi.ctrader.com/apps/token';
/** The token exchange, and separately the account list, must each answer within this: Spotware answers in a second. */
export const CTRADER_OAUTH_TIMEOUT_MS = 10_000;
/** The dashboard's page Spotware sends the owner back to; PUBLIC_URL plus this is the application's redirect URI. */
export const CTRADER_CALLBACK_PATH = '/dashboard/ctrader/callback';

/**
 * Spotware's OAuth 2.0 endpoints for Open API (help.ctrader.com/open-api/account-authentication): the page where the
 * trader grants our application access (`…/my/settings/openapi/grantingaccess/`), and the token endpoint
 * (`…/apps/token`) that turns the one-minute authorisation code, or a refresh token, into tokens. The token
 * endpoint takes everything as query parameters of a GET and answers JSON with `accessToken`, `refreshToken`,
 * `expiresIn` (seconds), `tokenType`, and `errorCode` / `description` when it refuses. (The connector renews tokens
 * over Open API, ProtoOARefreshTokenReq, rather than with this endpoint's grant_type=refresh_token.)
 */

export interface OAuthApplication {
  clientId: string;
  clientSecret: string;
  redirectUrl: string;
  /** The granting-access page (https://id.ctrader.com/my/settings/openapi/grantingaccess/). */
  authorizeUrl: string;
  /** The token endpoint (https://openapi.ctrader.com/apps/token). */
  tokenUrl: string;
  /** How long the token endpoint may take before the exchange counts as failed. */
  timeoutMs: number;
}

export interface GrantedTokens {
  accessToken: string;
  refreshToken: string;
  /** Epoch ms; absent when the endpoint gave no expiresIn. */
  accessTokenExpiresAt?: number;
}

/** Why the token endpoint gave no tokens: `refused` (its errorCode, or a 4xx), `unavailable` (timeout, 5xx, not JSON). */
export class TokenEndpointError extends Error {
  constructor(
    readonly kind: 'refused' | 'unavailable',
    /** Spotware's errorCode, or an HTTP status; never a token or the secret. */
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The granting-access URL the owner's browser is sent to. `state` comes back with the code (RFC 6749 §4.1.2). */
export function authorizationUrl(app: OAuthApplication, state: string): string {
  const url = new URL(app.authorizeUrl);
  url.searchParams.set('client_id', app.clientId);
  url.searchParams.set('redirect_uri', app.redirectUrl);
  url.searchParams.set('scope', 'trading');
  url.searchParams.set('product', 'web');
  url.searchParams.set('state', state);
  return url.toString();
}

const answerSchema = z.object({
  accessToken: z.string().min(1).max(4096).nullish(),
  refreshToken: z.string().min(1).max(4096).nullish(),
  expiresIn: z.number().int().positive().nullish(),
  tokenType: z.string().max(64).nullish(),
  errorCode: z.string().max(128).nullish(),
  description: z.string().max(1024).nullish(),
});

/** grant_type=authorization_code: the code the owner's browser brought back, exchanged server-side. */
export function exchangeCode(app: OAuthApplication, code: string, fetchImpl: typeof fetch = fetch, now = Date.now): Promise<GrantedTokens> {
  return callTokenEndpoint(app, { grant_type: 'authorization_code', code, redirect_uri: app.redirectUrl }, fetchImpl, now);
}

async function callTokenEndpoint(app: OAuthApplication, params: Record<string, string>, fetchImpl: typeof fetch, now: () => number): Promise<GrantedTokens> {
  const url = new URL(app.tokenUrl);
  for (const [k, v] of Object.entries({ ...params, client_id: app.clientId, client_secret: app.clientSecret })) url.searchParams.set(k, v);
  const deadline = AbortSignal.timeout(app.timeoutMs);
  let res: Response;
  let text: string;
  try {
    res = await fetchImpl(url, { method: 'GET', headers: { accept: 'application/json' }, redirect: 'error', signal: deadline });
    text = await res.text();
  } catch {
    // The URL carries the code and the client secret: never let it (or an error quoting it) out of here.
    if (deadline.aborted) throw new TokenEndpointError('unavailable', 'timeout', `cTrader's token endpoint did not answer within ${app.timeoutMs} ms`);
    throw new TokenEndpointError('unavailable', 'network', "cTrader's token endpoint could not be reached");
  }
  if (res.status >= 500) throw new TokenEndpointError('unavailable', `http_${res.status}`, `cTrader's token endpoint answered ${res.status}`);
  let parsed: z.infer<typeof answerSchema> | undefined;
  try {
    const result = answerSchema.safeParse(JSON.parse(text));
    parsed = result.success ? result.data : undefined;
  } catch {
    parsed = undefined;
  }
  if (parsed?.errorCode || res.status >= 400) {
    const code = parsed?.errorCode ?? `http_${res.status}`;
    throw new TokenEndpointError('refused', code, `cTrader refused the authorisation code (${code}${parsed?.description ? `: ${parsed.description}` : ''})`);
  }
  if (!parsed?.accessToken || !parsed.refreshToken)
    throw new TokenEndpointError('unavailable', 'malformed', "cTrader's token endpoint answered without tokens");
  return {
    accessToken: parsed.accessToken,
    refreshToken: parsed.refreshToken,
    ...(parsed.expiresIn ? { accessTokenExpiresAt: now() + parsed.expiresIn * 1000 } : {}),
  };
}
