import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { CtraderDouble } from './ctrader-double';

/**
 * A stand-in for Spotware's cTrader ID granting-access page and Open API token endpoint, following what Spotware
 * documents (help.ctrader.com/open-api/account-authentication):
 * - GET /my/settings/openapi/grantingaccess/?client_id&redirect_uri&scope=trading&product=web[&state]: the trader's
 *   page: the accounts of their cTID with a checkbox each, and "Allow access". Allowing redirects the browser to
 *   redirect_uri with `code` (valid one minute, one use) and the `state` it was given.
 * - GET /apps/token?grant_type=authorization_code&code&redirect_uri&client_id&client_secret, and
 *   grant_type=refresh_token&refresh_token&client_id&client_secret: JSON {accessToken, tokenType, expiresIn,
 *   refreshToken, errorCode, description}. A refused request is HTTP 400 with errorCode and description (Spotware does
 *   not document its refusals' status; 400 is what OAuth 2.0, RFC 6749 §5.2, gives).
 * Tokens it issues are granted on the Open API double, which then lists and authorises those accounts with them.
 */
export interface StandinOptions {
  clientId: string;
  clientSecret: string;
  redirectUrl: string;
  double: CtraderDouble;
  /** The cTID's accounts the page offers (ctids known to the double). */
  ctids: number[];
}

interface Code {
  ctids: number[];
  redirectUri: string;
  expiresAt: number;
}

export class CtraderOAuthStandin {
  /** Every request to the token endpoint, with its parameters (tests check what was sent, then drop the secret). */
  readonly tokenRequests: Record<string, string>[] = [];
  /** While set, the token endpoint takes requests and never answers them (a timeout upstream). */
  hangTokenEndpoint = false;
  /** How long a code lives: Spotware's is one minute. */
  codeTtlMs = 60_000;
  private readonly codes = new Map<string, Code>();
  private readonly hanging = new Set<http.ServerResponse>();
  private server!: http.Server;

  private constructor(private readonly opts: StandinOptions) {}

  static async start(opts: StandinOptions): Promise<CtraderOAuthStandin> {
    const s = new CtraderOAuthStandin(opts);
    s.server = http.createServer((req, res) => void s.handle(req, res));
    await new Promise<void>((resolve) => s.server.listen(0, '127.0.0.1', resolve));
    return s;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  get redirectUrl(): string {
    return this.opts.redirectUrl;
  }
  get authorizeUrl(): string {
    return `${this.url}/my/settings/openapi/grantingaccess/`;
  }
  get tokenUrl(): string {
    return `${this.url}/apps/token`;
  }

  async close(): Promise<void> {
    for (const r of this.hanging) r.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** What "Allow access" does, without a browser: the code for these accounts (empty: the trader ticked none). */
  issueCode(ctids: number[], redirectUri = this.opts.redirectUrl): string {
    const code = randomBytes(16).toString('hex');
    this.codes.set(code, { ctids, redirectUri, expiresAt: Date.now() + this.codeTtlMs });
    return code;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    if (url.pathname === '/my/settings/openapi/grantingaccess/' && req.method === 'GET') return this.page(url, res);
    if (url.pathname === '/my/settings/openapi/grantingaccess/allow' && req.method === 'POST') return this.allow(await formOf(req), res);
    if (url.pathname === '/apps/token' && req.method === 'GET') return this.token(url, res);
    res.writeHead(404).end();
  }

  private page(url: URL, res: http.ServerResponse): void {
    const q = url.searchParams;
    if (q.get('client_id') !== this.opts.clientId || q.get('redirect_uri') !== this.opts.redirectUrl || q.get('scope') !== 'trading') {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('unknown application or redirect URI');
      return;
    }
    const boxes = this.opts.ctids
      .map((ctid) => {
        const a = this.opts.double.account(ctid);
        return `<li><label><input type="checkbox" name="ctid" value="${ctid}" checked> ${escape(String(ctid))} ${a ? '' : '(unknown)'}</label></li>`;
      })
      .join('');
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>cTrader ID · Grant access</title></head><body><main>
<h1>Allow External Signals to trade</h1><form method="post" action="/my/settings/openapi/grantingaccess/allow">
<input type="hidden" name="redirect_uri" value="${escape(q.get('redirect_uri')!)}"><input type="hidden" name="state" value="${escape(q.get('state') ?? '')}">
<fieldset><legend>Accounts</legend><ul>${boxes}</ul></fieldset><button type="submit">Allow access</button></form></main></body></html>`;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  }

  private allow(form: URLSearchParams, res: http.ServerResponse): void {
    const redirectUri = form.get('redirect_uri') ?? '';
    const code = this.issueCode(form.getAll('ctid').map(Number), redirectUri);
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    if (form.get('state')) back.searchParams.set('state', form.get('state')!);
    res.writeHead(302, { location: back.toString() }).end();
  }

  private token(url: URL, res: http.ServerResponse): void {
    const q = Object.fromEntries(url.searchParams);
    this.tokenRequests.push(q);
    if (this.hangTokenEndpoint) {
      this.hanging.add(res);
      return;
    }
    const refuse = (errorCode: string, description: string): void => {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ accessToken: null, refreshToken: null, errorCode, description }));
    };
    if (q.client_id !== this.opts.clientId || q.client_secret !== this.opts.clientSecret) return refuse('ACCESS_DENIED', 'Wrong client credentials');
    let ctids: number[];
    if (q.grant_type === 'authorization_code') {
      const code = this.codes.get(q.code ?? '');
      this.codes.delete(q.code ?? '');
      if (!code || code.expiresAt < Date.now() || code.redirectUri !== q.redirect_uri)
        return refuse('ACCESS_DENIED', 'The authorization code is invalid or expired');
      ctids = code.ctids;
    } else {
      return refuse('UNSUPPORTED_GRANT_TYPE', 'Unsupported grant_type');
    }
    const tokens = { accessToken: `at_${randomBytes(16).toString('hex')}`, refreshToken: `rt_${randomBytes(16).toString('hex')}` };
    if (ctids.length === 0) this.opts.double.emptyGrants.add(tokens.accessToken);
    this.opts.double.grant(ctids, tokens);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ ...tokens, tokenType: 'bearer', expiresIn: 2_628_000, errorCode: null, description: null }));
  }
}

async function formOf(req: http.IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function escape(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
