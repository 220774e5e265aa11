import type { Response } from 'express';
import type { Account, CreatedVia, SecretGrant } from '../domain/account';

/**
 * What an authenticating middleware proved about a request, handed to the handlers after it as a typed value: the
 * middleware that proves it is the only one that sets it, and a handler reading one that was never proved (a route
 * wired without its middleware) fails loudly instead of acting on `undefined`. Kept per response, gone with it.
 */
class Proven<T> {
  private readonly byResponse = new WeakMap<Response, T>();

  constructor(private readonly what: string) {}

  set(res: Response, value: T): void {
    this.byResponse.set(res, value);
  }

  get(res: Response): T {
    if (!this.byResponse.has(res)) throw new Error(`${this.what} was not proven for this request: a route is wired without its middleware`);
    return this.byResponse.get(res) as T;
  }
}

/** The webhook sender's secret and what it grants (src/signals/authenticate.ts). */
export const sender = new Proven<SecretGrant>('the webhook sender');

/** The account a bridge token speaks for (src/bridge/gateway.ts, `bridgeAccount`). */
export const bridgeCaller = new Proven<Account>('the bridge account');

/** The signed-in owner, how they signed in, and, for a session, its CSRF token and session token. */
export interface OwnerCaller {
  owner: string;
  via: CreatedVia;
  csrf?: string;
  sessionToken?: string;
}
export const ownerCaller = new Proven<OwnerCaller>('the signed-in owner');

/** What ends the bridge account's trades call that its door let in (src/trades/record.ts, `openTradesCall`). */
export const tradesCall = new Proven<() => Promise<void>>('the trades call');
