import type { BridgeCommand, BridgeHello, StopOutDirective } from '../domain/bridge-protocol';
import { HttpStatusError } from './client';
import type { Transport } from './http-transport';

/**
 * The multi-account session's calls over HTTP (protocol 1.7, docs/bridge-protocol.md "Multi-account sessions"): the
 * session hello (each account with its own bridge token), the long-poll over every account of a session, and the
 * batched reports and trades, each item tagged by its account. What to send and when is the fleet's
 * (src/bridge-kit/fleet.ts); this file only speaks the calls.
 */

/** One account's share of a session call's answer: `admitted`/`answered` with that account's own answer, or `refused`. */
export interface AccountAnswer {
  accountId: string;
  result: 'admitted' | 'answered' | 'refused';
  status?: number;
  error?: string;
  [field: string]: unknown;
}

export interface SessionHelloAnswer {
  session?: string;
  capabilities: string[];
  limits: { accountsPerSession: number; accountsPerCall: number };
  accounts: AccountAnswer[];
}

export interface SessionPollAnswer {
  accounts: { accountId: string; commands: BridgeCommand[] }[];
  superseded: string[];
  dropped: string[];
  stopOuts: Record<string, StopOutDirective>;
}

export type SessionHelloItem = BridgeHello & { accountId: string; bridgeToken: string };

/** The bounds of a service of protocol 1.7 that does not announce its own (the ones it was released with). */
const DEFAULT_LIMITS = { accountsPerSession: 10_000, accountsPerCall: 1_000 };

export class SessionClient {
  constructor(
    private readonly opts: {
      ingressUrl: string;
      transport: Transport;
      signal: AbortSignal;
      sleep: (ms: number) => Promise<void>;
      diag: (line: Record<string, unknown>) => void;
    },
  ) {}

  /** The session hello: each account's own answer, and the session that serves the admitted ones. */
  async hello(items: SessionHelloItem[], session: string | undefined): Promise<SessionHelloAnswer> {
    const res = await this.call('POST', '/bridge/v1/session/hello', undefined, { ...(session ? { session } : {}), accounts: items }, 30_000);
    if (res.status !== 200) throw new HttpStatusError(res.status, 'session hello', res.body);
    const body = res.body as Partial<SessionHelloAnswer> | undefined;
    if (!Array.isArray(body?.accounts)) throw new Error('session hello: the answer has no accounts array');
    const limits = { ...DEFAULT_LIMITS, ...(body.limits ?? {}) };
    return { ...(body.session ? { session: body.session } : {}), capabilities: body.capabilities ?? [], limits, accounts: body.accounts };
  }

  async commands(session: string, waitMs: number): Promise<SessionPollAnswer> {
    const res = await this.call('GET', `/bridge/v1/session/commands?waitMs=${waitMs}`, session, undefined, waitMs + 15_000);
    if (res.status !== 200) throw new HttpStatusError(res.status, 'session commands', res.body);
    const body = res.body as Partial<SessionPollAnswer> | undefined;
    if (!Array.isArray(body?.accounts)) throw new Error('session commands: the answer has no accounts array');
    return { accounts: body.accounts, superseded: body.superseded ?? [], dropped: body.dropped ?? [], stopOuts: body.stopOuts ?? {} };
  }

  /** Each account's body of a reports (`reports`) or trades (`trades`) call; each account's answer, in order. */
  async perAccount(what: 'reports' | 'trades', session: string, items: { accountId: string; body: unknown }[]): Promise<AccountAnswer[]> {
    const res = await this.call('POST', `/bridge/v1/session/${what}`, session, { accounts: items }, 30_000);
    if (res.status !== 200) throw new HttpStatusError(res.status, `session ${what}`, res.body);
    const accounts = (res.body as { accounts?: AccountAnswer[] } | undefined)?.accounts;
    if (!Array.isArray(accounts) || accounts.length !== items.length) throw new Error(`session ${what}: the answer does not answer each account`);
    return accounts;
  }

  private async call(
    method: 'GET' | 'POST',
    path: string,
    session: string | undefined,
    body: unknown,
    timeoutMs: number,
  ): Promise<{ status: number; body: unknown }> {
    const res = await this.opts.transport({
      method,
      url: `${this.opts.ingressUrl.replace(/\/+$/, '')}${path}`,
      headers: {
        ...(session ? { authorization: `Bearer ${session}` } : {}),
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.any([this.opts.signal, AbortSignal.timeout(timeoutMs)]),
    });
    if (res.status === 429) {
      // The session's (or the address's hello) budget is spent: wait as long as the ingress says before the retry.
      const seconds = Number(res.retryAfter);
      const waitMs = Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 300) * 1000 : 1000;
      this.opts.diag({ time: new Date().toISOString(), event: 'rate_limited', path: path.split('?')[0], retryInMs: waitMs });
      await this.opts.sleep(waitMs);
    }
    let parsed: unknown;
    try {
      parsed = res.text ? JSON.parse(res.text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed };
  }
}
